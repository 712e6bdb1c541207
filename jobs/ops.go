package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/uuid"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/schema"
	"github.com/researchd/researchd/store"
)

// Refusals of the state machine (bad input is a fault.InvalidInput naming the field).
var (
	// ErrNotContinuable: continue on a job that is not completed (or is locked).
	ErrNotContinuable = &fault.Error{Kind: fault.Conflict, Code: "job_not_continuable", Msg: "job not continuable"}
	// ErrLocked: update of a job locked by moderation.
	ErrLocked = &fault.Error{Kind: fault.Conflict, Code: "job_locked", Msg: "job locked"}
)

// CreditsError is how much a refused create or continue needed; the refusal (NoCredits) is a
// fault.PaymentRequired made of it.
type CreditsError struct {
	Effort string
	Needs  int64
}

func (e *CreditsError) Error() string {
	return fmt.Sprintf("effort %s needs %d credits, more than the balance holds", e.Effort, e.Needs)
}

func (e *CreditsError) Unwrap() error { return billing.ErrInsufficientCredits }

// CreateRequest is a validated POST /research body plus who sent it.
type CreateRequest struct {
	// ID is the new job's id; empty: a fresh UUID. An A2A task passes its task id, so the task and
	// the job share one id.
	ID        string
	AccountID string
	Tier      string
	// APIKey is the caller's key: it signs this job's webhooks (sealed at rest, see Sealer).
	APIKey        string
	Question      string
	Effort        string // requested; "" means medium
	JSONSchema    map[string]any
	WebhookURL    *string
	ExpertID      *string
	AttachmentIDs []string
	IsPublic      bool
	// IdempotencyKey and RequestHash (a hash of the body) make retried creates safe.
	IdempotencyKey string
	RequestHash    string
	// RequestID is the X-Request-ID of the POST, echoed in webhook headers.
	RequestID string
	// APIVersion is the surface the job is created through: store.APIv1 signs its webhooks with the
	// legacy header (docs/api.md: Webhooks); "" is store.APIv2.
	APIVersion string
	// Background puts the run on the background queue (batch rows, bulk work): its own workers, so
	// a deep backlog there never delays jobs created through the API. Continuations always run on
	// the API queue.
	Background bool
}

// RequestEcho is the stored echo of a create body with defaults applied.
type RequestEcho struct {
	Question      string         `json:"question"`
	Effort        string         `json:"effort"`
	JSONSchema    map[string]any `json:"json_schema"`
	WebhookURL    *string        `json:"webhook_url"`
	ExpertID      *string        `json:"expert_id"`
	AttachmentIDs []string       `json:"attachment_ids"`
	IsPublic      bool           `json:"is_public"`
}

// Created is the outcome of Create: a new job or, for a replayed idempotency key, the original job
// as it stands now (Replayed).
type Created struct {
	Job      store.ResearchJob
	Replayed bool
}

// Create validates and accepts a job: the job row, its idempotency record, the hold on the run's
// price and its queue entry commit in one transaction. The hold is what makes concurrent creates
// beyond the balance answer 402 at once; the charge at dispatch consumes it.
func (s *Service) Create(ctx context.Context, r CreateRequest) (Created, error) {
	k := idempotency.Key{AccountID: r.AccountID, Key: r.IdempotencyKey, RequestHash: r.RequestHash, StatusCode: 202, Now: s.now()}
	c, _, err := idempotency.Create(ctx, s.st, k, r, s.replay, s.create)
	return c, err
}

func (s *Service) create(ctx context.Context, r CreateRequest, claim idempotency.Claim) (Created, error) {
	p, err := s.Prepare(ctx, r)
	if err != nil {
		return Created{}, err
	}
	var job store.ResearchJob
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, p.job.ID); err != nil {
			return err
		}
		job, err = s.Insert(ctx, tx, p)
		return err
	})
	if err != nil {
		return Created{}, err
	}
	// The job as accepted: a re-read could already show a worker's claim (in_progress).
	return Created{Job: job}, nil
}

// Prepared is a checked create, ready to be inserted (Insert) in a transaction.
type Prepared struct {
	job        store.ResearchJob
	accepted   store.ResearchEvent // its first timeline event
	runID      string
	effort     string
	background bool
}

// Prepare checks a create and builds its job row, reading what it needs before any transaction
// (SQLite has one connection: a read from inside one would wait for itself). Batches prepare a
// row's job, then insert it in the transaction that claims the row.
func (s *Service) Prepare(ctx context.Context, r CreateRequest) (Prepared, error) {
	// The expert comes first: its default effort applies when the caller names none.
	var ex *Expert
	if r.ExpertID != nil {
		if s.experts == nil {
			return Prepared{}, fmt.Errorf("expert %q: %w", *r.ExpertID, ErrExpertNotFound)
		}
		e, err := s.experts.Resolve(ctx, r.AccountID, *r.ExpertID)
		if err != nil {
			return Prepared{}, err
		}
		ex = &e
	}
	requested := r.Effort
	if requested == "" && ex != nil {
		requested = ex.DefaultEffort
	}
	if requested == "" {
		requested = billing.EffortMedium
	}
	if !billing.KnownEffort(requested) {
		return Prepared{}, fault.InvalidInput(fault.Field{Field: "effort", Message: "unknown effort " + requested})
	}
	effort := s.billing.Config().Clamp(r.Tier, requested)
	if r.JSONSchema != nil {
		if err := CheckSchema(r.JSONSchema); err != nil {
			return Prepared{}, fault.InvalidInput(fault.Field{Field: "json_schema", Message: err.Error()})
		}
	}
	if r.WebhookURL != nil {
		if err := s.CheckWebhookURL(*r.WebhookURL); err != nil {
			return Prepared{}, fault.InvalidInput(fault.Field{Field: "webhook_url", Message: err.Error()})
		}
	}
	if len(r.AttachmentIDs) > 0 {
		if s.attachments == nil {
			return Prepared{}, unusable(&UnusableAttachmentError{Index: 0, ID: r.AttachmentIDs[0], Reason: "attachments are not available on this server"})
		}
		if _, err := s.attachments.FilesForJob(ctx, r.AccountID, r.AttachmentIDs); err != nil {
			return Prepared{}, err
		}
	}
	if err := s.affordable(ctx, r.AccountID, effort); err != nil {
		return Prepared{}, err
	}

	id := r.ID
	if id == "" {
		id = uuid.NewString()
	}
	runID := uuid.NewString()
	attIDs := r.AttachmentIDs
	if attIDs == nil {
		attIDs = []string{}
	}
	echo, err := json.Marshal(RequestEcho{
		Question: r.Question, Effort: requested, JSONSchema: r.JSONSchema, WebhookURL: r.WebhookURL,
		ExpertID: r.ExpertID, AttachmentIDs: attIDs, IsPublic: r.IsPublic,
	})
	if err != nil {
		return Prepared{}, fmt.Errorf("encode request echo: %w", err)
	}
	attJSON, _ := json.Marshal(attIDs)
	job := store.ResearchJob{
		ID: id, AccountID: r.AccountID, Status: Queued, Question: r.Question,
		Effort: effort, RequestedEffort: requested, WebhookURL: r.WebhookURL, ExpertID: r.ExpertID,
		AttachmentIDs: string(attJSON), IsPublic: r.IsPublic, Request: string(echo), CurrentRunID: &runID,
		APIVersion: store.APIv2,
	}
	if r.APIVersion == store.APIv1 {
		job.APIVersion = store.APIv1
	}
	if ex != nil {
		// The version is the one current at create; the run records the one it actually used.
		job.ExpertRef, job.ExpertVersion = &ex.ID, ex.Version
	}
	if r.JSONSchema != nil {
		b, err := json.Marshal(r.JSONSchema)
		if err != nil {
			return Prepared{}, fmt.Errorf("encode json_schema: %w", err)
		}
		job.JSONSchema = ptr(string(b))
	}
	if r.RequestID != "" {
		job.RequestID = &r.RequestID
	}
	if r.WebhookURL != nil && r.APIKey != "" {
		sealed, err := s.sealer.Seal(r.APIKey, id)
		if err != nil {
			return Prepared{}, err
		}
		job.WebhookKeySealed = &sealed
	}

	accepted, err := statusRow(id, Queued, acceptedMsg, nil)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{job: job, accepted: accepted, runID: runID, effort: effort, background: r.Background}, nil
}

// Insert writes a prepared job in tx: the hold on the run's price, its queue entry, the job row and
// its first timeline event.
func (s *Service) Insert(ctx context.Context, tx *store.Store, p Prepared) (store.ResearchJob, error) {
	job, accepted := p.job, p.accepted
	if err := s.hold(ctx, tx, job.AccountID, job.ID, p.runID, p.effort); err != nil {
		return job, err
	}
	res, err := s.enqueueRun(ctx, tx, job.AccountID, runArgs{JobID: job.ID, RunID: p.runID, RunKind: RunInitial, Effort: p.effort}, p.background)
	if err != nil {
		return job, err
	}
	job.RiverJobID = &res.Job.ID
	// The job's first timeline event goes in with its row (no counter update).
	if err := s.insertWithSlug(ctx, tx, &job, &accepted); err != nil {
		return job, err
	}
	s.logStatus(tx, job.ID, Queued, acceptedMsg)
	return job, nil
}

// acceptedMsg is the content of a new job's first status event.
const acceptedMsg = "The job was accepted and is waiting for a worker."

// insertWithSlug inserts the job and its first event, lengthening the slug's id suffix while it
// collides.
func (s *Service) insertWithSlug(ctx context.Context, tx *store.Store, j *store.ResearchJob, first *store.ResearchEvent) error {
	var err error
	for _, n := range []int{6, 8, 12, 32} {
		j.Slug = Slug(j.Question, j.ID, n)
		if err = tx.CreateResearchJob(ctx, j, first); !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return err
}

// replay answers a create whose Idempotency-Key was seen: the job as it stands now.
func (s *Service) replay(ctx context.Context, k store.IdempotencyKey) (Created, error) {
	j, err := s.st.ResearchJobByID(ctx, k.JobID)
	if err != nil {
		return Created{}, err
	}
	return Created{Job: j, Replayed: true}, nil
}

// hold reserves a run's price in tx; a shortfall is NoCredits.
func (s *Service) hold(ctx context.Context, tx *store.Store, accountID, jobID, runID, effort string) error {
	err := s.billing.HoldRun(ctx, tx, billing.Run{AccountID: accountID, JobID: jobID, RunID: runID, Effort: effort})
	if errors.Is(err, billing.ErrInsufficientCredits) {
		return NoCredits(effort, s.billing.Config().Credits(effort), quotaHint)
	}
	return err
}

// affordable is a cheap early refusal before a create's work; the hold in its transaction decides.
func (s *Service) affordable(ctx context.Context, accountID, effort string) error {
	ok, err := s.billing.CanAfford(ctx, accountID, effort)
	if err != nil {
		return err
	}
	if !ok {
		return NoCredits(effort, s.billing.Config().Credits(effort), quotaHint)
	}
	return nil
}

// CheckSchema compiles a json_schema (draft 2020-12 unless it says otherwise; no external $ref
// resolves) and requires it to describe an object, since structured output is one.
func CheckSchema(doc map[string]any) error {
	_, err := schema.CompileObject(doc)
	return err
}

// CheckWebhookURL applies the environment's webhook rules to a URL at create time (production:
// https, no literal private or loopback hosts). Names are checked again against the resolved
// address when delivering.
func (s *Service) CheckWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if err := netguard.CheckURL(s.WebhookPolicy(), u); err != nil {
		return err
	}
	return nil
}

// Cancel moves a queued, in-progress or paused job to cancelled and marks its running run
// interrupted; a terminal job is left as it is. It returns the job as it stands after the call.
func (s *Service) Cancel(ctx context.Context, jobID string) (store.ResearchJob, error) {
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		j, err := tx.ResearchJobByID(ctx, jobID)
		if err != nil {
			return err
		}
		ok, err := tx.CancelResearchJob(ctx, statuses, jobID, s.now())
		if err != nil || !ok {
			return err
		}
		if err := s.statusEvent(ctx, tx, jobID, Cancelled, "The job was cancelled.", nil); err != nil {
			return err
		}
		if err := s.queue.JobSettled(ctx, tx, jobID, Cancelled, ""); err != nil {
			return err
		}
		if j.CurrentRunID != nil {
			// A run cancelled before dispatch costs nothing: its hold goes back to the balance.
			if err := s.billing.ReleaseRun(ctx, tx, *j.CurrentRunID); err != nil {
				return err
			}
		}
		if j.RiverJobID != nil {
			// A queued entry is cancelled outright; a running one is stopped by the worker's own
			// cancellation check.
			if err := s.queue.CancelTx(ctx, tx, *j.RiverJobID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.ResearchJob{}, err
	}
	return s.st.ResearchJobByID(ctx, jobID)
}

// Continue starts a continuation run of a completed job in place: same id and slug, status back to
// queued, a new run charged at the job's effort clamped to the account's current tier. apiKey, when
// set, becomes the key that signs this run's webhook. It returns the job as accepted (read in the
// same transaction, before any worker can take it).
func (s *Service) Continue(ctx context.Context, jobID, tier, apiKey string) (store.JobView, error) {
	var v store.JobView
	j, err := s.st.ResearchJobByID(ctx, jobID)
	if err != nil {
		return v, err
	}
	if j.Locked || j.Status != Completed {
		why := "this job is " + j.Status
		if j.Locked {
			why = "this job is locked"
		}
		return v, fmt.Errorf("%w: only a completed, unlocked job can be continued; %s", ErrNotContinuable, why)
	}
	if err := s.checkExpertTier(ctx, j); err != nil {
		return v, err
	}
	effort := s.billing.Config().Clamp(tier, j.Effort)
	if err := s.affordable(ctx, j.AccountID, effort); err != nil {
		return v, err
	}
	runID := uuid.NewString()
	next := store.Continuation{RunID: runID, Effort: effort}
	if apiKey != "" && j.WebhookURL != nil {
		sealed, err := s.sealer.Seal(apiKey, j.ID)
		if err != nil {
			return v, err
		}
		next.WebhookKeySealed = &sealed
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := s.hold(ctx, tx, j.AccountID, j.ID, runID, effort); err != nil {
			return err
		}
		res, err := s.enqueueRun(ctx, tx, j.AccountID, runArgs{JobID: j.ID, RunID: runID, RunKind: RunContinuation, Effort: effort}, false)
		if err != nil {
			return err
		}
		next.RiverJobID = res.Job.ID
		ok, err := tx.ContinueResearchJob(ctx, statuses, j.ID, next)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: the job changed state meanwhile", ErrNotContinuable)
		}
		if err := s.statusEvent(ctx, tx, j.ID, Queued, "A continuation was requested; the job is waiting for a worker.",
			map[string]any{"status": Queued, "run_id": runID, "kind": RunContinuation}); err != nil {
			return err
		}
		v, err = tx.ResearchJobView(ctx, j.ID)
		return err
	})
	return v, err
}

// Update changes the caller-settable fields of a job (PATCH); a locked job refuses with ErrLocked.
// It returns the job as updated.
func (s *Service) Update(ctx context.Context, jobID string, set Settings) (store.JobView, error) {
	var v store.JobView
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		j, err := tx.ResearchJobByID(ctx, jobID)
		if err != nil {
			return err
		}
		if j.Locked {
			return fmt.Errorf("%w: a job locked by moderation cannot be changed", ErrLocked)
		}
		if err = tx.ChangeJobSettings(ctx, jobID, set); err != nil {
			return err
		}
		v, err = tx.ResearchJobView(ctx, jobID)
		return err
	})
	return v, err
}

// statusEvent appends a status timeline event.
func (s *Service) statusEvent(ctx context.Context, tx *store.Store, jobID, status, content string, data map[string]any) error {
	ev, err := statusRow(jobID, status, content, data)
	if err != nil {
		return err
	}
	if err := tx.AppendEvent(ctx, &ev); err != nil {
		return err
	}
	s.logStatus(tx, jobID, status, content)
	return nil
}

// statusRow is the row of a status timeline event (data nil: the status alone).
func statusRow(jobID, status, content string, data map[string]any) (store.ResearchEvent, error) {
	if data == nil {
		data = map[string]any{"status": status}
	}
	return eventRow(jobID, engine.Event{Kind: engine.KindStatus, Title: status, Content: content, Data: data})
}

// logStatus writes one log line per state change, once tx commits (the terminal's view of the jobs).
func (s *Service) logStatus(tx *store.Store, jobID, status, content string) {
	tx.AfterCommit(func() {
		attrs := []any{"job_id", jobID}
		if status == Failed {
			attrs = append(attrs, "detail", content)
		}
		s.log.Info("job "+status, attrs...)
	})
}

// eventRow is the sanitized row of a timeline event.
func eventRow(jobID string, e engine.Event) (store.ResearchEvent, error) {
	title, content, data := SanitizeEvent(e.Kind, e.Title, e.Content, e.Data)
	ev := store.ResearchEvent{JobID: jobID, Kind: e.Kind, Title: title, Content: content}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return ev, fmt.Errorf("encode event data: %w", err)
		}
		ev.Data = ptr(string(b))
	}
	return ev, nil
}
