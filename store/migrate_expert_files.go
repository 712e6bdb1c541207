package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// expertFileMigrations are the schema steps of expert context files beyond the experts core.
func expertFileMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611250101_expert_files_mirror_text",
		Migrate: func(tx *gorm.DB) error {
			type ExpertContextFile struct {
				MirrorText *string `gorm:"type:text"`
			}
			return tx.Migrator().AddColumn(&ExpertContextFile{}, "MirrorText")
		},
		Rollback: func(tx *gorm.DB) error {
			type ExpertContextFile struct {
				MirrorText *string `gorm:"type:text"`
			}
			return tx.Migrator().DropColumn(&ExpertContextFile{}, "MirrorText")
		},
	}}
}
