package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"github.com/riverqueue/river/rivermigrate"
	"gorm.io/gorm"
)

// migrateQueue applies River's own migrations (river_job, river_leader, river_queue, ...).
func (s *Store) migrateQueue(ctx context.Context) error {
	driver, err := s.QueueDriver()
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("queue migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	return nil
}

// jobMigrations are the schema steps of the jobs area, in order. IDs are YYYYMMDDNNNN_jobs_what.
// River's own tables (river_job, river_leader, ...) are not here: Migrate applies River's
// migrations with rivermigrate (migrateQueue) right after these.
func jobMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611230001_jobs_research",
		Migrate: func(tx *gorm.DB) error {
			type ResearchJob struct {
				ID                  string  `gorm:"type:varchar(36);primaryKey"`
				AccountID           string  `gorm:"type:varchar(36);not null;index:idx_research_jobs_account_created,priority:1;index:idx_research_jobs_account_status_created,priority:1"`
				Slug                string  `gorm:"type:varchar(200);not null;uniqueIndex"`
				Status              string  `gorm:"type:varchar(16);not null;index:idx_research_jobs_account_status_created,priority:2;index:idx_research_jobs_status_updated,priority:1"`
				Question            string  `gorm:"type:text;not null"`
				Effort              string  `gorm:"type:varchar(16);not null"`
				RequestedEffort     string  `gorm:"type:varchar(16);not null"`
				JSONSchema          *string `gorm:"type:text"`
				WebhookURL          *string `gorm:"type:varchar(2048)"`
				ExpertID            *string `gorm:"type:varchar(255)"`
				AttachmentIDs       string  `gorm:"type:text;not null"`
				IsPublic            bool    `gorm:"not null;default:false"`
				Locked              bool    `gorm:"not null;default:false"`
				AnonymousCTAEnabled bool    `gorm:"not null;default:false"`
				AnonymousCTAVariant *string `gorm:"type:varchar(80)"`
				Request             string  `gorm:"type:text;not null"`
				StructuredOutput    *string `gorm:"type:text"`
				ReportSHA           *string `gorm:"type:varchar(40)"`
				ReportMarkdown      *string `gorm:"type:text"`
				ErrorCode           *string `gorm:"type:varchar(64)"`
				ErrorMessage        *string `gorm:"type:text"`
				RequestID           *string `gorm:"type:varchar(100)"`
				WebhookKeySealed    *string `gorm:"type:text"`
				CurrentRunID        *string `gorm:"type:varchar(36)"`
				RiverJobID          *int64
				EventSeq            int64     `gorm:"not null;default:0"`
				CreatedAt           time.Time `gorm:"not null;index:idx_research_jobs_account_created,priority:2;index:idx_research_jobs_account_status_created,priority:3"`
				UpdatedAt           time.Time `gorm:"not null;index:idx_research_jobs_status_updated,priority:2"`
				StartedAt           *time.Time
				CompletedAt         *time.Time
			}
			type ResearchRun struct {
				ID             string    `gorm:"type:varchar(36);primaryKey"`
				JobID          string    `gorm:"type:varchar(36);not null;index:idx_research_runs_job_started,priority:1"`
				Kind           string    `gorm:"type:varchar(16);not null"`
				Status         string    `gorm:"type:varchar(16);not null"`
				Effort         string    `gorm:"type:varchar(16);not null"`
				CreditsCharged int64     `gorm:"not null;default:0"`
				StartedAt      time.Time `gorm:"not null;index:idx_research_runs_job_started,priority:2"`
				FinishedAt     *time.Time
			}
			type ResearchRevision struct {
				JobID          string    `gorm:"type:varchar(36);primaryKey;index:idx_research_revisions_job_ordinal,unique,priority:1"`
				SHA            string    `gorm:"type:varchar(40);primaryKey"`
				Ordinal        int64     `gorm:"not null;index:idx_research_revisions_job_ordinal,unique,priority:2"`
				RunID          string    `gorm:"type:varchar(36);not null"`
				CheckpointType string    `gorm:"type:varchar(16);not null"`
				Message        string    `gorm:"type:text;not null"`
				CreatedAt      time.Time `gorm:"not null"`
			}
			type ResearchEvent struct {
				ID        string    `gorm:"type:varchar(36);primaryKey"`
				JobID     string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_research_events_job_seq,priority:1"`
				Seq       int64     `gorm:"not null;uniqueIndex:idx_research_events_job_seq,priority:2"`
				CreatedAt time.Time `gorm:"not null"`
				Kind      string    `gorm:"type:varchar(16);not null"`
				Title     string    `gorm:"type:text;not null"`
				Content   string    `gorm:"type:text;not null"`
				Data      *string   `gorm:"type:text"`
			}
			type IdempotencyKey struct {
				AccountID   string    `gorm:"type:varchar(36);primaryKey"`
				IdemKey     string    `gorm:"type:varchar(255);primaryKey"`
				RequestHash string    `gorm:"type:char(64);not null"`
				JobID       string    `gorm:"type:varchar(36);not null"`
				StatusCode  int       `gorm:"not null"`
				CreatedAt   time.Time `gorm:"not null;index"`
			}
			type WebhookDelivery struct {
				ID         string    `gorm:"type:varchar(36);primaryKey"`
				JobID      string    `gorm:"type:varchar(36);not null;index:idx_webhook_deliveries_job_created,priority:1"`
				RunID      string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_webhook_deliveries_run_event_attempt,priority:1"`
				Event      string    `gorm:"type:varchar(32);not null;uniqueIndex:idx_webhook_deliveries_run_event_attempt,priority:2"`
				Attempt    int       `gorm:"not null;uniqueIndex:idx_webhook_deliveries_run_event_attempt,priority:3"`
				RequestID  string    `gorm:"type:varchar(36);not null"`
				URL        string    `gorm:"type:varchar(2048);not null"`
				StatusCode *int      ``
				Error      *string   `gorm:"type:text"`
				DurationMS int64     `gorm:"not null"`
				Succeeded  bool      `gorm:"not null;default:false"`
				CreatedAt  time.Time `gorm:"not null;index:idx_webhook_deliveries_job_created,priority:2"`
			}
			return tx.AutoMigrate(&ResearchJob{}, &ResearchRun{}, &ResearchRevision{}, &ResearchEvent{}, &IdempotencyKey{}, &WebhookDelivery{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("webhook_deliveries", "idempotency_keys", "research_events",
				"research_revisions", "research_runs", "research_jobs")
		},
	}}
}
