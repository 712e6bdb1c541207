package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// idempotencyMigrations widen the stored key: experts, batches and builds keep their keys in the
// jobs' table behind a short area prefix ("batch:", "expert-builds:"), so a client key of the
// document's full 255 characters must still fit.
func idempotencyMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611240301_idempotency_key_width",
		Migrate: func(tx *gorm.DB) error {
			if tx.Dialector.Name() != "postgres" {
				return nil // SQLite does not enforce varchar lengths
			}
			return tx.Exec("ALTER TABLE idempotency_keys ALTER COLUMN idem_key TYPE varchar(320)").Error
		},
		Rollback: func(*gorm.DB) error { return nil },
	}}
}
