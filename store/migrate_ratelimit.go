package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// rateLimitMigrations are the schema steps of rate limiting, in order.
func rateLimitMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611240201_rate_buckets",
		Migrate: func(tx *gorm.DB) error {
			type RateBucket struct {
				BucketKey string    `gorm:"type:varchar(200);primaryKey"`
				Tokens    float64   `gorm:"not null"`
				UpdatedAt time.Time `gorm:"not null;index"`
			}
			return tx.AutoMigrate(&RateBucket{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("rate_buckets") },
	}, {
		// The bucket's parameters and its clock in integer microseconds, so that one portable upsert
		// refills and takes (store.TakeTokens), and whether the last take got a token.
		ID: "202611250201_rate_buckets_one_statement",
		Migrate: func(tx *gorm.DB) error {
			type RateBucket struct {
				Capacity float64 `gorm:"not null;default:0"`
				PerUs    float64 `gorm:"not null;default:0"`
				StampUs  int64   `gorm:"not null;default:0"`
				Taken    bool    `gorm:"not null;default:false"`
			}
			for _, col := range []string{"Capacity", "PerUs", "StampUs", "Taken"} {
				if err := tx.Migrator().AddColumn(&RateBucket{}, col); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, col := range []string{"capacity", "per_us", "stamp_us", "taken"} {
				if err := tx.Migrator().DropColumn("rate_buckets", col); err != nil {
					return err
				}
			}
			return nil
		},
	}, {
		// Buckets are throwaway state: after a crash they start full again, which costs nothing. An
		// unlogged table takes no WAL flush per request (Postgres; SQLite has no such tables).
		ID: "202611250202_rate_buckets_unlogged",
		Migrate: func(tx *gorm.DB) error {
			if tx.Dialector.Name() != "postgres" {
				return nil
			}
			return tx.Exec("ALTER TABLE rate_buckets SET UNLOGGED").Error
		},
		Rollback: func(tx *gorm.DB) error {
			if tx.Dialector.Name() != "postgres" {
				return nil
			}
			return tx.Exec("ALTER TABLE rate_buckets SET LOGGED").Error
		},
	}, {
		// How many tokens the last take granted: a limiter takes for all its requests waiting on a
		// bucket in one statement (store.TakeTokens). taken stays for processes of the previous release.
		ID: "202612020201_rate_buckets_granted",
		Migrate: func(tx *gorm.DB) error {
			type RateBucket struct {
				Granted int `gorm:"not null;default:0"`
			}
			return tx.Migrator().AddColumn(&RateBucket{}, "Granted")
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropColumn("rate_buckets", "granted") },
	}}
}
