package store

import (
	"context"
	"fmt"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migrations is the ordered schema history. Each step snapshots its own structs so later model
// changes never rewrite history; append new steps, never edit old ones. Each area keeps its steps in
// its own file (migrate_<area>.go).
func migrations() []*gormigrate.Migration {
	var all []*gormigrate.Migration
	for _, area := range [][]*gormigrate.Migration{
		coreMigrations(), billingMigrations(), attachmentMigrations(), jobMigrations(), expertMigrations(), skillMigrations(), rateLimitMigrations(),
		expertFileMigrations(), jobRunExpertMigrations(), batchMigrations(), loopMigrations(), expertBuildMigrations(), holdMigrations(),
		idempotencyMigrations(), a2aMigrations(), webhookMigrations(), revisionFileMigrations(), citationMigrations(), campaignMigrations(),
		ctaMigrations(),
	} {
		all = append(all, area...)
	}
	return all
}

func coreMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611210001_accounts_keys_ledger",
		Migrate: func(tx *gorm.DB) error {
			type Account struct {
				ID        string    `gorm:"type:varchar(36);primaryKey"`
				Email     string    `gorm:"type:varchar(320);uniqueIndex;not null"`
				Tier      string    `gorm:"type:varchar(16);not null;default:free"`
				IsAdmin   bool      `gorm:"not null;default:false"`
				CreatedAt time.Time `gorm:"not null"`
				UpdatedAt time.Time `gorm:"not null"`
			}
			type APIKey struct {
				ID         string    `gorm:"type:varchar(36);primaryKey"`
				AccountID  string    `gorm:"type:varchar(36);not null;index:idx_api_keys_account_created,priority:1"`
				Label      *string   `gorm:"type:varchar(100)"`
				Prefix     string    `gorm:"type:varchar(8);not null;index"`
				Last4      string    `gorm:"type:varchar(4);not null"`
				Hash       string    `gorm:"type:char(64);not null;uniqueIndex"`
				Scopes     string    `gorm:"type:varchar(200);not null"`
				CreatedAt  time.Time `gorm:"not null;index:idx_api_keys_account_created,priority:2"`
				LastUsedAt *time.Time
				RevokedAt  *time.Time
			}
			type LedgerEntry struct {
				ID                string    `gorm:"type:varchar(36);primaryKey"`
				AccountID         string    `gorm:"type:varchar(36);not null;index:idx_ledger_account_created,priority:1;uniqueIndex:idx_ledger_account_seq,priority:1"`
				Seq               int64     `gorm:"not null;uniqueIndex:idx_ledger_account_seq,priority:2"`
				Type              string    `gorm:"type:varchar(16);not null"`
				AmountCents       int64     `gorm:"not null"`
				BalanceAfterCents int64     `gorm:"not null;check:chk_ledger_balance_nonnegative,balance_after_cents >= 0"`
				DepthType         *string   `gorm:"type:varchar(16)"`
				Description       *string   `gorm:"type:varchar(500)"`
				JobID             *string   `gorm:"type:varchar(36);index"`
				CreatedAt         time.Time `gorm:"not null;index:idx_ledger_account_created,priority:2"`
			}
			return tx.AutoMigrate(&Account{}, &APIKey{}, &LedgerEntry{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("ledger_entries", "api_keys", "accounts")
		},
	}}
}

// Migrate applies every pending migration. Safe to run from several processes: Postgres serialises
// them on an advisory lock.
func (s *Store) Migrate(ctx context.Context) error {
	db := s.with(ctx)
	run := func(db *gorm.DB) error {
		m := gormigrate.New(db, &gormigrate.Options{TableName: "schema_migrations", IDColumnSize: 255, UseTransaction: true}, migrations())
		if err := m.Migrate(); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		// The job queue's tables come with the schema: River's migrations (see migrate_jobs.go).
		return s.migrateQueue(ctx)
	}
	if s.dialect != Postgres {
		return run(db)
	}
	return db.Connection(func(conn *gorm.DB) error {
		const lockKey = 7203485112 // arbitrary, constant: "researchd migrations"
		if err := conn.Exec("SELECT pg_advisory_lock(?)", lockKey).Error; err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		// The lock belongs to this pooled connection: release it even when ctx has ended, or the
		// connection goes back to the pool still holding it and the next Migrate waits forever.
		defer conn.WithContext(context.WithoutCancel(ctx)).Exec("SELECT pg_advisory_unlock(?)", lockKey)
		return run(conn)
	})
}
