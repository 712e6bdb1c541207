// Package campaign runs campaigns (the /api/v2/campaigns operations): multi-stage plans over records, reviewed
// and approved by digest before anything runs. It owns the plan rules (normalization, the stage
// graph, the one-stage expansion), the review digest, the state machine (create, edit, approve,
// cancel, retry) and the executor.
//
// Scale shapes the executor: a campaign may have 100,000 records, so a record is a row of
// campaign_records, not a research job. Workers answer records in-process through the engine's
// Answerer (no workspace, no timeline), a chunk of records at a time. A stage never has more than
// its concurrency of chunks claimed; the chunks are the queue's window of work. Every change to a
// campaign's work happens with its row locked, in the transaction that claims or settles a chunk,
// so several processes never claim a record twice, exceed a stage's concurrency or spend past a
// budget.
package campaign

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"gocloud.dev/blob"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
)

// Queues: the dispatcher's (stage transitions, deliverable builds) and the workers' own, so a deep
// backlog of records never delays starting the next stage.
const (
	QueueDispatch = "campaigns"
	QueueWork     = "campaign_work"
)

// Attention reasons and next actions (CampaignAttention).
const (
	ReasonStageFailed     = "stage_failed"
	ReasonQuotaExhausted  = "quota_exhausted"
	ReasonBudgetExhausted = "budget_exhausted"
	ReasonKeyUnusable     = "key_unusable"

	ActionRetry      = "retry"
	ActionAddCredits = "add_credits"
	ActionCancel     = "cancel"
)

// Record error codes (PortfolioItem.error_code).
const (
	CodeOutputInvalid = "output_invalid"
	CodeTimedOut      = "timed_out"
	CodeEngineError   = "engine_error"
	CodeDispatchError = "dispatch_error"
	// CodeForbidden: the account's tier may not run the stage's agent (jobs.ExpertTierError).
	CodeForbidden = jobs.CodeForbidden
)

// Refusals of the state machine.
var (
	ErrNotFound            = fault.Missing("campaign")
	ErrStageNotFound       = fault.Missing("stage")
	ErrDeliverableNotFound = fault.Missing("deliverable")
	ErrNotEditable         = &fault.Error{Kind: fault.Conflict, Code: "campaign_not_editable", Msg: "campaign not editable", Detail: "only a draft campaign can be edited"}
	ErrRevisionConflict    = &fault.Error{Kind: fault.Conflict, Code: "revision_conflict", Msg: "revision conflict"}
	ErrNotDraft            = &fault.Error{Kind: fault.Conflict, Code: "campaign_not_draft", Msg: "campaign not draft", Detail: "only a draft campaign can be approved"}
	ErrDigestMismatch      = &fault.Error{Kind: fault.Conflict, Code: "digest_mismatch", Msg: "digest mismatch", Detail: "review_digest is not the campaign's current one: read the campaign again and review it"}
	ErrNotRetryable        = &fault.Error{Kind: fault.Conflict, Code: "campaign_not_retryable", Msg: "campaign not retryable"}
	ErrNotReady            = &fault.Error{Kind: fault.Conflict, Code: "deliverable_not_ready", Msg: "deliverable not ready"}
	// ErrInsufficientCredits is in the chain of noCredits, which says what the balance cannot cover.
	ErrInsufficientCredits = errors.New("insufficient credits for one worker")
)

// refuse is the refusal of a request for every invalid field of it (at least one), in order; it
// reads as the first.
func refuse(fields []fault.Field) *fault.Error {
	first := fields[0].Field + ": " + fields[0].Message
	return &fault.Error{Kind: fault.Invalid, Msg: first, Detail: first, Fields: fields}
}

func invalid(field, msg string) *fault.Error {
	return fault.InvalidInput(fault.Field{Field: field, Message: msg})
}

// noCredits refuses a create or retry the balance cannot pay for (ErrInsufficientCredits); why says
// what it cannot cover.
func noCredits(why string) error {
	msg := ErrInsufficientCredits.Error() + ": " + why
	return &fault.Error{Kind: fault.PaymentRequired, Msg: msg, Detail: msg + "; see GET /api/v2/quota", Err: ErrInsufficientCredits}
}

// Billing is what campaigns need from billing (*billing.Service).
type Billing interface {
	Config() billing.Config
	AvailableUnits(ctx context.Context, tx *store.Store, accountID, effort string) (int64, error)
	HoldUnits(ctx context.Context, tx *store.Store, u billing.Units) error
	SettleUnits(ctx context.Context, tx *store.Store, u billing.Units, succeeded int64) error
}

// Experts resolves the agents of stages (expert.Runner).
type Experts interface {
	Resolve(ctx context.Context, accountID, id string) (jobs.Expert, error)
}

// Limits are the campaign limits (GET /campaigns/limits).
type Limits struct {
	MaxRecordsPerStage int
	MaxSuppliedRecords int
	MaxAssignmentChars int
}

// Config tunes campaigns.
type Config struct {
	Limits Limits
	// Workers is how many chunks one process answers at once (RESEARCH_CAMPAIGN_WORKERS);
	// DispatchWorkers how many dispatcher jobs.
	Workers, DispatchWorkers int
	// ChunkSize is how many records one worker answers per queue entry.
	ChunkSize int
	// SweepInterval is how often the leader resumes campaigns paused for credits and restarts
	// any whose dispatch was lost.
	SweepInterval time.Duration
	// AnswerTimeout bounds one record's answer.
	AnswerTimeout time.Duration
	// Capabilities are what the engine's workers may use (shown for review).
	Capabilities []string
}

// DefaultConfig returns the production values.
func DefaultConfig() Config {
	return Config{
		Limits:  Limits{MaxRecordsPerStage: 100_000, MaxSuppliedRecords: 100_000, MaxAssignmentChars: 32_000},
		Workers: 2, DispatchWorkers: 2, ChunkSize: 100, SweepInterval: 10 * time.Second,
		AnswerTimeout: 5 * time.Minute, Capabilities: []string{"file_search"},
	}
}

// Deps are the collaborators of the service. Experts may be nil: then every agent id is unknown.
type Deps struct {
	Store    *store.Store
	Billing  Billing
	Experts  Experts
	Answerer engine.Answerer
	// Bucket stores built deliverables (RESEARCH_BLOB_URL).
	Bucket *blob.Bucket
	// Queue runs the executor (dispatch, chunks, deliverables, the sweep).
	Queue  *queue.Queue
	Logger *slog.Logger
	Now    func() time.Time
}

// Service manages campaigns.
type Service struct {
	st       *store.Store
	billing  Billing
	experts  Experts
	answerer engine.Answerer
	bucket   *blob.Bucket
	queue    *queue.Queue
	log      *slog.Logger
	now      func() time.Time
	cfg      Config
	sessions sessions // answer sessions shared by the chunks of a stage (sessions.go)
}

// New builds the service and registers its executor on the queue.
func New(d Deps, cfg Config) (*Service, error) {
	if d.Store == nil || d.Billing == nil || d.Answerer == nil || d.Bucket == nil || d.Queue == nil {
		return nil, errors.New("campaign: store, billing, answerer, bucket and queue are required")
	}
	if cfg.Workers < 1 || cfg.DispatchWorkers < 1 || cfg.ChunkSize < 1 || cfg.SweepInterval <= 0 || cfg.AnswerTimeout <= 0 {
		return nil, errors.New("campaign: workers, chunk size, sweep interval and answer timeout must be positive")
	}
	s := &Service{st: d.Store, billing: d.Billing, experts: d.Experts, answerer: d.Answerer, bucket: d.Bucket, queue: d.Queue, log: d.Logger, now: d.Now, cfg: cfg}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if err := s.register(); err != nil {
		return nil, err
	}
	return s, nil
}

// Limits returns the limits in force.
func (s *Service) Limits() Limits { return s.cfg.Limits }

// register puts the campaign queues, their workers and the periodic sweep on the queue.
func (s *Service) register() error {
	q := s.queue
	// At most one sweep waits at a time: a busy queue never piles them up.
	sweepOpts := &river.InsertOpts{Queue: QueueDispatch, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
	return errors.Join(
		q.AddQueue(QueueDispatch, s.cfg.DispatchWorkers),
		q.AddQueue(QueueWork, s.cfg.Workers),
		queue.AddWorker(q, &advanceWorker{svc: s}),
		queue.AddWorker(q, &chunkWorker{svc: s}),
		queue.AddWorker(q, &deliverWorker{svc: s}),
		queue.AddWorker(q, &sweepWorker{svc: s}),
		q.AddPeriodic(s.cfg.SweepInterval, sweepArgs{}, sweepOpts, true),
	)
}

// owned loads an account's campaign; another account's is ErrNotFound.
func (s *Service) owned(ctx context.Context, st *store.Store, accountID, id string, lock bool) (store.Campaign, error) {
	var c store.Campaign
	var err error
	if lock {
		c, err = st.LockCampaign(ctx, id)
	} else {
		c, err = st.CampaignByID(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.AccountID != accountID) {
		return store.Campaign{}, ErrNotFound
	}
	return c, err
}

// Campaign statuses (Campaign.status in openapi/v2.json), stage statuses and record statuses.
const (
	Draft          = "draft"
	Approved       = "approved"
	Running        = "running"
	NeedsAttention = "needs_attention"
	Completed      = "completed"
	Cancelled      = "cancelled"

	StagePending   = "pending"
	StageRunning   = "running"
	StageCompleted = "completed"
	StageFailed    = "failed"

	RecordPending = "pending"
	RecordRunning = "running"
	RecordDone    = "done"
	RecordFailed  = "failed"
)

// statuses hands the state machine's statuses to the store's state changes.
var statuses = store.CampaignStatuses{
	Draft: Draft, Approved: Approved, Running: Running, NeedsAttention: NeedsAttention, Completed: Completed, Cancelled: Cancelled,
	StageRunning: StageRunning, StageCompleted: StageCompleted, StageFailed: StageFailed,
	RecordPending: RecordPending, RecordRunning: RecordRunning, RecordDone: RecordDone, RecordFailed: RecordFailed,
}

// Terminal reports whether a campaign status is terminal.
func Terminal(status string) bool {
	return status == Completed || status == Cancelled
}

func ptr[T any](v T) *T { return &v }
