// Package loop runs recurring batches (the /api/v2/loops operations): a batch configuration re-run daily, weekly or
// monthly in an IANA time zone.
//
// Firing is exactly once per period. next_run_at is computed here (Schedule.Next, DST-aware) and
// stored; FireDue claims each due firing with one conditional update (next_run_at moves from the
// due instant to the next period only if it still holds the due instant) in the same transaction
// that creates the run's batch, so two processes, or one process after a restart, never fire one
// period twice. gocron is only the timer that calls FireDue (see Timer). A firing missed while
// every process was down fires once when one comes back: next_run_at jumps to the first period
// after now, not through each missed one.
//
// A firing is skipped, not queued, while the previous run has not finished
// (previous_run_active) or the account cannot pay for one row (insufficient_credits); the skip
// is recorded in last_skip_reason / last_skipped_at and next_run_at still advances.
//
// consecutive_failures counts runs in a row that failed to start (the batch could not be
// created, e.g. its expert was deleted) or ended PROCESSED_WITH_ERRORS with no SUCCESS row (or
// CANCELLED with none); a run with at least one SUCCESS row resets it. A run's outcome is
// recorded once (schedule_runs.outcome) when the loop next looks at it: at the next firing, on
// a read of the loop, or when the batch service reports it settled (Service.Settled).
package loop

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
)

// Skip reasons (last_skip_reason).
const (
	SkipPreviousRunActive   = "previous_run_active"
	SkipInsufficientCredits = "insufficient_credits"
	// SkipForbidden: the account's tier may not run the loop's expert (ErrExpertForbidden); it
	// clears, like insufficient credits, when the account or the expert changes.
	SkipForbidden = "forbidden"
)

// Run outcomes (a run's Outcome once its batch ended): whether it counts towards
// consecutive_failures.
const (
	RunSucceeded = "success"
	RunFailed    = "failure"
)

// Limits (as in openapi/v2.json).
const (
	MaxQuestions         = 1000
	DefaultMaxConcurrent = 5
	MaxConcurrent        = 20
	DefaultLanguage      = "en"
	// RecentRuns is how many runs a loop's detail shows.
	RecentRuns = 50
)

// Refusals of the loop operations (bad input is a fault.InvalidInput naming the fields).
var (
	// ErrNotFound: no such loop of this account (or deleted, for changes).
	ErrNotFound = fault.Missing("loop")
	// ErrRunActive: run-now while the previous run has not finished.
	ErrRunActive = &fault.Error{Kind: fault.Conflict, Code: "loop_run_active", Msg: "previous run still active",
		Detail: "the previous run has not finished: cancel it or wait"}
	// ErrInsufficientCredits: the balance cannot cover one row. Batches.CreateRun returns an error
	// wrapping it; run-now is refused, a firing is skipped.
	ErrInsufficientCredits = &fault.Error{Kind: fault.PaymentRequired, Msg: "insufficient credits",
		Detail: "the balance cannot cover one row; check GET /api/v2/quota/check"}
	// ErrExpertForbidden: the account's tier may not run the loop's expert. Batches.Validate and
	// PrepareRun return an error wrapping it and the tier's refusal (jobs.TierRefusal), which is what
	// create, update and run-now answer; a firing is skipped with SkipForbidden.
	ErrExpertForbidden = errors.New("expert not available to the account's tier")
	// ErrRunNotFound: no such run of the loop.
	ErrRunNotFound = fault.Missing("loop run")
)

// Batch statuses as RunState reports them.
const (
	StatusPending               = "PENDING"
	StatusProcessing            = "PROCESSING"
	StatusProcessedSuccessfully = "PROCESSED_SUCCESSFULLY"
	StatusProcessedWithErrors   = "PROCESSED_WITH_ERRORS"
	StatusCancelled             = "CANCELLED"
)

// Config is the batch configuration every run uses (LoopConfig in the document), stored as JSON.
type Config struct {
	Questions        []string         `json:"questions"`
	Effort           *string          `json:"effort"` // requested; nil: the expert's default, else medium
	ExpertID         *string          `json:"expert_id"`
	Approach         *string          `json:"approach"`
	ResponseLanguage string           `json:"response_language"`
	MaxConcurrent    int              `json:"max_concurrent"`
	MaxCredits       *int64           `json:"max_credits"`
	CustomJSONSchema map[string]any   `json:"custom_json_schema"`
	Inputs           []map[string]any `json:"inputs"`
	Rows             []map[string]any `json:"rows"`
}

// RunInput is what a run's batch is created from.
type RunInput struct {
	AccountID  string
	ScheduleID string
	RunNumber  int
	Name       string // the loop's name, also the batch's
	Config     Config
	// Prepared is what Batches.PrepareRun returned for this run.
	Prepared any
}

// RunState is a run's batch as the loop needs it.
type RunState struct {
	Status                                  string
	TotalRows, ProcessedRows, SucceededRows int
}

// Active reports whether the batch has not finished.
func (r RunState) Active() bool { return r.Status == StatusPending || r.Status == StatusProcessing }

// RowResult is one row of a finished or running batch, for the diff between runs.
type RowResult struct {
	RowNumber        int
	Question         string
	Status           string // SUCCESS, FAILED, PENDING, RUNNING
	Headline         *string
	StructuredOutput map[string]any
}

// Batches is what loops need from the batch service; the batch package implements it once both
// are wired (see the report in the loops branch).
type Batches interface {
	// Validate checks a configuration as a batch create would (expert runnable, effort known,
	// max_credits covering one row, custom_json_schema compiling) without creating anything.
	// Bad input is a fault.Invalid refusal.
	Validate(ctx context.Context, accountID string, cfg Config) error
	// PrepareRun does the reads a run's batch needs (the account's tier, the expert, the balance)
	// before the firing's transaction opens: SQLite has one connection, so nothing may read
	// outside tx while it is open. It returns the same errors as CreateRun; its result is passed
	// to CreateRun in RunInput.Prepared (RunNumber is not known yet).
	PrepareRun(ctx context.Context, in RunInput) (any, error)
	// CreateRun creates a run's batch inside tx, the transaction that claims the firing, and
	// returns its id. An error wrapping ErrInsufficientCredits means the balance cannot cover one
	// row; a fault.Invalid refusal means the configuration no longer works (e.g. the expert is gone).
	CreateRun(ctx context.Context, tx *store.Store, in RunInput) (batchID string, err error)
	// RunStates reads batches' statuses and counters; missing ids are absent from the map.
	RunStates(ctx context.Context, batchIDs []string) (map[string]RunState, error)
	// RunResults lists a batch's rows in order with their short answers.
	RunResults(ctx context.Context, batchID string) ([]RowResult, error)
}

// Deps are the collaborators of the service.
type Deps struct {
	Store   *store.Store
	Batches Batches
	// Clock drives firing and timestamps (clockwork.NewRealClock() in production, a fake in tests).
	Clock clockwork.Clock
	// Now is the time of a request, the clock the records shared with other services (idempotency
	// keys, which the job reaper expires) are kept by; nil: the wall clock. Keeping them by a fake
	// Clock would make a key look long expired to a reaper on the wall clock.
	Now func() time.Time
	// Queue works the notices batches enqueue when a loop's run ends (RunEndedArgs); nil: a run's
	// outcome is recorded only at the next firing or read of its loop.
	Queue  *queue.Queue
	Logger *slog.Logger
}

// Service manages loops and fires them.
type Service struct {
	st      *store.Store
	batches Batches
	clock   clockwork.Clock
	reqNow  func() time.Time
	log     *slog.Logger
}

// New builds the service.
func New(d Deps) (*Service, error) {
	if d.Store == nil || d.Batches == nil {
		return nil, errors.New("loop: store and batches are required")
	}
	s := &Service{st: d.Store, batches: d.Batches, clock: d.Clock, reqNow: d.Now, log: d.Logger}
	if s.clock == nil {
		s.clock = clockwork.NewRealClock()
	}
	if s.reqNow == nil {
		s.reqNow = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if d.Queue != nil {
		if err := queue.AddWorker(d.Queue, &runEndedWorker{svc: s}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Clock is the service's clock (the timer shares it).
func (s *Service) Clock() clockwork.Clock { return s.clock }

func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// fields collects the bad fields of one request; fault.InvalidInput(fields...) refuses it.
type fields []fault.Field

func (f *fields) add(field, msg string) { *f = append(*f, fault.Field{Field: field, Message: msg}) }

func invalid(field, msg string) error {
	return fault.InvalidInput(fault.Field{Field: field, Message: msg})
}

func ptr[T any](v T) *T { return &v }
