package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// batchMigrations are the schema steps of the batches area, in order. IDs are YYYYMMDDNNNN_batches_what.
func batchMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611250101_batches_core",
		Migrate: func(tx *gorm.DB) error {
			type Batch struct {
				ID                    string  `gorm:"type:varchar(36);primaryKey"`
				AccountID             string  `gorm:"type:varchar(36);not null;index:idx_batches_account_created,priority:1"`
				Name                  string  `gorm:"type:varchar(200);not null"`
				Status                string  `gorm:"type:varchar(32);not null;index"`
				PausedReason          *string `gorm:"type:varchar(32)"`
				Effort                string  `gorm:"type:varchar(16);not null"`
				RequestedEffort       string  `gorm:"type:varchar(16);not null"`
				ExpertID              *string `gorm:"type:varchar(255)"`
				Approach              *string `gorm:"type:varchar(200)"`
				ResponseLanguage      *string `gorm:"type:varchar(16)"`
				MaxConcurrent         int     `gorm:"not null"`
				MaxCredits            *int64
				CustomJSONSchema      *string `gorm:"column:custom_json_schema;type:text"`
				CreditsPerRow         int64   `gorm:"not null;default:0"`
				CreditsSpent          int64   `gorm:"not null;default:0"`
				TotalRows             int     `gorm:"not null"`
				PendingRows           int     `gorm:"not null"`
				RunningRows           int     `gorm:"not null;default:0"`
				SucceededRows         int     `gorm:"not null;default:0"`
				FailedRows            int     `gorm:"not null;default:0"`
				ScheduleID            *string `gorm:"type:varchar(36);index"`
				RunNumber             *int
				CreatedAt             time.Time `gorm:"not null;index:idx_batches_account_created,priority:2"`
				UpdatedAt             time.Time `gorm:"not null"`
				ProcessingStartedAt   *time.Time
				ProcessingCompletedAt *time.Time
			}
			type BatchRow struct {
				BatchID    string  `gorm:"type:varchar(36);primaryKey"`
				RowNumber  int     `gorm:"primaryKey;autoIncrement:false"`
				Question   string  `gorm:"type:text;not null"`
				Status     string  `gorm:"type:varchar(16);not null"`
				JobID      *string `gorm:"type:varchar(36);index"`
				ErrorCode  *string `gorm:"type:varchar(64)"`
				Attempts   int     `gorm:"not null;default:0"`
				Credits    int64   `gorm:"not null;default:0"`
				RowData    *string `gorm:"type:text"`
				Input      *string `gorm:"type:text"`
				StartedAt  *time.Time
				FinishedAt *time.Time
				UpdatedAt  time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&Batch{}, &BatchRow{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("batch_rows", "batches")
		},
	}}
}
