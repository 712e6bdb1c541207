package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// ctaMigrations add the signed-out call-to-action settings of a job's linked apps.
// IDs are YYYYMMDDNNNN_jobs_what.
func ctaMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611270101_jobs_anonymous_cta",
		Migrate: func(tx *gorm.DB) error {
			// anonymous_cta is the JSON object of the settings (title, sample inputs...); NULL for the
			// app's defaults.
			type ResearchJob struct {
				AnonymousCTA *string `gorm:"column:anonymous_cta;type:text"`
			}
			return tx.Migrator().AddColumn(&ResearchJob{}, "AnonymousCTA")
		},
		Rollback: func(tx *gorm.DB) error {
			type ResearchJob struct {
				AnonymousCTA *string `gorm:"column:anonymous_cta"`
			}
			return tx.Migrator().DropColumn(&ResearchJob{}, "AnonymousCTA")
		},
	}}
}
