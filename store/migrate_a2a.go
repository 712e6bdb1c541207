package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// a2aMigrations add the agent-to-agent task table: the A2A side of a research job (its context id,
// message history and the version its optimistic updates are checked against).
func a2aMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611250101_a2a_tasks",
		Migrate: func(tx *gorm.DB) error {
			type A2ATask struct {
				TaskID    string    `gorm:"type:varchar(36);primaryKey"`
				AccountID string    `gorm:"type:varchar(36);not null;index:idx_a2a_tasks_account_context,priority:1"`
				ContextID string    `gorm:"type:varchar(255);not null;index:idx_a2a_tasks_account_context,priority:2"`
				Version   int64     `gorm:"not null"`
				Task      string    `gorm:"type:text;not null"`
				CreatedAt time.Time `gorm:"not null"`
				UpdatedAt time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&A2ATask{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("a2a_tasks") },
	}}
}
