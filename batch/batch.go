// Package batch runs batches (the /api/v2/batches operations): one research job per question with one
// configuration. It owns the batch state machine (create, cancel, retry) and the dispatcher that
// turns PENDING rows into research jobs through jobs.Service, so billing, workspaces, webhooks and
// timelines apply to rows exactly as to any job.
//
// A row's flow reads one way: the dispatcher launches it as a research job (jobs.Service.Create),
// the queue's settled hook tells the batch when that job settles, and a loop's run is told its
// batch ended by a queue entry of the loop's own (loop.RunEndedArgs). The dispatcher is
// event-driven on the queue: creating a batch, a row's job settling and a retry each enqueue a
// dispatch job in the same transaction, and a periodic sweep (leader only) catches anything else (credits granted to a paused batch, a lost queue entry). A row is launched
// by claiming a concurrency slot and the budget on the batch row and the row itself with
// conditional updates inside the transaction that creates its job, so several processes never
// launch a row twice, never exceed max_concurrent and never reserve past max_credits.
package batch

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
)

// Queue is the queue dispatch and sweep jobs run on: their own, so a deep research backlog never
// delays launching rows.
const Queue = "batches"

// Batch statuses (Batch.status in openapi/v2.json) and row statuses (BatchRow.status).
const (
	Pending               = "PENDING"
	Processing            = "PROCESSING"
	ProcessedSuccessfully = "PROCESSED_SUCCESSFULLY"
	ProcessedWithErrors   = "PROCESSED_WITH_ERRORS"
	Cancelled             = "CANCELLED"

	RowPending = "PENDING"
	RowRunning = "RUNNING"
	RowSuccess = "SUCCESS"
	RowFailed  = "FAILED"
)

// statuses hands the state machine's statuses to the store queries that write and filter by them.
var statuses = store.BatchStatuses{
	Active: []string{Pending, Processing}, Processing: Processing,
	Succeeded: ProcessedSuccessfully, WithErrors: ProcessedWithErrors, Cancelled: Cancelled,
	RowPending: RowPending, RowRunning: RowRunning, RowSuccess: RowSuccess, RowFailed: RowFailed,
}

// Row error codes (documented on BatchRow in openapi/v2.json).
const (
	CodeQuotaExhausted    = "quota_exhausted"
	CodeBudgetExhausted   = "budget_exhausted"
	CodeTimedOut          = "timed_out"
	CodeDispatchError     = "dispatch_error"
	CodeSchemaUnsatisfied = "schema_unsatisfied"
	CodeEngineError       = "engine_error"
	CodeCancelled         = "cancelled"
	// CodeForbidden: the account's tier may no longer run the batch's expert (jobs.ExpertTierError).
	CodeForbidden = jobs.CodeForbidden
)

// Refusals of the state machine (bad input is a fault.InvalidInput naming the field).
var (
	// ErrNotFound: no such batch (or row) of this account.
	ErrNotFound = fault.Missing("batch")
	// ErrCancelled: retry on a cancelled batch.
	ErrCancelled = &fault.Error{Kind: fault.Conflict, Code: "batch_cancelled", Msg: "batch cancelled",
		Detail: "the batch is cancelled; its rows cannot be retried"}
	// ErrRowNotRetryable: retry of a row that is not FAILED.
	ErrRowNotRetryable = &fault.Error{Kind: fault.Conflict, Code: "row_not_retryable", Msg: "row not retryable",
		Detail: "only a FAILED row can be retried"}
)

func invalid(field, msg string) *fault.Error {
	return fault.InvalidInput(fault.Field{Field: field, Message: msg})
}

// Billing is what batches need from billing (*billing.Service implements it).
type Billing interface {
	Config() billing.Config
	CanAfford(ctx context.Context, accountID, effort string) (bool, error)
}

// Experts resolves expert_id (expert.Runner implements it).
type Experts interface {
	Resolve(ctx context.Context, accountID, id string) (jobs.Expert, error)
}

// Jobs is what the dispatcher needs from the research job service (*jobs.Service).
type Jobs interface {
	Prepare(ctx context.Context, r jobs.CreateRequest) (jobs.Prepared, error)
	Insert(ctx context.Context, tx *store.Store, p jobs.Prepared) (store.ResearchJob, error)
}

// Config tunes the dispatcher.
type Config struct {
	// Workers is how many dispatch jobs one process runs at once.
	Workers int
	// SweepInterval is how often the leader looks for batches with waiting rows and a free slot
	// (the safety net behind event-driven dispatch; it also resumes batches paused for credits).
	SweepInterval time.Duration
}

// DefaultConfig returns the production values.
func DefaultConfig() Config { return Config{Workers: 4, SweepInterval: 10 * time.Second} }

// Deps are the collaborators of the service. Experts may be nil: then any expert id is unknown.
type Deps struct {
	Store   *store.Store
	Billing Billing
	Experts Experts
	// Jobs launches rows; Queue runs the dispatcher and tells it when a row's job settles.
	Jobs   Jobs
	Queue  *queue.Queue
	Logger *slog.Logger
	Now    func() time.Time
}

// Service manages batches.
type Service struct {
	st      *store.Store
	billing Billing
	experts Experts
	jobs    Jobs
	queue   *queue.Queue
	log     *slog.Logger
	now     func() time.Time
	cfg     Config
}

// New builds the service and registers its dispatcher on the queue.
func New(d Deps, cfg Config) (*Service, error) {
	if d.Store == nil || d.Billing == nil || d.Jobs == nil || d.Queue == nil {
		return nil, errors.New("batch: store, billing, jobs and queue are required")
	}
	if cfg.Workers < 1 || cfg.SweepInterval <= 0 {
		return nil, errors.New("batch: workers and sweep interval must be positive")
	}
	s := &Service{st: d.Store, billing: d.Billing, experts: d.Experts, jobs: d.Jobs, queue: d.Queue, log: d.Logger, now: d.Now, cfg: cfg}
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

// register puts the batches queue, the dispatch and sweep workers, the periodic sweep and the
// hook that settles rows on the queue.
func (s *Service) register() error {
	q := s.queue
	return errors.Join(
		q.AddQueue(Queue, s.cfg.Workers),
		queue.AddWorker(q, &dispatchWorker{svc: s}),
		queue.AddWorker(q, &sweepWorker{svc: s}),
		q.AddPeriodic(s.cfg.SweepInterval, sweepArgs{}, &river.InsertOpts{Queue: Queue, MaxAttempts: 1}, true),
		q.OnSettled(s.settled),
	)
}

// owned loads an account's batch; another account's is ErrNotFound.
func (s *Service) owned(ctx context.Context, st *store.Store, accountID, id string, lock bool) (store.Batch, error) {
	var b store.Batch
	var err error
	if lock {
		b, err = st.LockBatch(ctx, id)
	} else {
		b, err = st.BatchByID(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && b.AccountID != accountID) {
		return store.Batch{}, ErrNotFound
	}
	return b, err
}

// Get reads an account's batch.
func (s *Service) Get(ctx context.Context, accountID, id string) (store.Batch, error) {
	return s.owned(ctx, s.st, accountID, id, false)
}

func ptr[T any](v T) *T { return &v }
