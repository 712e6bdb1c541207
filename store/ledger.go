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

// AppendLedger appends e to its account's ledger and fills Seq, BalanceAfterCents, ID and CreatedAt.
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
		entry.CreatedAt = time.Time{}
		if err := tx.Create(&entry).Error; err != nil {
			return err
		}
		*e = entry
		return nil
	})
}
