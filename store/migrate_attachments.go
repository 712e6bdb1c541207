package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// attachmentMigrations are the schema steps of the attachments area, in order. IDs are YYYYMMDDNNNN_attachments_what.
func attachmentMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611220501_attachments_files",
		Migrate: func(tx *gorm.DB) error {
			type Attachment struct {
				ID              string     `gorm:"type:varchar(36);primaryKey"`
				AccountID       string     `gorm:"type:varchar(36);not null;index:idx_attachments_account_created,priority:1"`
				Status          string     `gorm:"type:varchar(16);not null"`
				UploadTokenHash *string    `gorm:"type:char(64);uniqueIndex"`
				ExpiresAt       *time.Time `gorm:"index"`
				CreatedAt       time.Time  `gorm:"not null;index:idx_attachments_account_created,priority:2"`
				UpdatedAt       time.Time  `gorm:"not null"`
			}
			type AttachmentFile struct {
				ID           string     `gorm:"type:varchar(36);primaryKey"`
				AttachmentID string     `gorm:"type:varchar(36);not null;uniqueIndex:idx_attachment_files_position,priority:1;uniqueIndex:idx_attachment_files_name,priority:1"`
				Attachment   Attachment `gorm:"constraint:OnDelete:CASCADE"`
				Position     int        `gorm:"not null;uniqueIndex:idx_attachment_files_position,priority:2"`
				Filename     string     `gorm:"type:varchar(255);not null;uniqueIndex:idx_attachment_files_name,priority:2"`
				ContentType  string     `gorm:"type:varchar(255);not null"`
				SizeBytes    int64      `gorm:"not null"`
				BlobKey      string     `gorm:"type:varchar(200);not null"`
				CreatedAt    time.Time  `gorm:"not null"`
			}
			return tx.AutoMigrate(&Attachment{}, &AttachmentFile{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("attachment_files", "attachments")
		},
	}}
}
