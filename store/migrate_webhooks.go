package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// webhookMigrations are the schema steps of webhook messages, redelivery rounds, per-account
// signing secrets and the API version a job was created through, in order.
func webhookMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611270301_webhook_messages_secrets",
		Migrate: func(tx *gorm.DB) error {
			// api_version is the surface a job was created through (v1 or v2): it picks the webhook's
			// signature header (docs/api.md: Webhooks).
			type ResearchJob struct {
				APIVersion string `gorm:"type:varchar(4);not null;default:v2"`
			}
			if err := tx.Migrator().AddColumn(&ResearchJob{}, "APIVersion"); err != nil {
				return err
			}
			// One row per webhook (a run's event): the body every attempt posts, and the sealed API
			// key that signs it until its deliveries are final.
			type WebhookMessage struct {
				ID         string    `gorm:"type:varchar(36);primaryKey"`
				JobID      string    `gorm:"type:varchar(36);not null;index:idx_webhook_messages_job_created,priority:1"`
				AccountID  string    `gorm:"type:varchar(36);not null"`
				RunID      string    `gorm:"type:varchar(36);not null;uniqueIndex:idx_webhook_messages_run_event,priority:1"`
				Event      string    `gorm:"type:varchar(32);not null;uniqueIndex:idx_webhook_messages_run_event,priority:2"`
				URL        string    `gorm:"type:varchar(2048);not null"`
				Body       string    `gorm:"type:text;not null"`
				APIVersion string    `gorm:"type:varchar(4);not null"`
				RequestID  *string   `gorm:"type:varchar(100)"`
				KeySealed  *string   `gorm:"type:text"`
				Round      int       `gorm:"not null;default:1"`
				State      string    `gorm:"type:varchar(16);not null"`
				CreatedAt  time.Time `gorm:"not null;index:idx_webhook_messages_job_created,priority:2"`
				UpdatedAt  time.Time `gorm:"not null"`
			}
			type WebhookSecret struct {
				AccountID         string    `gorm:"type:varchar(36);primaryKey"`
				CurrentSealed     string    `gorm:"type:text;not null"`
				CurrentCreatedAt  time.Time `gorm:"not null"`
				PreviousSealed    *string   `gorm:"type:text"`
				PreviousExpiresAt *time.Time
				Version           int64     `gorm:"not null"`
				UpdatedAt         time.Time `gorm:"not null"`
			}
			if err := tx.AutoMigrate(&WebhookMessage{}, &WebhookSecret{}); err != nil {
				return err
			}
			// A redelivery is a new round of attempts of the same webhook: attempts are unique per round.
			type WebhookDelivery struct {
				RunID     string  `gorm:"type:varchar(36);not null;uniqueIndex:idx_webhook_deliveries_run_event_round_attempt,priority:1"`
				Event     string  `gorm:"type:varchar(32);not null;uniqueIndex:idx_webhook_deliveries_run_event_round_attempt,priority:2"`
				Round     int     `gorm:"not null;default:1;uniqueIndex:idx_webhook_deliveries_run_event_round_attempt,priority:3"`
				Attempt   int     `gorm:"not null;uniqueIndex:idx_webhook_deliveries_run_event_round_attempt,priority:4"`
				MessageID *string `gorm:"type:varchar(36)"`
			}
			for _, col := range []string{"Round", "MessageID"} {
				if err := tx.Migrator().AddColumn(&WebhookDelivery{}, col); err != nil {
					return err
				}
			}
			if err := tx.Migrator().DropIndex(&WebhookDelivery{}, "idx_webhook_deliveries_run_event_attempt"); err != nil {
				return err
			}
			return tx.Migrator().CreateIndex(&WebhookDelivery{}, "idx_webhook_deliveries_run_event_round_attempt")
		},
		Rollback: func(tx *gorm.DB) error {
			if err := tx.Migrator().DropTable("webhook_secrets", "webhook_messages"); err != nil {
				return err
			}
			if err := tx.Exec("DROP INDEX IF EXISTS idx_webhook_deliveries_run_event_round_attempt").Error; err != nil {
				return err
			}
			if err := tx.Exec("CREATE UNIQUE INDEX idx_webhook_deliveries_run_event_attempt ON webhook_deliveries (run_id, event, attempt)").Error; err != nil {
				return err
			}
			for _, col := range []string{"message_id", "round"} {
				if err := tx.Migrator().DropColumn("webhook_deliveries", col); err != nil {
					return err
				}
			}
			return tx.Migrator().DropColumn("research_jobs", "api_version")
		},
	}}
}
