package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// API surfaces a job can be created through (ResearchJob.APIVersion).
const (
	APIv1 = "v1"
	APIv2 = "v2"
)

// Webhook message states: a round of attempts is under way, or the last round ended.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// WebhookMessage is one webhook: the event of one run, posted with the same body (and the same
// webhook-id) by every attempt of every round. Round 1 follows the run; each redelivery starts the
// next. KeySealed is the API key that signs X-Signature-SHA256, sealed to the job id; it is deleted
// when a round ends, so no key is kept once a job's deliveries are final.
type WebhookMessage struct {
	ID         string `gorm:"type:varchar(36);primaryKey"`
	JobID      string `gorm:"type:varchar(36);not null"`
	AccountID  string `gorm:"type:varchar(36);not null"`
	RunID      string `gorm:"type:varchar(36);not null"`
	Event      string `gorm:"type:varchar(32);not null"`
	URL        string `gorm:"type:varchar(2048);not null"`
	Body       string `gorm:"type:text;not null"`
	APIVersion string `gorm:"type:varchar(4);not null"`
	// RequestID is the X-Request-ID of the POST that created the job (X-Service-Original-Request-ID).
	RequestID *string `gorm:"type:varchar(100)"`
	KeySealed *string `gorm:"type:text"`
	Round     int     `gorm:"not null;default:1"`
	State     string  `gorm:"type:varchar(16);not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WebhookSecret is an account's Standard Webhooks signing secret, sealed to the account id, and the
// secret it replaced while that one's grace period lasts.
type WebhookSecret struct {
	AccountID         string `gorm:"type:varchar(36);primaryKey"`
	CurrentSealed     string `gorm:"type:text;not null"`
	CurrentCreatedAt  time.Time
	PreviousSealed    *string `gorm:"type:text"`
	PreviousExpiresAt *time.Time
	// Version increases with every rotation; a rotation applies only over the version it read.
	Version   int64 `gorm:"not null"`
	UpdatedAt time.Time
}

// CreateWebhookMessage inserts a message; a second message for the same run and event is ErrConflict.
func (s *Store) CreateWebhookMessage(ctx context.Context, m *WebhookMessage) error {
	err := s.with(ctx).Transaction(func(tx *gorm.DB) error { return tx.Create(m).Error })
	return notFound(err, "create webhook message")
}

// WebhookMessageByID loads a message.
func (s *Store) WebhookMessageByID(ctx context.Context, id string) (WebhookMessage, error) {
	var m WebhookMessage
	err := s.with(ctx).Where("id = ?", id).Take(&m).Error
	return m, notFound(err, "webhook message "+id)
}

// WebhookMessageFor loads the message of a run's event.
func (s *Store) WebhookMessageFor(ctx context.Context, runID, event string) (WebhookMessage, error) {
	var m WebhookMessage
	err := s.with(ctx).Where("run_id = ? AND event = ?", runID, event).Take(&m).Error
	return m, notFound(err, "webhook message of run "+runID)
}

// LatestWebhookMessage loads a job's newest message (the webhook of its latest finished run).
func (s *Store) LatestWebhookMessage(ctx context.Context, jobID string) (WebhookMessage, error) {
	var m WebhookMessage
	err := s.with(ctx).Where("job_id = ?", jobID).Order("created_at DESC, id DESC").Take(&m).Error
	return m, notFound(err, "webhook message of job "+jobID)
}

// StartWebhookRound moves a message whose last round ended to the next round, with keySealed (nil:
// none) as its signing key, and returns that round. A message with a round under way is
// ErrConflict: the conditional update makes concurrent redeliveries start one round.
func (s *Store) StartWebhookRound(ctx context.Context, id string, keySealed *string) (int, error) {
	res := s.with(ctx).Model(&WebhookMessage{}).Where("id = ? AND state <> ?", id, WebhookPending).
		Updates(map[string]any{"round": gorm.Expr("round + 1"), "state": WebhookPending, "key_sealed": keySealed, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return 0, fmt.Errorf("start webhook round of %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return 0, fmt.Errorf("webhook message %s has a round under way: %w", id, ErrConflict)
	}
	m, err := s.WebhookMessageByID(ctx, id)
	return m.Round, err
}

// FinishWebhookRound records how a round ended (WebhookDelivered or WebhookFailed) and deletes the
// message's sealed key. It reports false when the round is not the message's pending one (already
// finished by another process).
func (s *Store) FinishWebhookRound(ctx context.Context, id string, round int, state string) (bool, error) {
	res := s.with(ctx).Model(&WebhookMessage{}).Where("id = ? AND round = ? AND state = ?", id, round, WebhookPending).
		Updates(map[string]any{"state": state, "key_sealed": nil, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return false, fmt.Errorf("finish webhook round of %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ListDeliveries pages a job's recorded webhook attempts, newest first.
func (s *Store) ListDeliveries(ctx context.Context, jobID string, req PageRequest) (Page[WebhookDelivery], error) {
	q := s.with(ctx).Model(&WebhookDelivery{}).Where("job_id = ?", jobID)
	page, err := paginate(q, req, func(d WebhookDelivery) Cursor { return Cursor{CreatedAt: d.CreatedAt, ID: d.ID} })
	if err != nil {
		return page, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return page, nil
}

// WebhookSecretOf loads an account's signing secrets; ErrNotFound when it never made one.
func (s *Store) WebhookSecretOf(ctx context.Context, accountID string) (WebhookSecret, error) {
	var w WebhookSecret
	err := s.with(ctx).Where("account_id = ?", accountID).Take(&w).Error
	return w, notFound(err, "webhook secret of "+accountID)
}

// PutWebhookSecret stores w as the account's secrets: an insert when w.Version is 1, otherwise an
// update over the row at version w.Version-1. ErrConflict when another rotation came first.
func (s *Store) PutWebhookSecret(ctx context.Context, w WebhookSecret) error {
	w.UpdatedAt = s.db.NowFunc()
	if w.Version == 1 {
		err := s.with(ctx).Transaction(func(tx *gorm.DB) error { return tx.Create(&w).Error })
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return fmt.Errorf("webhook secret of %s: %w", w.AccountID, ErrConflict)
		}
		return notFound(err, "create webhook secret")
	}
	res := s.with(ctx).Model(&WebhookSecret{}).Where("account_id = ? AND version = ?", w.AccountID, w.Version-1).
		Updates(map[string]any{"current_sealed": w.CurrentSealed, "current_created_at": w.CurrentCreatedAt, "previous_sealed": w.PreviousSealed,
			"previous_expires_at": w.PreviousExpiresAt, "version": w.Version, "updated_at": w.UpdatedAt})
	if res.Error != nil {
		return fmt.Errorf("rotate webhook secret of %s: %w", w.AccountID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("webhook secret of %s changed meanwhile: %w", w.AccountID, ErrConflict)
	}
	return nil
}

// ForgetWebhookKeys deletes the sealed API keys no delivery can need any more, for the reaper: a
// round still pending since before t has outlived every retry of its queue entry, so it is failed
// (which deletes its key); a terminal job still holding a key since before t has no webhook to
// sign (keys move to the message when a run ends). It returns how many rows it changed.
func (s *Store) ForgetWebhookKeys(ctx context.Context, st JobStatuses, before time.Time) (int64, error) {
	now := s.db.NowFunc()
	res := s.with(ctx).Model(&WebhookMessage{}).Where("state = ? AND updated_at < ?", WebhookPending, before).
		Updates(map[string]any{"state": WebhookFailed, "key_sealed": nil, "updated_at": now})
	if res.Error != nil {
		return 0, fmt.Errorf("fail stale webhook rounds: %w", res.Error)
	}
	n := res.RowsAffected
	res = s.with(ctx).Model(&ResearchJob{}).
		Where("webhook_key_sealed IS NOT NULL AND status IN ? AND updated_at < ?", st.Terminal, before).
		UpdateColumn("webhook_key_sealed", nil)
	if res.Error != nil {
		return n, fmt.Errorf("forget webhook keys of finished jobs: %w", res.Error)
	}
	return n + res.RowsAffected, nil
}
