package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Ledger transaction types.
const (
	TxDeposit     = "deposit"
	TxConsumption = "consumption"
	TxBonus       = "bonus"
	TxRefund      = "refund"
	TxExpiration  = "expiration"
	TxAutoTopup   = "auto_topup"
)

// ErrInsufficientFunds is returned when an entry would take the balance below zero.
var ErrInsufficientFunds = errors.New("insufficient funds")

// Balance is an account's current balance in cents: its newest ledger entry's balance_after.
func (s *Store) Balance(ctx context.Context, accountID string) (int64, error) {
	last, err := s.lastEntry(s.with(ctx), accountID)
	if err != nil {
		return 0, err
	}
	return last.BalanceAfterCents, nil
}

func (s *Store) lastEntry(db *gorm.DB, accountID string) (LedgerEntry, error) {
	var e LedgerEntry
	err := db.Where("account_id = ?", accountID).Order("seq DESC").Limit(1).Find(&e).Error
	if err != nil {
		return e, fmt.Errorf("last ledger entry: %w", err)
	}
	return e, nil
}

// AppendLedger appends e to its account's ledger and fills Seq, BalanceAfterCents, BonusCents,
// BonusAfterCents, ID and CreatedAt (when not set). An entry of a run (RunID) is booked at most once
// per type: a second one is ErrConflict.
// The (account, seq) unique index makes concurrent appends race safely: the loser retries against the
// new balance, so the balance is always the sum of the entries and never goes below zero.
func (s *Store) AppendLedger(ctx context.Context, e *LedgerEntry) error {
	const attempts = 50
	for i := 0; i < attempts; i++ {
		err := s.appendOnce(ctx, e)
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return err
		}
		time.Sleep(time.Duration(i+1) * time.Millisecond)
	}
	return fmt.Errorf("append ledger: too much contention on account %s", e.AccountID)
}

func (s *Store) appendOnce(ctx context.Context, e *LedgerEntry) error {
	// A savepoint when already inside a transaction, so a lost race does not poison the caller's tx.
	return s.with(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == Postgres {
			// Queue writers of one account on its row instead of letting them collide on (account, seq):
			// under a burst of spends every append then succeeds first time instead of exhausting its
			// retries. NO KEY UPDATE still lets other transactions insert rows that reference the account.
			if err := tx.Exec("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", e.AccountID).Error; err != nil {
				return fmt.Errorf("lock account %s: %w", e.AccountID, err)
			}
		}
		if e.RunID != nil {
			// The unique (run_id, type) index would refuse it too, but as a duplicate key, which the
			// caller's retry loop reads as seq contention.
			var n int64
			if err := tx.Model(&LedgerEntry{}).Where("run_id = ? AND type = ?", *e.RunID, e.Type).Count(&n).Error; err != nil {
				return fmt.Errorf("find %s of run %s: %w", e.Type, *e.RunID, err)
			}
			if n > 0 {
				return fmt.Errorf("%s of run %s already booked: %w", e.Type, *e.RunID, ErrConflict)
			}
		}
		last, err := s.lastEntry(tx, e.AccountID)
		if err != nil {
			return err
		}
		balance := last.BalanceAfterCents + e.AmountCents
		if balance < 0 {
			return fmt.Errorf("append %s of %d cents to balance %d: %w", e.Type, e.AmountCents, last.BalanceAfterCents, ErrInsufficientFunds)
		}
		entry := *e
		entry.ID = uuid.NewString()
		entry.Seq = last.Seq + 1
		entry.BalanceAfterCents = balance
		entry.BonusCents = bonusChange(entry, last.BonusAfterCents)
		entry.BonusAfterCents = last.BonusAfterCents + entry.BonusCents
		if !entry.CreatedAt.IsZero() {
			// The caller's clock (billing books at its own now, which tests control); else the store's.
			entry.CreatedAt = entry.CreatedAt.UTC().Truncate(time.Microsecond)
		}
		if err := tx.Create(&entry).Error; err != nil {
			return err
		}
		*e = entry
		return nil
	})
}

// bonusChange is how much of e's amount moves the bonus part of a balance that holds bonus cents of
// bonus credits. Bonus credits add to it; every draw (consumption, expiration) takes from it first;
// a refund gives back what its charge took from it (the caller's BonusCents, at most the amount);
// paid funds (deposit, auto_topup) leave it alone. It never exceeds the balance.
func bonusChange(e LedgerEntry, bonus int64) int64 {
	switch {
	case e.AmountCents < 0:
		return -min(bonus, -e.AmountCents)
	case e.Type == TxBonus:
		return e.AmountCents
	case e.Type == TxRefund:
		return max(0, min(e.BonusCents, e.AmountCents))
	default:
		return 0
	}
}
