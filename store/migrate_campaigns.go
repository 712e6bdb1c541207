package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// campaignMigrations are the schema steps of the campaigns area, in order. IDs are
// YYYYMMDDNNNN_campaigns_what.
func campaignMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202612010101_campaigns_core",
		Migrate: func(tx *gorm.DB) error {
			type Campaign struct {
				ID                string  `gorm:"type:varchar(36);primaryKey"`
				AccountID         string  `gorm:"type:varchar(36);not null;index:idx_campaigns_account_created,priority:1"`
				Name              string  `gorm:"type:varchar(200);not null"`
				Status            string  `gorm:"type:varchar(32);not null;index"`
				Revision          int     `gorm:"not null"`
				Objective         *string `gorm:"type:text"`
				Plan              string  `gorm:"type:text;not null"`
				MaxCredits        *int64
				ReviewDigest      string    `gorm:"type:varchar(64);not null"`
				ExpertID          *string   `gorm:"type:varchar(255)"`
				ExpertName        *string   `gorm:"type:varchar(255)"`
				Capabilities      string    `gorm:"type:text;not null"`
				Workforce         string    `gorm:"type:text;not null"`
				RecordsSupplied   int       `gorm:"not null;default:0"`
				RecordsAccepted   int       `gorm:"not null;default:0"`
				BlankDropped      int       `gorm:"not null;default:0"`
				DuplicatesDropped int       `gorm:"not null;default:0"`
				CreditsSpent      int64     `gorm:"not null;default:0"`
				CreditsReserved   int64     `gorm:"not null;default:0"`
				AttentionReason   *string   `gorm:"type:varchar(32)"`
				AttentionStage    *string   `gorm:"type:varchar(64)"`
				AttentionMessage  *string   `gorm:"type:text"`
				AttentionAction   *string   `gorm:"type:varchar(16)"`
				ApprovedKeyID     *string   `gorm:"type:varchar(36)"`
				CreatedAt         time.Time `gorm:"not null;index:idx_campaigns_account_created,priority:2"`
				UpdatedAt         time.Time `gorm:"not null"`
				ApprovedAt        *time.Time
				StartedAt         *time.Time
				FinishedAt        *time.Time
				StatusChangedAt   *time.Time
			}
			type CampaignStage struct {
				CampaignID      string  `gorm:"type:varchar(36);primaryKey"`
				Key             string  `gorm:"type:varchar(64);primaryKey"`
				Position        int     `gorm:"not null"`
				Status          string  `gorm:"type:varchar(16);not null"`
				Effort          *string `gorm:"type:varchar(16)"`
				RecordsTotal    int     `gorm:"not null;default:0"`
				RecordsDone     int     `gorm:"not null;default:0"`
				RecordsFailed   int     `gorm:"not null;default:0"`
				ChunksRunning   int     `gorm:"not null;default:0"`
				CreditsSpent    int64   `gorm:"not null;default:0"`
				CreditsReserved int64   `gorm:"not null;default:0"`
				GivenFields     *string `gorm:"type:text"`
				WorkerError     *string `gorm:"type:text"`
				StartedAt       *time.Time
				FinishedAt      *time.Time
			}
			type CampaignRecord struct {
				CampaignID string    `gorm:"type:varchar(36);primaryKey;index:idx_campaign_records_claim,priority:1"`
				StageKey   string    `gorm:"type:varchar(64);primaryKey;index:idx_campaign_records_claim,priority:2"`
				Seq        int       `gorm:"primaryKey;autoIncrement:false;index:idx_campaign_records_claim,priority:4"`
				EntityKey  string    `gorm:"type:text;not null"`
				Status     string    `gorm:"type:varchar(16);not null;index:idx_campaign_records_claim,priority:3"`
				Given      string    `gorm:"type:text;not null"`
				Output     *string   `gorm:"type:text"`
				Report     *string   `gorm:"type:text"`
				ErrorCode  *string   `gorm:"type:varchar(64)"`
				Chunk      *string   `gorm:"type:varchar(36);index"`
				Duplicate  bool      `gorm:"not null;default:false"`
				Attempts   int       `gorm:"not null;default:0"`
				UpdatedAt  time.Time `gorm:"not null"`
			}
			type CampaignArtifact struct {
				CampaignID     string    `gorm:"type:varchar(36);primaryKey"`
				DeliverableKey string    `gorm:"type:varchar(64);primaryKey"`
				Filename       string    `gorm:"type:varchar(255);not null"`
				MediaType      string    `gorm:"type:varchar(100);not null"`
				ByteSize       int64     `gorm:"not null"`
				SHA256         string    `gorm:"column:sha256;type:varchar(64);not null"`
				BlobKey        string    `gorm:"type:varchar(300);not null"`
				CreatedAt      time.Time `gorm:"not null"`
			}
			return tx.AutoMigrate(&Campaign{}, &CampaignStage{}, &CampaignRecord{}, &CampaignArtifact{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("campaign_artifacts", "campaign_records", "campaign_stages", "campaigns")
		},
	}}
}
