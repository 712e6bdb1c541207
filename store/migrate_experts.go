package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// expertMigrations are the schema steps of the experts area, in order. IDs are YYYYMMDDNNNN_experts_what.
func expertMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611240101_experts_core",
		Migrate: func(tx *gorm.DB) error {
			type Expert struct {
				ID               string     `gorm:"type:varchar(36);primaryKey"`
				OwnerID          string     `gorm:"type:varchar(36);not null;index:idx_experts_owner_created,priority:1;index:idx_experts_owner_handle,priority:1"`
				Slug             string     `gorm:"type:varchar(120);not null;uniqueIndex"`
				Handle           string     `gorm:"type:varchar(120);not null;index:idx_experts_owner_handle,priority:2"`
				Name             string     `gorm:"type:varchar(255);not null"`
				Status           string     `gorm:"type:varchar(16);not null"`
				IsPublic         bool       `gorm:"not null;default:false;index"`
				AllowFreeTierUse bool       `gorm:"not null;default:false"`
				Config           string     `gorm:"type:text;not null"`
				VersionNum       int        `gorm:"not null"`
				ArchivedAt       *time.Time `gorm:"index"`
				CreatedAt        time.Time  `gorm:"not null;index:idx_experts_owner_created,priority:2"`
				UpdatedAt        time.Time  `gorm:"not null"`
			}
			type ExpertVersion struct {
				ID         string    `gorm:"type:varchar(36);primaryKey"`
				ExpertID   string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_expert_versions_num,priority:1"`
				Expert     Expert    `gorm:"constraint:OnDelete:CASCADE"`
				VersionNum int       `gorm:"not null;uniqueIndex:idx_expert_versions_num,priority:2"`
				Source     string    `gorm:"type:varchar(16);not null"`
				CreatedBy  *string   `gorm:"type:varchar(36)"`
				Snapshot   string    `gorm:"type:text;not null"`
				CreatedAt  time.Time `gorm:"not null"`
			}
			type ExpertShare struct {
				ID            string    `gorm:"type:varchar(36);primaryKey"`
				ExpertID      string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_expert_shares_principal,priority:1"`
				Expert        Expert    `gorm:"constraint:OnDelete:CASCADE"`
				PrincipalType string    `gorm:"type:varchar(16);not null;uniqueIndex:idx_expert_shares_principal,priority:2;index:idx_expert_shares_lookup,priority:1"`
				Principal     string    `gorm:"type:varchar(320);not null;uniqueIndex:idx_expert_shares_principal,priority:3;index:idx_expert_shares_lookup,priority:2"`
				Role          string    `gorm:"type:varchar(16);not null"`
				CreatedBy     *string   `gorm:"type:varchar(36)"`
				CreatedAt     time.Time `gorm:"not null"`
				UpdatedAt     time.Time `gorm:"not null"`
			}
			type ExpertContextFile struct {
				ID           string    `gorm:"type:varchar(36);primaryKey"`
				ExpertID     string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_expert_context_files_name,priority:1"`
				Expert       Expert    `gorm:"constraint:OnDelete:CASCADE"`
				Name         string    `gorm:"type:varchar(512);not null;uniqueIndex:idx_expert_context_files_name,priority:2"`
				Content      []byte    `gorm:"not null"`
				MediaType    string    `gorm:"type:varchar(255);not null"`
				SizeBytes    int64     `gorm:"not null"`
				CharCount    int64     `gorm:"not null"`
				TextMirrored bool      `gorm:"not null"`
				InRepository bool      `gorm:"not null;default:false"`
				CreatedAt    time.Time `gorm:"not null"`
				UpdatedAt    time.Time `gorm:"not null"`
			}
			type TeamMember struct {
				TeamID    string    `gorm:"type:varchar(100);primaryKey"`
				AccountID string    `gorm:"type:varchar(36);primaryKey;index"`
				CreatedAt time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&Expert{}, &ExpertVersion{}, &ExpertShare{}, &ExpertContextFile{}, &TeamMember{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("team_members", "expert_context_files", "expert_shares", "expert_versions", "experts")
		},
	}}
}
