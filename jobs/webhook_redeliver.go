package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/researchd/researchd/store"
)

var (
	// ErrNoWebhook: redelivery of a job that has sent no webhook (none registered, or no run has
	// finished). 409 no_webhook.
	ErrNoWebhook = errors.New("no webhook to redeliver")
	// ErrWebhookPending: redelivery while a round of the webhook is under way. 409
	// webhook_delivery_in_progress.
	ErrWebhookPending = errors.New("webhook delivery in progress")
)

// Redeliver starts a new round of the job's latest webhook: the same body and webhook-id, new
// attempts on the usual schedule, each recorded in the delivery log. apiKey, when set, signs
// X-Signature-SHA256 (the job's own key is deleted once its deliveries are final); it is sealed to
// the message until the round ends. It returns the message as the new round starts.
func (s *Service) Redeliver(ctx context.Context, jobID, apiKey string) (store.WebhookMessage, error) {
	m, err := s.st.LatestWebhookMessage(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return m, fmt.Errorf("%w: the job was created without webhook_url, or no run of it has finished", ErrNoWebhook)
	}
	if err != nil {
		return m, err
	}
	var sealed *string
	if apiKey != "" {
		v, err := s.sealer.Seal(apiKey, jobID)
		if err != nil {
			return m, err
		}
		sealed = &v
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		round, err := tx.StartWebhookRound(ctx, m.ID, sealed)
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("%w: wait for the current round of attempts to end", ErrWebhookPending)
		}
		if err != nil {
			return err
		}
		if err := s.enqueueRound(ctx, tx, m, round); err != nil {
			return err
		}
		m, err = tx.WebhookMessageByID(ctx, m.ID)
		return err
	})
	return m, err
}
