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
	}}
}
