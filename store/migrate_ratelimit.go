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
	}}
}
