package billing

import (
	"context"
	"fmt"

	"github.com/researchd/researchd/store"
)

// Units is a batch of workers metered together (a campaign's chunk of records): Count workers at
// Effort, held under RunID when they are dispatched and charged for those that succeed when they
// settle. JobID names what they belong to (the campaign); Description labels the ledger entry.
type Units struct {
	AccountID, RunID, JobID, Effort string
	Count                           int64
	Description                     string
}

// HoldUnits reserves the price of u.Count workers from the account's available balance in the
// caller's transaction (ErrInsufficientCredits, with nothing held, when it cannot cover them). A
// zero-credit effort holds nothing.
func (s *Service) HoldUnits(ctx context.Context, tx *store.Store, u Units) error {
	return s.hold(ctx, tx, "hold", u)
}

// AvailableUnits is how many workers at effort the account's available balance covers (-1: any
// number, the effort is free). ErrUnknownEffort for an effort without a price, which would
// otherwise count as free.
func (s *Service) AvailableUnits(ctx context.Context, tx *store.Store, accountID, effort string) (int64, error) {
	if !KnownEffort(effort) {
		return 0, fmt.Errorf("available units at %q: %w", effort, ErrUnknownEffort)
	}
	cents := s.cfg.Cents(effort)
	if cents == 0 {
		return -1, nil
	}
	avail, err := tx.AvailableBalance(ctx, accountID)
	if err != nil {
		return 0, err
	}
	return max(avail, 0) / cents, nil
}

// SettleUnits meters the succeeded workers of a held batch, exactly once per u.RunID: one
// consumption entry of succeeded × the effort's price (consuming the hold; the rest of the hold
// is released, so failed and unstarted workers cost nothing) and one metered run in usage. With
// no success it only releases the hold. tx is the caller's transaction.
func (s *Service) SettleUnits(ctx context.Context, tx *store.Store, u Units, succeeded int64) error {
	return tx.InTx(ctx, func(tx *store.Store) error {
		if _, _, err := tx.TakeHold(ctx, u.RunID); err != nil {
			return err
		}
		if succeeded <= 0 {
			return nil
		}
		// A batch's entry names no job: u.JobID is a campaign, not a research job.
		e := store.LedgerEntry{Description: &u.Description}
		return s.meter(ctx, tx, "charge", s.billingRun(u, succeeded, s.clock()), e, nil)
	})
}
