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

	"github.com/researchd/researchd/store"
)

// Webhook event names.
const (
	EventCompleted = "research.completed"
	EventFailed    = "research.failed"
)

// Webhook headers (spec 6.1).
const (
	HeaderSignature         = "X-Signature-SHA256"
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

// webhookArgs is the queue entry of one webhook: the body is fixed when the run ends, so every
// attempt posts (and signs) the same bytes.
type webhookArgs struct {
	JobID string          `json:"job_id"`
	RunID string          `json:"run_id"`
	Event string          `json:"event"`
	URL   string          `json:"url"`
	Body  json.RawMessage `json:"body"`
}

func (webhookArgs) Kind() string { return "research_webhook" }

// Sign is base64(HMAC-SHA256(key, body)): the X-Signature-SHA256 header.
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

// enqueueWebhook adds the webhook of a finished run to the caller's transaction (no-op without a
// webhook_url).
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
	t, err := sqlTx(tx)
	if err != nil {
		return err
	}
	// River's own retries only cover a process dying mid-delivery; the attempts and their backoff
	// are counted by the worker from the recorded deliveries.
	_, err = s.client.InsertTx(ctx, t, webhookArgs{JobID: j.ID, RunID: runID, Event: event, URL: *j.WebhookURL, Body: body},
		&river.InsertOpts{Queue: QueueWebhooks, MaxAttempts: 5})
	if err != nil {
		return fmt.Errorf("enqueue webhook: %w", err)
	}
	return nil
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

// Work makes the webhook's attempts: at the schedule's offsets from the first attempt (0 s, ~2 s,
// ~8 s), each bounded by the per-attempt timeout and all inside the budget; any 2xx ends it, and it
// is dropped after the last attempt. Every attempt is recorded before the next starts, so a process
// that dies mid-delivery is resumed by River without exceeding the attempt count or the budget.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[webhookArgs]) error {
	s, a := w.svc, job.Args
	log := s.log.With("job_id", a.JobID, "run_id", a.RunID, "event", a.Event)
	prior, err := s.st.DeliveriesFor(ctx, a.RunID, a.Event)
	if err != nil {
		return err
	}
	for _, d := range prior {
		if d.Succeeded {
			return nil
		}
	}
	j, err := s.st.ResearchJobByID(ctx, a.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	key := ""
	if j.WebhookKeySealed != nil {
		if key, err = s.sealer.Open(*j.WebhookKeySealed, j.ID); err != nil {
			log.Error("webhook dropped: its signing key cannot be opened (server secret changed?)", "error", err)
			return nil
		}
	}
	origReqID := ""
	if j.RequestID != nil {
		origReqID = *j.RequestID
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
		attemptCtx, cancel := context.WithDeadline(ctx, minTime(now.Add(s.cfg.WebhookTimeout), deadline))
		d := s.deliver(attemptCtx, a, key, origReqID, attempt)
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
			return nil
		}
		log.Warn("webhook attempt failed", "attempt", attempt, "status", d.StatusCode, "error", d.Error)
	}
	log.Warn("webhook dropped after its last attempt")
	return nil
}

// deliver makes one POST and describes it as a delivery record.
func (s *Service) deliver(ctx context.Context, a webhookArgs, key, origReqID string, attempt int) store.WebhookDelivery {
	reqID := uuid.NewString()
	d := store.WebhookDelivery{JobID: a.JobID, RunID: a.RunID, Event: a.Event, Attempt: attempt, RequestID: reqID, URL: a.URL}
	began := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		d.Error = ptr(err.Error())
		d.DurationMS = time.Since(began).Milliseconds()
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "researchd-webhooks/2")
	if key != "" {
		req.Header.Set(HeaderSignature, Sign(key, a.Body))
	}
	req.Header.Set(HeaderRequestID, reqID)
	req.Header.Set(HeaderOriginalRequestID, origReqID)
	req.Header.Set(HeaderJobID, a.JobID)
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

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
