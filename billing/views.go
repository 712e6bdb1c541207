package billing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/researchd/researchd/store"
)

// Quota is an account's tier, balance and prices.
type Quota struct {
	Tier         string
	MaxEffort    string
	BalanceCents int64 // the ledger balance
	// AvailableCents is the balance minus the holds of runs accepted but not dispatched yet: what new
	// runs may still spend.
	AvailableCents   int64
	CreditsRemaining int64 // whole credits the available balance buys
	CentsPerCredit   int64
	CreditsPerEffort map[string]int64
}

// Quota reads an account's quota; it consumes nothing.
func (s *Service) Quota(ctx context.Context, accountID string) (Quota, error) {
	acct, err := s.st.AccountByID(ctx, accountID)
	if err != nil {
		return Quota{}, err
	}
	balance, err := s.st.Balance(ctx, accountID)
	if err != nil {
		return Quota{}, err
	}
	avail, err := s.st.AvailableBalance(ctx, accountID)
	if err != nil {
		return Quota{}, err
	}
	prices := make(map[string]int64, len(efforts))
	for _, e := range efforts {
		prices[e] = s.cfg.Credits(e)
	}
	return Quota{
		Tier: acct.Tier, MaxEffort: s.cfg.MaxEffort(acct.Tier), BalanceCents: balance,
		AvailableCents: avail, CreditsRemaining: max(avail, 0) / s.cfg.CentsPerCredit, CentsPerCredit: s.cfg.CentsPerCredit,
		CreditsPerEffort: prices,
	}, nil
}

// Check is whether a run at an effort would be allowed now.
type Check struct {
	Allowed          bool
	RequestedEffort  string
	Effort           string // RequestedEffort clamped to the tier
	CreditsRequired  int64
	CreditsRemaining int64
}

// Check answers whether POST /research at effort would be allowed now, as a create would decide it
// (clamp to the tier, then price against the available balance). It consumes and reserves nothing.
func (s *Service) Check(ctx context.Context, accountID, effort string) (Check, error) {
	if !KnownEffort(effort) {
		return Check{}, fmt.Errorf("check %q: %w", effort, ErrUnknownEffort)
	}
	q, err := s.Quota(ctx, accountID)
	if err != nil {
		return Check{}, err
	}
	ran := s.cfg.Clamp(q.Tier, effort)
	return Check{
		Allowed:         q.AvailableCents >= s.cfg.Cents(ran),
		RequestedEffort: effort, Effort: ran,
		CreditsRequired: s.cfg.Credits(ran), CreditsRemaining: q.CreditsRemaining,
	}, nil
}

// Transaction is one ledger entry as the account's transaction list shows it.
type Transaction = store.LedgerEntry

// Transactions pages an account's ledger newest first; typ "" means every type.
func (s *Service) Transactions(ctx context.Context, accountID, typ string, req store.PageRequest) (store.Page[Transaction], error) {
	return s.st.ListLedger(ctx, accountID, typ, req)
}

// Periods of a usage query.
const (
	PeriodCurrent = "current"
	PeriodLast30d = "last_30d"
	PeriodCustom  = "custom"
)

// MaxCustomPeriod is the longest custom usage period.
const MaxCustomPeriod = 366 * 24 * time.Hour

// UsageQuery picks a period: current (the default), last_30d, or custom with From and To.
type UsageQuery struct {
	Period   string
	From, To *time.Time
}

// ErrInvalidPeriod is wrapped by every *PeriodError.
var ErrInvalidPeriod = errors.New("invalid usage period")

// PeriodError names the query parameter that makes a usage period invalid.
type PeriodError struct{ Field, Reason string }

func (e *PeriodError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidPeriod) hold.
func (e *PeriodError) Unwrap() error { return ErrInvalidPeriod }

// Bucket is the usage at one effort. Runs counts every run metered; Credits and Cents are net of
// refunds.
type Bucket struct{ Runs, Credits, Cents int64 }

// Usage is an account's metered use over [Start, End).
type Usage struct {
	Start, End     time.Time
	CreditsUsed    int64 // net of refunds
	CentsSpent     int64 // net of refunds
	CentsSpentPaid int64 // the part of CentsSpent drawn from paid funds (bonus credits are drawn first)
	Runs           int64 // every run metered, at every effort including low
	ByEffort       map[string]Bucket
	// Projected is set for the current period: CreditsUsed extrapolated linearly to End.
	Projected *int64
}

// Usage sums an account's runs metered in the queried period (a run counts where it was dispatched;
// a later refund takes its credits out of that period).
func (s *Service) Usage(ctx context.Context, accountID string, q UsageQuery) (Usage, error) {
	acct, err := s.st.AccountByID(ctx, accountID)
	if err != nil {
		return Usage{}, err
	}
	now := s.clock()
	start, end, err := period(q, acct.CreatedAt, now)
	if err != nil {
		return Usage{}, err
	}
	rows, err := s.st.UsageBetween(ctx, accountID, start, end)
	if err != nil {
		return Usage{}, err
	}
	u := Usage{Start: start, End: end, ByEffort: map[string]Bucket{}}
	for _, r := range rows {
		u.Runs += r.Runs
		u.CreditsUsed += r.Credits
		u.CentsSpent += r.Cents
		u.CentsSpentPaid += r.PaidCents
		u.ByEffort[r.Effort] = Bucket{Runs: r.Runs, Credits: r.Credits, Cents: r.Cents}
	}
	if q.Period == "" || q.Period == PeriodCurrent {
		p := project(u.CreditsUsed, now.Sub(start), end.Sub(start))
		u.Projected = &p
	}
	return u, nil
}

// period resolves a query to [start, end) at now, or a *PeriodError.
func period(q UsageQuery, created, now time.Time) (time.Time, time.Time, error) {
	kind := q.Period
	if kind == "" {
		kind = PeriodCurrent
	}
	if kind != PeriodCustom {
		if q.From != nil {
			return time.Time{}, time.Time{}, &PeriodError{"from", "only allowed with period=custom"}
		}
		if q.To != nil {
			return time.Time{}, time.Time{}, &PeriodError{"to", "only allowed with period=custom"}
		}
	}
	switch kind {
	case PeriodCurrent:
		start, end := BillingPeriod(created, now)
		return start, end, nil
	case PeriodLast30d:
		return now.Add(-30 * 24 * time.Hour), now, nil
	case PeriodCustom:
		switch {
		case q.From == nil:
			return time.Time{}, time.Time{}, &PeriodError{"from", "required with period=custom"}
		case q.To == nil:
			return time.Time{}, time.Time{}, &PeriodError{"to", "required with period=custom"}
		}
		from, to := q.From.UTC(), q.To.UTC()
		switch {
		case !from.Before(to):
			return time.Time{}, time.Time{}, &PeriodError{"to", "must be after from"}
		case to.Sub(from) > MaxCustomPeriod:
			return time.Time{}, time.Time{}, &PeriodError{"to", "at most 366 days after from"}
		}
		return from, to, nil
	default:
		return time.Time{}, time.Time{}, &PeriodError{"period", "want current, last_30d or custom"}
	}
}

// BillingPeriod is the monthly period containing now, anchored on created: each starts on created's
// day of month at created's time of day (UTC), or on the month's last day when it is shorter.
func BillingPeriod(created, now time.Time) (start, end time.Time) {
	created, now = created.UTC(), now.UTC()
	if now.Before(created) {
		return created, anchor(created, 1)
	}
	months := (now.Year()-created.Year())*12 + int(now.Month()-created.Month())
	// The estimate is at most one period late (day or time of day not reached yet this month).
	for months > 0 && anchor(created, months).After(now) {
		months--
	}
	return anchor(created, months), anchor(created, months+1)
}

// anchor is the start of the period that begins n months after created.
func anchor(created time.Time, n int) time.Time {
	y, m := created.Year(), created.Month()+time.Month(n)
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC) // normalises the month overflow
	lastDay := first.AddDate(0, 1, -1).Day()
	day := min(created.Day(), lastDay)
	return time.Date(first.Year(), first.Month(), day, created.Hour(), created.Minute(), created.Second(), created.Nanosecond(), time.UTC)
}

// project extrapolates used credits over elapsed to the whole period, rounded to the nearest credit.
func project(used int64, elapsed, length time.Duration) int64 {
	if elapsed <= 0 || used == 0 {
		return used
	}
	if elapsed >= length {
		return used
	}
	return int64(math.Round(float64(used) * float64(length) / float64(elapsed)))
}
