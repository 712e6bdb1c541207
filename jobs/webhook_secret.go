package jobs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Standard Webhooks headers (standardwebhooks.com): sent with every delivery, beside the
// specification's headers. webhook-id is the message id, the same on every attempt and redelivery
// of one webhook; webhook-timestamp is the attempt's time (Unix seconds); webhook-signature holds
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>" per valid account secret, space-separated.
const (
	HeaderWebhookID        = standardwebhooks.HeaderWebhookID
	HeaderWebhookTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderWebhookSignature = standardwebhooks.HeaderWebhookSignature
)

// webhookSecretPrefix marks a Standard Webhooks secret: "whsec_" + base64 of the key bytes.
const webhookSecretPrefix = "whsec_"

// MaxWebhookSecretGrace bounds how long a replaced secret may keep signing.
const MaxWebhookSecretGrace = 7 * 24 * time.Hour

// RotatedSecret is the outcome of a rotation: the new secret (shown once, never stored in the
// clear) and until when the secret it replaced still signs (nil: it no longer does).
type RotatedSecret struct {
	Secret            string
	CreatedAt         time.Time
	PreviousExpiresAt *time.Time
}

// RotateWebhookSecret gives the account a new webhook secret. The one it replaces keeps signing,
// beside the new one, for grace (0: not at all), so receivers can switch without rejecting a
// delivery; a secret that was still in its grace period stops at once. At most two secrets sign.
func (s *Service) RotateWebhookSecret(ctx context.Context, accountID string, grace time.Duration) (RotatedSecret, error) {
	if grace < 0 || grace > MaxWebhookSecretGrace {
		return RotatedSecret{}, fault.InvalidInput(fault.Field{Field: "grace_period_seconds", Message: fmt.Sprintf("must be between 0 and %d", int(MaxWebhookSecretGrace.Seconds()))})
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return RotatedSecret{}, fmt.Errorf("generate webhook secret: %w", err)
	}
	secret := webhookSecretPrefix + base64.StdEncoding.EncodeToString(raw)
	sealed, err := s.sealer.Seal(secret, secretContext(accountID))
	if err != nil {
		return RotatedSecret{}, err
	}
	// Two rotations at once: the second one's write finds a newer version and reads again.
	for try := 0; ; try++ {
		now := s.now()
		next := store.WebhookSecret{AccountID: accountID, CurrentSealed: sealed, CurrentCreatedAt: now, Version: 1}
		cur, err := s.st.WebhookSecretOf(ctx, accountID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return RotatedSecret{}, err
		default:
			next.Version = cur.Version + 1
			if grace > 0 {
				until := now.Add(grace)
				next.PreviousSealed, next.PreviousExpiresAt = &cur.CurrentSealed, &until
			}
		}
		err = s.st.PutWebhookSecret(ctx, next)
		if errors.Is(err, store.ErrConflict) && try < 5 {
			continue
		}
		if err != nil {
			return RotatedSecret{}, err
		}
		return RotatedSecret{Secret: secret, CreatedAt: now, PreviousExpiresAt: next.PreviousExpiresAt}, nil
	}
}

// secretContext binds a sealed webhook secret to its account.
func secretContext(accountID string) string { return "webhook-secret:" + accountID }

// signingSecrets opens the account's secrets that sign at now, newest first (none when it never
// made one).
func (s *Service) signingSecrets(ctx context.Context, accountID string, now time.Time) ([]string, error) {
	w, err := s.st.WebhookSecretOf(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sealed := []string{w.CurrentSealed}
	if w.PreviousSealed != nil && w.PreviousExpiresAt != nil && now.Before(*w.PreviousExpiresAt) {
		sealed = append(sealed, *w.PreviousSealed)
	}
	out := make([]string, 0, len(sealed))
	for _, v := range sealed {
		secret, err := s.sealer.Open(v, secretContext(accountID))
		if err != nil {
			return nil, fmt.Errorf("open webhook secret of %s (server secret changed?): %w", accountID, err)
		}
		out = append(out, secret)
	}
	return out, nil
}

// signStandard sets the Standard Webhooks headers of one attempt. Without a usable account secret
// the id and timestamp are still sent (receivers can dedupe on the id), the signature is not.
func (s *Service) signStandard(ctx context.Context, h http.Header, m store.WebhookMessage, body []byte, now time.Time) {
	h.Set(HeaderWebhookID, m.ID)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	secrets, err := s.signingSecrets(ctx, m.AccountID, now)
	if err != nil {
		s.log.Error("webhook sent without webhook-signature: the account's secret cannot be read; rotate it", "job_id", m.JobID, "error", err)
		return
	}
	if sig, err := StandardSignature(secrets, m.ID, now, body); err != nil {
		s.log.Error("webhook sent without webhook-signature", "job_id", m.JobID, "error", err)
	} else if sig != "" {
		h.Set(HeaderWebhookSignature, sig)
	}
}

// StandardSignature is the webhook-signature value for a message: one "v1,<signature>" per secret
// ("whsec_..."), space-separated; "" without secrets.
func StandardSignature(secrets []string, id string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return "", fmt.Errorf("webhook secret: %w", err)
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", fmt.Errorf("sign webhook: %w", err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}
