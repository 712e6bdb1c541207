package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// revisionFileMigrations are the schema steps of published revision manifests, in order.
func revisionFileMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611270101_revision_files",
		Migrate: func(tx *gorm.DB) error {
			// files_stored: the revision's manifest is in research_revision_files and its contents in
			// the blob store. Revisions recorded before this step say false until backfilled.
			type ResearchRevision struct {
				FilesStored bool `gorm:"not null;default:false"`
			}
			if err := tx.Migrator().AddColumn(&ResearchRevision{}, "FilesStored"); err != nil {
				return err
			}
			// One row per file of a revision; seq is the file's place in byte order of paths, so
			// listings need no collation-dependent ORDER BY path (and a long path is no key).
			type ResearchRevisionFile struct {
				JobID         string    `gorm:"type:varchar(36);primaryKey"`
				CommitSHA     string    `gorm:"column:commit_sha;type:varchar(40);primaryKey"`
				Seq           int       `gorm:"primaryKey;autoIncrement:false"`
				Path          string    `gorm:"type:text;not null"`
				Size          int64     `gorm:"not null"`
				ContentType   string    `gorm:"type:varchar(255);not null"`
				BlobID        string    `gorm:"type:varchar(40);not null"`
				SHA256        string    `gorm:"column:sha256;type:varchar(64);not null"`
				LastCommitSHA string    `gorm:"column:last_commit_sha;type:varchar(40);not null"`
				LastModified  time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&ResearchRevisionFile{})
		},
		Rollback: func(tx *gorm.DB) error {
			if err := tx.Migrator().DropTable("research_revision_files"); err != nil {
				return err
			}
			type ResearchRevision struct{ FilesStored bool }
			return tx.Migrator().DropColumn(&ResearchRevision{}, "FilesStored")
		},
	}}
}
