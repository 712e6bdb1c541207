package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// holdMigrations are the schema steps of credit holds, in order.
func holdMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611250001_credit_holds",
		Migrate: func(tx *gorm.DB) error {
			type CreditHold struct {
				RunID       string    `gorm:"type:varchar(64);primaryKey"`
				AccountID   string    `gorm:"type:varchar(36);not null;index"`
				JobID       string    `gorm:"type:varchar(36);not null"`
				AmountCents int64     `gorm:"not null"`
				CreatedAt   time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&CreditHold{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("credit_holds") },
	}}
}
