package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// expertBuildMigrations are the schema steps of asynchronous expert builds (POST /experts/build).
func expertBuildMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611260101_expert_builds",
		Migrate: func(tx *gorm.DB) error {
			type ExpertBuild struct {
				ID           string    `gorm:"type:varchar(36);primaryKey"`
				AccountID    string    `gorm:"type:varchar(36);not null;index"`
				Status       string    `gorm:"type:varchar(16);not null;index"`
				Request      string    `gorm:"type:text;not null"`
				ExpertID     *string   `gorm:"type:varchar(36)"`
				ErrorCode    *string   `gorm:"type:varchar(64)"`
				ErrorMessage *string   `gorm:"type:text"`
				CreatedAt    time.Time `gorm:"not null"`
				FinishedAt   *time.Time
			}
			return tx.AutoMigrate(&ExpertBuild{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("expert_builds")
		},
	}}
}
