package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// ErrInsufficientCredits: the balance cannot pay for the run.
var ErrInsufficientCredits = &fault.Error{Kind: fault.PaymentRequired, Msg: "insufficient credits", Detail: "the balance cannot cover this run"}

// ErrUnknownEffort: a run at an effort that has no price.
var ErrUnknownEffort = errors.New("unknown effort")

// Service books runs and grants on the ledger and answers quota and usage questions.
type Service struct {
	st  *store.Store
	cfg Config
	now func() time.Time
}

// Option adjusts a Service.
type Option func(*Service)

// WithClock makes the service book and measure at now() instead of the wall clock (tests pin it; the
// server passes its own clock so every time it reports comes from one source).
func WithClock(now func() time.Time) Option {
	return func(s *Service) {
		if now != nil {
			s.now = now
		}
	}
}

// New returns a service over st with the prices and tier limits of cfg.
func New(st *store.Store, cfg Config, opts ...Option) *Service {
	s := &Service{st: st, cfg: cfg, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Config returns the prices and tier limits in force.
func (s *Service) Config() Config { return s.cfg }

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Run identifies one run of a job for metering. Effort is what runs (already clamped).
type Run struct {
	AccountID, JobID, RunID, Effort string
	// Reason completes a refund's description, "Refund: research job (effort) <reason>" ("" means
	// failed).
	Reason string
}

// CanAfford reports whether the account's available balance (ledger balance minus open holds) pays
// for one run at effort now. It reserves nothing: HoldRun does, in the transaction that accepts the
// run.
func (s *Service) CanAfford(ctx context.Context, accountID, effort string) (bool, error) {
	if !KnownEffort(effort) {
		return false, fmt.Errorf("can afford %q: %w", effort, ErrUnknownEffort)
	}
	avail, err := s.st.AvailableBalance(ctx, accountID)
	if err != nil {
		return false, err
	}
	return avail >= s.cfg.Cents(effort), nil
}

// HoldRun reserves the price of a run at r.Effort from the account's available balance when the run
// is accepted (create, continue), in the caller's transaction tx (nil: its own), so that accepting
// and reserving commit together. ErrInsufficientCredits, with nothing held, when the available
// balance cannot cover it. A zero-credit effort holds nothing. ChargeRun consumes the hold at
// dispatch; ReleaseRun gives it back when the run is abandoned before.
func (s *Service) HoldRun(ctx context.Context, tx *store.Store, r Run) error {
	return s.hold(ctx, tx, "hold run", Units{AccountID: r.AccountID, RunID: r.RunID, JobID: r.JobID, Effort: r.Effort, Count: 1})
}

// hold reserves the price of u.Count workers at u.Effort under u.RunID, for HoldRun and HoldUnits;
// what names the operation in errors.
func (s *Service) hold(ctx context.Context, tx *store.Store, what string, u Units) error {
	if !KnownEffort(u.Effort) {
		return fmt.Errorf("%s %s at %q: %w", what, u.RunID, u.Effort, ErrUnknownEffort)
	}
	amount := s.cfg.Cents(u.Effort) * u.Count
	if amount == 0 {
		return nil
	}
	if tx == nil {
		tx = s.st
	}
	err := tx.PlaceHold(ctx, &store.CreditHold{RunID: u.RunID, AccountID: u.AccountID, JobID: u.JobID, AmountCents: amount, CreatedAt: s.clock()})
	if errors.Is(err, store.ErrInsufficientFunds) {
		return fmt.Errorf("%s %s: %w", what, u.RunID, ErrInsufficientCredits)
	}
	return err
}

// ReleaseRun gives back the hold of a run that will not be dispatched (cancelled, or failed before a
// worker took it). A no-op when the run holds nothing (never held, already charged or released).
func (s *Service) ReleaseRun(ctx context.Context, tx *store.Store, runID string) error {
	if tx == nil {
		tx = s.st
	}
	_, _, err := tx.TakeHold(ctx, runID)
	return err
}

// ChargeRun meters a run when it is dispatched: a consumption entry (job, effort, run id) of the
// effort's price. Exactly once per RunID: a repeated or concurrent call for a run already charged
// books nothing and returns nil. A zero-credit effort books no ledger entry but is still metered (it
// counts in usage). ErrInsufficientCredits, with nothing recorded, when the balance cannot cover it.
// tx may be a Store bound to the caller's transaction (nil: the service's own); the charge then
// commits or rolls back with the caller's work.
func (s *Service) ChargeRun(ctx context.Context, tx *store.Store, r Run) error {
	if r.RunID == "" || r.AccountID == "" || r.JobID == "" {
		return fmt.Errorf("charge run: account, job and run ids are required (got %+v)", r)
	}
	if !KnownEffort(r.Effort) {
		return fmt.Errorf("charge run %s at %q: %w", r.RunID, r.Effort, ErrUnknownEffort)
	}
	if tx == nil {
		tx = s.st
	}
	now := s.clock()
	// A savepoint inside the caller's transaction: a refused charge leaves no metered run behind even
	// when the caller commits the rest (for example the job marked failed for want of credits).
	return tx.InTx(ctx, func(tx *store.Store) error {
		run := s.billingRun(Units{AccountID: r.AccountID, RunID: r.RunID, JobID: r.JobID, Effort: r.Effort}, 1, now)
		e := store.LedgerEntry{JobID: &r.JobID, Description: ptr(fmt.Sprintf("Research job (%s)", r.Effort))}
		// The charge consumes the run's hold. A run accepted without one (before holds existed) may
		// only spend what other runs' holds leave available.
		err := s.meter(ctx, tx, "charge run", run, e, func() error {
			_, held, err := tx.TakeHold(ctx, r.RunID)
			if err != nil || held {
				return err
			}
			if err := tx.LockAccount(ctx, r.AccountID); err != nil {
				return err
			}
			avail, err := tx.AvailableBalance(ctx, r.AccountID)
			if err != nil {
				return err
			}
			if avail < run.AmountCents {
				return fmt.Errorf("charge run %s: %w", r.RunID, ErrInsufficientCredits)
			}
			return nil
		})
		if errors.Is(err, store.ErrInsufficientFunds) {
			return fmt.Errorf("charge run %s: %w", r.RunID, ErrInsufficientCredits)
		}
		return err
	})
}

// billingRun is the metered run of n workers of u at u.Effort's price, charged at.
func (s *Service) billingRun(u Units, n int64, at time.Time) store.BillingRun {
	return store.BillingRun{
		RunID: u.RunID, AccountID: u.AccountID, JobID: u.JobID, Effort: u.Effort,
		Credits: s.cfg.Credits(u.Effort) * n, AmountCents: s.cfg.Cents(u.Effort) * n, ChargedAt: at,
	}
}

// meter books run in tx for ChargeRun and SettleUnits: exactly once per run id, and for a run that
// costs something a consumption entry of its amount. e brings what differs between them (the
// description, the job); consume runs on the first booking only, before the entry is appended. A
// balance that cannot pay the entry wraps store.ErrInsufficientFunds; what names the operation.
func (s *Service) meter(ctx context.Context, tx *store.Store, what string, run store.BillingRun, e store.LedgerEntry, consume func() error) error {
	// The primary key on the run id decides races between dispatchers: the loser waits for the
	// winner to commit and then inserts nothing.
	first, err := tx.InsertBillingRun(ctx, &run)
	if err != nil || !first || run.AmountCents == 0 {
		return err
	}
	if consume != nil {
		if err := consume(); err != nil {
			return err
		}
	}
	e.AccountID, e.Type, e.AmountCents = run.AccountID, store.TxConsumption, -run.AmountCents
	e.DepthType, e.RunID, e.CreatedAt = &run.Effort, &run.RunID, run.ChargedAt
	if err := tx.AppendLedger(ctx, &e); err != nil {
		return fmt.Errorf("%s %s: %w", what, run.RunID, err)
	}
	// Bonus credits were drawn first; the rest came from paid funds.
	return tx.SetBillingRunCharge(ctx, run.RunID, e.ID, run.AmountCents+e.BonusCents)
}

// RefundRun gives a failed run its charge back: a refund entry equal to the consumption, returned to
// the funds it came from. Exactly once per RunID; a no-op for a run that was never charged. r.RunID
// decides; the rest of r is taken from the recorded charge.
func (s *Service) RefundRun(ctx context.Context, tx *store.Store, r Run) error {
	if r.RunID == "" {
		return errors.New("refund run: run id is required")
	}
	if tx == nil {
		tx = s.st
	}
	now := s.clock()
	reason := r.Reason
	if reason == "" {
		reason = "failed"
	}
	return tx.InTx(ctx, func(tx *store.Store) error {
		// The conditional update decides races: only one caller flips refunded_at.
		run, first, err := tx.MarkBillingRunRefunded(ctx, r.RunID, now)
		if err != nil || !first || run.AmountCents == 0 {
			return err
		}
		e := store.LedgerEntry{
			AccountID: run.AccountID, Type: store.TxRefund, AmountCents: run.AmountCents,
			BonusCents: run.AmountCents - run.PaidCents,
			DepthType:  &run.Effort, JobID: &run.JobID, RunID: &run.RunID, CreatedAt: now,
			Description: ptr(fmt.Sprintf("Refund: research job (%s) %s", run.Effort, reason)),
		}
		if err := tx.AppendLedger(ctx, &e); err != nil {
			return fmt.Errorf("refund run %s: %w", r.RunID, err)
		}
		return tx.SetBillingRunRefund(ctx, run.RunID, e.ID)
	})
}

// JobCredits is the credits a job was charged: all its runs, minus refunds.
func (s *Service) JobCredits(ctx context.Context, jobID string) (int64, error) {
	return s.st.JobCredits(ctx, jobID)
}

// Grant deposits credits into an account (the operator's `credits grant`, and `keys create --credits`).
// An empty description becomes "N credits granted by operator". tx may be the caller's transaction.
func (s *Service) Grant(ctx context.Context, tx *store.Store, accountID string, credits int64, description string) (store.LedgerEntry, error) {
	if credits <= 0 {
		return store.LedgerEntry{}, fmt.Errorf("grant: credits must be positive, got %d", credits)
	}
	if tx == nil {
		tx = s.st
	}
	if description == "" {
		description = fmt.Sprintf("%d credits granted by operator", credits)
	}
	e := store.LedgerEntry{
		AccountID: accountID, Type: store.TxDeposit, AmountCents: credits * s.cfg.CentsPerCredit,
		Description: &description, CreatedAt: s.clock(),
	}
	if err := tx.AppendLedger(ctx, &e); err != nil {
		return e, fmt.Errorf("grant %d credits to %s: %w", credits, accountID, err)
	}
	return e, nil
}

func ptr[T any](v T) *T { return &v }
