package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// BillingRun is one metered run: written once when the run is dispatched (even when its effort costs
// nothing, so usage can count it) and marked when it is refunded. The run id is the primary key, which
// is what makes charging exactly once per run.
type BillingRun struct {
	RunID         string `gorm:"type:varchar(64);primaryKey"`
	AccountID     string `gorm:"type:varchar(36);not null;index:idx_billing_runs_account_charged,priority:1"`
	JobID         string `gorm:"type:varchar(36);not null;index"`
	Effort        string `gorm:"type:varchar(16);not null"`
	Credits       int64  `gorm:"not null"`
	AmountCents   int64  `gorm:"not null"`           // charged, >= 0
	PaidCents     int64  `gorm:"not null;default:0"` // the part of AmountCents drawn from paid funds (not bonus)
	ChargeEntryID *string
	RefundEntryID *string
	ChargedAt     time.Time `gorm:"not null;index:idx_billing_runs_account_charged,priority:2"`
	RefundedAt    *time.Time
}

// InsertBillingRun records a run as metered; false (and nothing written) when the run id already is.
// Concurrent inserts of one run id: exactly one returns true.
func (s *Store) InsertBillingRun(ctx context.Context, r *BillingRun) (bool, error) {
	r.ChargedAt = r.ChargedAt.UTC().Truncate(time.Microsecond)
	res := s.with(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "run_id"}}, DoNothing: true}).Create(r)
	if res.Error != nil {
		return false, fmt.Errorf("record run %s: %w", r.RunID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// BillingRunByID loads a metered run.
func (s *Store) BillingRunByID(ctx context.Context, runID string) (BillingRun, error) {
	var r BillingRun
	err := s.with(ctx).Where("run_id = ?", runID).Take(&r).Error
	return r, notFound(err, "billing run "+runID)
}

// SetBillingRunCharge links a metered run to its consumption entry.
func (s *Store) SetBillingRunCharge(ctx context.Context, runID, entryID string, paidCents int64) error {
	err := s.with(ctx).Model(&BillingRun{}).Where("run_id = ?", runID).
		Updates(map[string]any{"charge_entry_id": entryID, "paid_cents": paidCents}).Error
	if err != nil {
		return fmt.Errorf("link run %s to its charge: %w", runID, err)
	}
	return nil
}

// MarkBillingRunRefunded marks a metered run refunded at at and returns it; false when the run was
// never metered or is already refunded. Concurrent calls for one run: exactly one returns true.
func (s *Store) MarkBillingRunRefunded(ctx context.Context, runID string, at time.Time) (BillingRun, bool, error) {
	res := s.with(ctx).Model(&BillingRun{}).Where("run_id = ? AND refunded_at IS NULL", runID).
		Update("refunded_at", at.UTC().Truncate(time.Microsecond))
	if res.Error != nil {
		return BillingRun{}, false, fmt.Errorf("mark run %s refunded: %w", runID, res.Error)
	}
	if res.RowsAffected == 0 {
		return BillingRun{}, false, nil
	}
	r, err := s.BillingRunByID(ctx, runID)
	return r, err == nil, err
}

// SetBillingRunRefund links a refunded run to its refund entry.
func (s *Store) SetBillingRunRefund(ctx context.Context, runID, entryID string) error {
	err := s.with(ctx).Model(&BillingRun{}).Where("run_id = ?", runID).Update("refund_entry_id", entryID).Error
	if err != nil {
		return fmt.Errorf("link run %s to its refund: %w", runID, err)
	}
	return nil
}

// JobCredits is the credits charged to a job's runs that were not refunded.
func (s *Store) JobCredits(ctx context.Context, jobID string) (int64, error) {
	var n int64
	err := s.with(ctx).Model(&BillingRun{}).Where("job_id = ? AND refunded_at IS NULL", jobID).
		Select("COALESCE(SUM(credits), 0)").Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("credits of job %s: %w", jobID, err)
	}
	return n, nil
}

// EffortUsage sums the runs of one effort.
type EffortUsage struct {
	Effort string
	Runs   int64 // metered, refunded or not
	// Net of refunds: a refunded run adds nothing.
	Credits   int64
	Cents     int64
	PaidCents int64
}

// UsageBetween sums an account's runs metered in [from, to), per effort.
func (s *Store) UsageBetween(ctx context.Context, accountID string, from, to time.Time) ([]EffortUsage, error) {
	var rows []EffortUsage
	err := s.with(ctx).Model(&BillingRun{}).
		Select(`effort, COUNT(*) AS runs,
			COALESCE(SUM(CASE WHEN refunded_at IS NULL THEN credits ELSE 0 END), 0) AS credits,
			COALESCE(SUM(CASE WHEN refunded_at IS NULL THEN amount_cents ELSE 0 END), 0) AS cents,
			COALESCE(SUM(CASE WHEN refunded_at IS NULL THEN paid_cents ELSE 0 END), 0) AS paid_cents`).
		Where("account_id = ? AND charged_at >= ? AND charged_at < ?", accountID,
			from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond)).
		Group("effort").Order("effort").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("usage of account %s: %w", accountID, err)
	}
	return rows, nil
}

// ListLedger pages an account's ledger newest first, optionally only entries of one type.
func (s *Store) ListLedger(ctx context.Context, accountID, typ string, req PageRequest) (Page[LedgerEntry], error) {
	q := s.with(ctx).Model(&LedgerEntry{}).Where("account_id = ?", accountID)
	if typ != "" {
		q = q.Where("type = ?", typ)
	}
	page, err := paginate(q, req, func(e LedgerEntry) Cursor { return Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
	if err != nil {
		return page, fmt.Errorf("list ledger: %w", err)
	}
	return page, nil
}
