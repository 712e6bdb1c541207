package store

import (
	"fmt"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// billingMigrations are the schema steps of the billing area, in order. IDs are YYYYMMDDNNNN_billing_what.
func billingMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611220001_billing_metered_runs",
		Migrate: func(tx *gorm.DB) error {
			// Snapshot of the ledger columns this step adds.
			type LedgerEntry struct {
				RunID           *string `gorm:"type:varchar(64)"`
				BonusCents      int64   `gorm:"not null;default:0"`
				BonusAfterCents int64   `gorm:"not null;default:0"`
			}
			// A metered run: one row per run id, whatever its effort costs (so free runs still count).
			type BillingRun struct {
				RunID         string    `gorm:"type:varchar(64);primaryKey"`
				AccountID     string    `gorm:"type:varchar(36);not null;index:idx_billing_runs_account_charged,priority:1"`
				JobID         string    `gorm:"type:varchar(36);not null;index"`
				Effort        string    `gorm:"type:varchar(16);not null"`
				Credits       int64     `gorm:"not null"`
				AmountCents   int64     `gorm:"not null"`
				PaidCents     int64     `gorm:"not null;default:0"`
				ChargeEntryID *string   `gorm:"type:varchar(36)"`
				RefundEntryID *string   `gorm:"type:varchar(36)"`
				ChargedAt     time.Time `gorm:"not null;index:idx_billing_runs_account_charged,priority:2"`
				RefundedAt    *time.Time
			}
			m := tx.Migrator()
			for _, col := range []string{"RunID", "BonusCents", "BonusAfterCents"} {
				if err := m.AddColumn(&LedgerEntry{}, col); err != nil {
					return fmt.Errorf("add ledger_entries.%s: %w", col, err)
				}
			}
			// At most one consumption and one refund per run, whatever the callers do. NULL run ids
			// (deposits, grants) are distinct in both dialects, so they never collide.
			if err := tx.Exec("CREATE UNIQUE INDEX idx_ledger_run_type ON ledger_entries (run_id, type)").Error; err != nil {
				return fmt.Errorf("create idx_ledger_run_type: %w", err)
			}
			return tx.AutoMigrate(&BillingRun{})
		},
		Rollback: func(tx *gorm.DB) error {
			if err := tx.Exec("DROP INDEX IF EXISTS idx_ledger_run_type").Error; err != nil {
				return err
			}
			type LedgerEntry struct{}
			for _, col := range []string{"run_id", "bonus_cents", "bonus_after_cents"} {
				if err := tx.Migrator().DropColumn(&LedgerEntry{}, col); err != nil {
					return err
				}
			}
			return tx.Migrator().DropTable("billing_runs")
		},
	}}
}
