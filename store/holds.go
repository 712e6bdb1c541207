package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// CreditHold reserves an amount of an account's balance for one run from the moment the run is
// accepted until it is dispatched (the charge consumes the hold) or abandoned (cancelled, or failed
// before dispatch: the hold is released). A hold is deleted when it is settled or released: the
// ledger is the record, the open holds are what the balance still owes.
type CreditHold struct {
	RunID       string    `gorm:"type:varchar(64);primaryKey"`
	AccountID   string    `gorm:"type:varchar(36);not null;index"`
	JobID       string    `gorm:"type:varchar(36);not null"`
	AmountCents int64     `gorm:"not null"`
	CreatedAt   time.Time `gorm:"not null"`
}

// LockAccount serialises the caller's transaction with every other writer of the account's money
// (ledger appends, holds). On SQLite the single connection already serialises transactions.
func (s *Store) LockAccount(ctx context.Context, accountID string) error {
	if s.dialect != Postgres {
		return nil
	}
	if err := s.with(ctx).Exec("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", accountID).Error; err != nil {
		return fmt.Errorf("lock account %s: %w", accountID, err)
	}
	return nil
}

// AvailableBalance is what an account may still commit: its ledger balance minus its open holds.
func (s *Store) AvailableBalance(ctx context.Context, accountID string) (int64, error) {
	var n int64
	err := s.read(ctx).Raw(`SELECT COALESCE((SELECT balance_after_cents FROM ledger_entries WHERE account_id = ? ORDER BY seq DESC LIMIT 1), 0)
		- COALESCE((SELECT SUM(amount_cents) FROM credit_holds WHERE account_id = ?), 0)`, accountID, accountID).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("available balance of %s: %w", accountID, err)
	}
	return n, nil
}

// PlaceHold reserves h.AmountCents of the account's available balance for run h.RunID, or answers
// ErrInsufficientFunds (and holds nothing) when the available balance is smaller. Run it inside the
// transaction that creates what the hold pays for: the account lock it takes queues concurrent
// holds and charges of one account, so together they never exceed the balance.
func (s *Store) PlaceHold(ctx context.Context, h *CreditHold) error {
	return s.atomically(ctx, func(tx *Store) error {
		if err := tx.LockAccount(ctx, h.AccountID); err != nil {
			return err
		}
		avail, err := tx.AvailableBalance(ctx, h.AccountID)
		if err != nil {
			return err
		}
		if avail < h.AmountCents {
			return fmt.Errorf("hold %d cents of %d available: %w", h.AmountCents, avail, ErrInsufficientFunds)
		}
		h.CreatedAt = h.CreatedAt.UTC().Truncate(time.Microsecond)
		if err := tx.with(ctx).Create(h).Error; err != nil {
			return fmt.Errorf("hold credits for run %s: %w", h.RunID, err)
		}
		return nil
	})
}

// TakeHold removes the open hold of a run and returns it; false when the run has none (never held,
// already settled or released). Concurrent calls for one run: exactly one returns true.
func (s *Store) TakeHold(ctx context.Context, runID string) (CreditHold, bool, error) {
	var holds []CreditHold
	res := s.with(ctx).Clauses(clause.Returning{}).Where("run_id = ?", runID).Delete(&holds)
	if res.Error != nil {
		return CreditHold{}, false, fmt.Errorf("take hold of run %s: %w", runID, res.Error)
	}
	if res.RowsAffected == 0 || len(holds) == 0 {
		return CreditHold{}, false, nil
	}
	return holds[0], true, nil
}
