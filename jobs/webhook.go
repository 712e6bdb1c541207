package jobs

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/store"
)

// Webhook event names.
const (
	EventCompleted = "research.completed"
	EventFailed    = "research.failed"
)

// Webhook headers (ResearchWebhookPayload in openapi/v2.json; docs/api.md: Webhooks).
const (
	HeaderSignature = "X-Signature-SHA256"
	// HeaderSignatureV1 is the legacy-named signature header of jobs created through v1 (the API leaves
	// its name open; this one is ours): the same value as X-Signature-SHA256.
	HeaderSignatureV1       = "X-Service-Signature"
	HeaderRequestID         = "X-Request-ID"
	HeaderOriginalRequestID = "X-Service-Original-Request-ID"
	HeaderJobID             = "X-Service-Job-ID"
)

// WebhookBody is the JSON a webhook posts.
type WebhookBody struct {
	Event            string      `json:"event"`
	JobID            string      `json:"job_id"`
	Status           string      `json:"status"`
	Report           *reportBody `json:"report"`
	StructuredOutput any         `json:"structured_output,omitempty"`
	// Citations and StructuredOutputBasis: what citation verification found (completed runs).
	Citations             *Citations `json:"citations,omitempty"`
	StructuredOutputBasis any        `json:"structured_output_basis,omitempty"`
}

type reportBody struct {
	Markdown    string `json:"markdown"`
	RevisionSHA string `json:"revision_sha"`
}

// webhookArgs is the queue entry of one round of one webhook. The body, URL and signing key live
// on the WebhookMessage, so every attempt of every round posts (and signs) the same bytes.
type webhookArgs struct {
	MessageID string `json:"message_id,omitempty"`
	Round     int    `json:"round,omitempty"`
	JobID     string `json:"job_id"`
	RunID     string `json:"run_id"`
	Event     string `json:"event"`
	// URL and Body are set only on entries queued before messages existed (see messageOf).
	URL  string          `json:"url,omitempty"`
	Body json.RawMessage `json:"body,omitempty"`
}

func (webhookArgs) Kind() string { return "research_webhook" }

// Sign is base64(HMAC-SHA256(key, body)): the X-Signature-SHA256 header (and the v1 signature header).
func Sign(key string, body []byte) string {
	return base64.StdEncoding.EncodeToString(mac(key, body))
}

// VerifySignature checks a X-Signature-SHA256 value in constant time (for receivers and tests).
func VerifySignature(key string, body []byte, signature string) bool {
	want, err := base64.StdEncoding.DecodeString(signature)
	return err == nil && hmac.Equal(mac(key, body), want)
}

func mac(key string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return m.Sum(nil)
}

// enqueueWebhook records the webhook of a finished run and queues its first round, in the caller's
// transaction (no-op without a webhook_url). The job's sealed API key moves to the message, which
// deletes it once the round is final.
func (s *Service) enqueueWebhook(ctx context.Context, tx *store.Store, j store.ResearchJob, runID, event, status string, report *reportBody, structured any,
	opts ...func(*WebhookBody)) error {
	if j.WebhookURL == nil {
		return nil
	}
	wb := WebhookBody{Event: event, JobID: j.ID, Status: status, Report: report, StructuredOutput: structured}
	for _, o := range opts {
		o(&wb)
	}
	body, err := json.Marshal(wb)
	if err != nil {
		return fmt.Errorf("encode webhook: %w", err)
	}
	cur, err := tx.ResearchJobByID(ctx, j.ID) // the key and version as this transaction sees them
	if err != nil {
		return err
	}
	m := store.WebhookMessage{
		ID: uuid.NewString(), JobID: j.ID, AccountID: j.AccountID, RunID: runID, Event: event, URL: *j.WebhookURL,
		Body: string(body), APIVersion: apiVersion(cur), RequestID: cur.RequestID, KeySealed: cur.WebhookKeySealed,
		Round: 1, State: store.WebhookPending,
	}
	if err := tx.CreateWebhookMessage(ctx, &m); err != nil {
		return err
	}
	if cur.WebhookKeySealed != nil {
		if err := tx.DropWebhookKey(ctx, j.ID); err != nil {
			return err
		}
	}
	return s.enqueueRound(ctx, tx, m, 1)
}

// enqueueRound queues one round of a message's attempts in the caller's transaction. River's own
// retries only cover a process dying mid-round; the attempts and their backoff are counted by the
// worker from the recorded deliveries.
func (s *Service) enqueueRound(ctx context.Context, tx *store.Store, m store.WebhookMessage, round int) error {
	_, err := s.queue.EnqueueTx(ctx, tx, webhookArgs{MessageID: m.ID, Round: round, JobID: m.JobID, RunID: m.RunID, Event: m.Event},
		&river.InsertOpts{Queue: QueueWebhooks, MaxAttempts: 5})
	return err
}

func apiVersion(j store.ResearchJob) string {
	if j.APIVersion == store.APIv1 {
		return store.APIv1
	}
	return store.APIv2
}

type webhookWorker struct {
	river.WorkerDefaults[webhookArgs]
	svc *Service
}

func (w *webhookWorker) Timeout(*river.Job[webhookArgs]) time.Duration {
	return w.svc.cfg.WebhookBudget + w.svc.cfg.WebhookTimeout
}

func (w *webhookWorker) NextRetry(*river.Job[webhookArgs]) time.Time {
	return time.Now().Add(time.Second)
}

// Work makes one round of a webhook's attempts: at the schedule's offsets from the round's first
// attempt (0 s, ~2 s, ~8 s), each bounded by the per-attempt timeout and all inside the budget; any
// 2xx ends it, and it is dropped after the last attempt. Every attempt is recorded before the next
// starts, so a process that dies mid-round is resumed by River without exceeding the attempt count
// or the budget. The round's end is recorded on the message, which deletes its sealed API key.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[webhookArgs]) error {
	s := w.svc
	m, err := s.messageOf(ctx, job.Args)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.Round != max(job.Args.Round, 1) || m.State != store.WebhookPending {
		return nil // this round already ended
	}
	log := s.log.With("job_id", m.JobID, "run_id", m.RunID, "event", m.Event, "webhook_id", m.ID, "round", m.Round)
	prior, err := s.st.DeliveriesFor(ctx, m.RunID, m.Event, m.Round)
	if err != nil {
		return err
	}
	for _, d := range prior {
		if d.Succeeded {
			return s.finishRound(ctx, m, store.WebhookDelivered)
		}
	}
	key := ""
	if m.KeySealed != nil {
		if key, err = s.sealer.Open(*m.KeySealed, m.JobID); err != nil {
			log.Error("webhook dropped: its signing key cannot be opened (server secret changed?)", "error", err)
			return s.finishRound(ctx, m, store.WebhookFailed)
		}
	}
	start := s.now()
	if len(prior) > 0 {
		start = prior[0].CreatedAt
	}
	deadline := start.Add(s.cfg.WebhookBudget)
	for attempt := len(prior) + 1; attempt <= len(s.cfg.WebhookSchedule); attempt++ {
		at := start.Add(s.cfg.WebhookSchedule[attempt-1])
		if wait := at.Sub(s.now()); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		now := s.now()
		if !now.Before(deadline) {
			break
		}
		if key != "" {
			// Checked before every attempt, so a key revoked during the round signs nothing more.
			usable, err := s.st.APIKeyUsable(ctx, auth.HashKey(key))
			if err != nil {
				return err
			}
			if !usable {
				return s.notSent(ctx, m, attempt, now, reasonKeyRevoked)
			}
		}
		// A duration, not a deadline: the service's clock may be a test's fake one.
		attemptCtx, cancel := context.WithTimeout(ctx, min(s.cfg.WebhookTimeout, deadline.Sub(now)))
		d := s.deliver(attemptCtx, m, key, attempt, now)
		cancel()
		if ctx.Err() != nil && !d.Succeeded {
			return ctx.Err() // shutting down: not a real attempt; retried on the next start
		}
		d.CreatedAt = now
		if err := s.st.RecordDelivery(context.WithoutCancel(ctx), &d); err != nil {
			return err
		}
		if d.Succeeded {
			log.Info("webhook delivered", "attempt", attempt, "status", *d.StatusCode)
			return s.finishRound(ctx, m, store.WebhookDelivered)
		}
		log.Warn("webhook attempt failed", "attempt", attempt, "status", d.StatusCode, "error", d.Error)
	}
	log.Warn("webhook dropped after its last attempt")
	return s.finishRound(ctx, m, store.WebhookFailed)
}

// reasonKeyRevoked is the recorded reason of an attempt not made because its signing key was revoked.
const reasonKeyRevoked = "not sent: the API key that signs this job's webhooks was revoked; redeliver it (POST /api/v2/research/{job_id}/webhooks/redeliver) to sign it with a live key"

// notSent records an attempt that was not made (no request went out: no status, no latency) with
// its reason, and ends the round as failed. A webhook is never signed with a revoked key: its
// receiver must be able to stop trusting that key, and a redelivery signs with the redelivering key.
func (s *Service) notSent(ctx context.Context, m store.WebhookMessage, attempt int, now time.Time, reason string) error {
	d := newDelivery(m, attempt)
	d.Error, d.CreatedAt = ptr(reason), now
	if err := s.st.RecordDelivery(context.WithoutCancel(ctx), &d); err != nil {
		return err
	}
	s.log.Warn("webhook not sent", "job_id", m.JobID, "webhook_id", m.ID, "round", m.Round, "reason", reason)
	return s.finishRound(ctx, m, store.WebhookFailed)
}

// newDelivery is the record of one attempt of m, before its outcome.
func newDelivery(m store.WebhookMessage, attempt int) store.WebhookDelivery {
	return store.WebhookDelivery{JobID: m.JobID, RunID: m.RunID, Event: m.Event, Attempt: attempt, Round: m.Round, MessageID: &m.ID,
		RequestID: uuid.NewString(), URL: m.URL}
}

// finishRound records the end of the message's round and deletes its sealed key.
func (s *Service) finishRound(ctx context.Context, m store.WebhookMessage, state string) error {
	_, err := s.st.FinishWebhookRound(context.WithoutCancel(ctx), m.ID, m.Round, state)
	return err
}

// messageOf loads the message of a queue entry. An entry queued before messages existed carries
// its body and URL: it is adopted as round 1 of a new message, which takes over the job's key.
func (s *Service) messageOf(ctx context.Context, a webhookArgs) (store.WebhookMessage, error) {
	if a.MessageID != "" {
		return s.st.WebhookMessageByID(ctx, a.MessageID)
	}
	m, err := s.st.WebhookMessageFor(ctx, a.RunID, a.Event)
	if !errors.Is(err, store.ErrNotFound) {
		return m, err
	}
	j, err := s.st.ResearchJobByID(ctx, a.JobID)
	if err != nil {
		return m, err
	}
	m = store.WebhookMessage{
		ID: uuid.NewString(), JobID: j.ID, AccountID: j.AccountID, RunID: a.RunID, Event: a.Event, URL: a.URL, Body: string(a.Body),
		APIVersion: apiVersion(j), RequestID: j.RequestID, KeySealed: j.WebhookKeySealed, Round: 1, State: store.WebhookPending,
	}
	if err := s.st.CreateWebhookMessage(ctx, &m); errors.Is(err, store.ErrConflict) {
		return s.st.WebhookMessageFor(ctx, a.RunID, a.Event)
	} else if err != nil {
		return m, err
	}
	return m, nil
}

// deliver makes one POST and describes it as a delivery record. The headers follow the API version
// the job was created through (docs/api.md: Webhooks): v2 signs with X-Signature-SHA256 and adds the correlation
// headers, v1 signs with its legacy header and correlates by the body's job_id alone. Both carry
// the Standard Webhooks headers when the account has a webhook secret.
func (s *Service) deliver(ctx context.Context, m store.WebhookMessage, key string, attempt int, now time.Time) store.WebhookDelivery {
	d := newDelivery(m, attempt)
	reqID := d.RequestID
	began := time.Now()
	body := []byte(m.Body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(body))
	if err != nil {
		d.Error = ptr(err.Error())
		d.DurationMS = time.Since(began).Milliseconds()
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "researchd-webhooks/2")
	if m.APIVersion == store.APIv1 {
		if key != "" {
			req.Header.Set(HeaderSignatureV1, Sign(key, body))
		}
	} else {
		if key != "" {
			req.Header.Set(HeaderSignature, Sign(key, body))
		}
		origReqID := ""
		if m.RequestID != nil {
			origReqID = *m.RequestID
		}
		req.Header.Set(HeaderRequestID, reqID)
		req.Header.Set(HeaderOriginalRequestID, origReqID)
		req.Header.Set(HeaderJobID, m.JobID)
	}
	s.signStandard(ctx, req.Header, m, body, now)
	resp, err := s.webhooks.Do(req)
	d.DurationMS = time.Since(began).Milliseconds()
	if err != nil {
		d.Error = ptr(err.Error())
		return d
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	d.StatusCode = &resp.StatusCode
	d.Succeeded = resp.StatusCode >= 200 && resp.StatusCode < 300
	d.DurationMS = time.Since(began).Milliseconds()
	return d
}
