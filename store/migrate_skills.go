package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// skillMigrations are the schema steps of the skills area, in order. IDs are YYYYMMDDNNNN_skills_what.
func skillMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611240101_skills_custom",
		Migrate: func(tx *gorm.DB) error {
			type Skill struct {
				ID          string    `gorm:"type:varchar(36);primaryKey"`
				AccountID   string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_skills_account_name,priority:1"`
				Name        string    `gorm:"type:varchar(64);not null;uniqueIndex:idx_skills_account_name,priority:2"`
				Description string    `gorm:"type:varchar(1024);not null"`
				Category    string    `gorm:"type:varchar(100);not null"`
				Content     string    `gorm:"type:text;not null"`
				CreatedAt   time.Time `gorm:"not null"`
				UpdatedAt   time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&Skill{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("skills")
		},
	}}
}
