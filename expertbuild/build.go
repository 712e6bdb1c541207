// Package expertbuild runs asynchronous expert builds (POST /experts/build): a build row
// and its queue entry commit in one transaction, a River worker drafts the expert from the domain
// description (package authoring) and saves it as the caller's `building` draft, and every build
// ends `succeeded` or `failed` — retried after a crash, failed after its last attempt, and failed
// by a periodic sweep if its queue entry was lost.
package expertbuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
)

// Queue is the builds' own queue, so a burst of builds never delays research runs.
const Queue = "expert_builds"

// Build statuses (ExpertBuild.status in openapi/v2.json); succeeded and failed are terminal.
const (
	Queued    = "queued"
	Running   = "running"
	Succeeded = "succeeded"
	Failed    = "failed"
)

// statuses hands the state machine's statuses to the store queries that write and filter by them.
var statuses = store.BuildStatuses{Queued: Queued, Running: Running, Succeeded: Succeeded, Failed: Failed}

// ErrNotFound: no build with that id started by the caller.
var ErrNotFound = fault.Missing("expert build")

// Request is a build request (ExpertBuildRequest).
type Request struct {
	DomainDescription string  `json:"domain_description"`
	Name              *string `json:"name,omitempty"`
}

// Build is a build as its caller sees it.
type Build struct {
	ID         string
	Status     string
	CreatedAt  time.Time
	FinishedAt *time.Time
	Expert     *expert.Expert // the draft, when succeeded
	ErrorCode  string         // when failed
	ErrorMsg   string
}

// Skills lists the skills a draft may link (*skill.Service).
type Skills interface {
	List(ctx context.Context, accountID string, f skill.Filter) ([]skill.Summary, int, error)
}

// Config tunes builds.
type Config struct {
	// Workers is how many builds one process runs at once.
	Workers int
	// MaxAttempts is how many times a build is tried (after errors or a crash) before it fails.
	MaxAttempts int
	// Timeout bounds one attempt.
	Timeout time.Duration
	// SweepInterval is how often the leader fails builds older than Deadline that have not ended
	// (their queue entry was lost, or their last attempt died with its process).
	SweepInterval, Deadline time.Duration
}

// DefaultConfig returns the production settings.
func DefaultConfig() Config {
	return Config{Workers: 2, MaxAttempts: 3, Timeout: 2 * time.Minute, SweepInterval: 5 * time.Minute, Deadline: 30 * time.Minute}
}

// Deps are the collaborators of the service.
type Deps struct {
	Store   *store.Store
	Experts *expert.Service
	Skills  Skills // nil: drafts link no skills
	// Author drafts with the configured model when it has one; the zero value drafts from the text.
	Author authoring.Author
	// Queue runs the builds and the sweep.
	Queue  *queue.Queue
	Logger *slog.Logger
	Now    func() time.Time
}

// Service starts, runs and reads expert builds.
type Service struct {
	st      *store.Store
	experts *expert.Service
	skills  Skills
	author  authoring.Author
	log     *slog.Logger
	now     func() time.Time
	cfg     Config
	queue   *queue.Queue
}

// New builds the service and registers its workers on the queue.
func New(d Deps, cfg Config) (*Service, error) {
	if d.Store == nil || d.Experts == nil || d.Queue == nil {
		return nil, errors.New("expertbuild: store, experts and queue are required")
	}
	if cfg.Workers < 1 || cfg.MaxAttempts < 1 || cfg.Timeout <= 0 || cfg.SweepInterval <= 0 || cfg.Deadline <= 0 {
		return nil, fmt.Errorf("expertbuild: invalid config %+v", cfg)
	}
	s := &Service{st: d.Store, experts: d.Experts, skills: d.Skills, author: d.Author, queue: d.Queue, log: d.Logger, now: d.Now, cfg: cfg}
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

// register puts the builds' queue, its workers and the periodic sweep on the queue.
func (s *Service) register() error {
	q := s.queue
	return errors.Join(
		q.AddQueue(Queue, s.cfg.Workers),
		queue.AddWorker(q, &buildWorker{svc: s}),
		queue.AddWorker(q, &sweepWorker{svc: s}),
		q.AddPeriodic(s.cfg.SweepInterval, sweepArgs{}, &river.InsertOpts{Queue: Queue, MaxAttempts: 1}, false),
	)
}

// idemPrefix keeps build keys apart from job and expert creates in the shared idempotency records.
const idemPrefix = "expert-builds:"

// Start records a build and queues it. With an idempotency key, a retry returns the original build
// (replayed true) and starts nothing.
func (s *Service) Start(ctx context.Context, c expert.Caller, req Request, idemKey, requestHash string) (Build, bool, error) {
	k := idempotency.Key{AccountID: c.AccountID, Scope: idemPrefix, Key: idemKey, RequestHash: requestHash, StatusCode: 202, Now: s.now()}
	return idempotency.Create(ctx, s.st, k, req, func(ctx context.Context, k store.IdempotencyKey) (Build, error) {
		return s.Get(ctx, c, k.JobID)
	}, func(ctx context.Context, req Request, claim idempotency.Claim) (Build, error) {
		return s.start(ctx, c, req, claim)
	})
}

func (s *Service) start(ctx context.Context, c expert.Caller, req Request, claim idempotency.Claim) (Build, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return Build{}, fmt.Errorf("encode build request: %w", err)
	}
	row := store.ExpertBuild{ID: uuid.NewString(), AccountID: c.AccountID, Status: Queued, Request: string(raw), CreatedAt: s.now()}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, row.ID); err != nil {
			return err
		}
		if err := tx.CreateExpertBuild(ctx, &row); err != nil {
			return err
		}
		_, err := s.queue.EnqueueTx(ctx, tx, buildArgs{BuildID: row.ID}, &river.InsertOpts{Queue: Queue, MaxAttempts: s.cfg.MaxAttempts})
		return err
	})
	if err != nil {
		return Build{}, err
	}
	return Build{ID: row.ID, Status: row.Status, CreatedAt: row.CreatedAt}, nil
}

// Get reads a build the caller started.
func (s *Service) Get(ctx context.Context, c expert.Caller, id string) (Build, error) {
	row, err := s.st.ExpertBuildByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.AccountID != c.AccountID) {
		return Build{}, fmt.Errorf("build %s: %w", id, ErrNotFound)
	} else if err != nil {
		return Build{}, err
	}
	b := Build{ID: row.ID, Status: row.Status, CreatedAt: row.CreatedAt, FinishedAt: row.FinishedAt}
	switch row.Status {
	case Succeeded:
		if row.ExpertID == nil {
			return Build{}, fmt.Errorf("build %s succeeded without an expert", id)
		}
		e, err := s.experts.Get(ctx, c, *row.ExpertID)
		if err != nil {
			return Build{}, fmt.Errorf("build %s draft: %w", id, err)
		}
		b.Expert = &e
	case Failed:
		b.ErrorCode, b.ErrorMsg = deref(row.ErrorCode), deref(row.ErrorMessage)
	}
	return b, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
