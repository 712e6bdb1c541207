package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// loopMigrations are the schema steps of the loops area, in order. IDs are YYYYMMDDNNNN_loops_what.
func loopMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611260101_loops_core",
		Migrate: func(tx *gorm.DB) error {
			type Schedule struct {
				ID                  string     `gorm:"type:varchar(36);primaryKey"`
				AccountID           string     `gorm:"type:varchar(36);not null;index:idx_schedules_account_created,priority:1"`
				Name                string     `gorm:"type:varchar(200);not null"`
				Frequency           string     `gorm:"type:varchar(16);not null"`
				Hour                int        `gorm:"not null"`
				Minute              int        `gorm:"not null"`
				DayOfWeek           *int       `gorm:"column:day_of_week"`
				DayOfMonth          *int       `gorm:"column:day_of_month"`
				Timezone            string     `gorm:"type:varchar(64);not null"`
				Effort              *string    `gorm:"type:varchar(16)"`
				ExpertID            *string    `gorm:"type:varchar(255)"`
				QuestionCount       int        `gorm:"not null"`
				Config              string     `gorm:"type:text;not null"`
				IsActive            bool       `gorm:"not null;index:idx_schedules_due,priority:1"`
				NextRunAt           *time.Time `gorm:"index:idx_schedules_due,priority:2"`
				LastRunAt           *time.Time
				RunCount            int     `gorm:"not null;default:0"`
				ConsecutiveFailures int     `gorm:"not null;default:0"`
				LastSkipReason      *string `gorm:"type:varchar(32)"`
				LastSkippedAt       *time.Time
				LatestBatchID       *string `gorm:"type:varchar(36)"`
				DeletedAt           *time.Time
				CreatedAt           time.Time `gorm:"not null;index:idx_schedules_account_created,priority:2"`
				UpdatedAt           time.Time `gorm:"not null"`
			}
			type ScheduleRun struct {
				ScheduleID string    `gorm:"type:varchar(36);primaryKey"`
				RunNumber  int       `gorm:"primaryKey;autoIncrement:false"`
				BatchID    string    `gorm:"type:varchar(36);not null;uniqueIndex"`
				Outcome    *string   `gorm:"type:varchar(16)"`
				CreatedAt  time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&Schedule{}, &ScheduleRun{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("schedule_runs", "schedules")
		},
	}}
}
