// Package jobs runs research jobs durably on the process's queue (package queue): a job row and
// its queue entry commit in one transaction, workers execute runs under a concurrency limit and
// shut down gracefully with the queue, River's rescuer re-queues runs whose process died, and
// webhooks are delivered by their own queue. It also owns the job state machine (create, cancel,
// continue) that the HTTP handlers call, and tells the queue's settled hooks when a job settles.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/revision"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/workspace"
)

// Queue names.
const (
	QueueResearch   = "research"
	QueueBackground = "research_background"
	QueueWebhooks   = "webhooks"
)

// Billing is what jobs needs from the billing service (*billing.Service implements it).
type Billing interface {
	Config() billing.Config
	CanAfford(ctx context.Context, accountID, effort string) (bool, error)
	HoldRun(ctx context.Context, tx *store.Store, r billing.Run) error
	ReleaseRun(ctx context.Context, tx *store.Store, runID string) error
	ChargeRun(ctx context.Context, tx *store.Store, r billing.Run) error
	RefundRun(ctx context.Context, tx *store.Store, r billing.Run) error
}

// InputFile is one attachment to copy into a job's input_files/.
type InputFile struct {
	Name string // path-safe file name
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// UnusableAttachmentError says which attachment id of a create cannot be used (unknown, foreign,
// deleted or not uploaded yet); a create refuses it naming attachment_ids/<Index> (unusable).
type UnusableAttachmentError struct {
	Index  int
	ID     string
	Reason string
}

func (e *UnusableAttachmentError) Error() string {
	return fmt.Sprintf("attachment_ids/%d (%s): %s", e.Index, e.ID, e.Reason)
}

// Attachments resolves a job's attachment ids to files; an unusable id is refused with an
// *UnusableAttachmentError in the chain.
type Attachments interface {
	FilesForJob(ctx context.Context, accountID string, ids []string) ([]InputFile, error)
}

// Expert is what a run needs from the expert it runs as.
type Expert struct {
	ID      string // canonical: registry id or UUID
	Name    string
	Version *int // the configuration version; nil for unversioned registry experts
	// SystemPrompt and Skills (full SKILL.md bodies) go to the engine as instructions.
	SystemPrompt string
	Skills       []engine.Skill
	// ToolNames are the granted MCP tools (mcp_tool_names); RequiredTools must each succeed once.
	ToolNames     []string
	RequiredTools []string
	// ContextFiles are copied into a per-run folder the engine reads as read-only sources;
	// ContextDirs are folders given as they are.
	ContextFiles []InputFile
	ContextDirs  []string
	// OutputSchema applies when the caller sends no json_schema.
	OutputSchema map[string]any
	// MaxCostUSD is the expert's per-run spend ceiling (callers cannot send one on POST /research).
	MaxCostUSD *float64
	// DefaultEffort is used when the caller names no effort ("" = medium); clamped like any effort.
	DefaultEffort string
}

// CodeForbidden is the error code of work refused because the account's tier may not run its
// expert (*ExpertTierError): a run, a batch row, a campaign record, a loop's skipped firing. It is
// the code of the 403 the same refusal answers at create, so a client handles both alike.
const CodeForbidden = "forbidden"

// ExpertTierError: the account may see the expert but its tier may not run it (a free-tier account
// and a custom expert whose allow_free_tier_use is off). A create refuses it (TierRefusal); work that
// meets it at dispatch (created before a tier change) fails with CodeForbidden.
type ExpertTierError struct {
	ExpertID string // as the caller named it
	Tier     string
}

func (e *ExpertTierError) Error() string {
	return fmt.Sprintf("expert %s is not available to %s-tier accounts (its allow_free_tier_use is off)", e.ExpertID, e.Tier)
}

// Experts resolves expert_id: ErrExpertNotFound when the account may not see it, *ExpertTierError
// when it may see it but its tier may not run it.
type Experts interface {
	Resolve(ctx context.Context, accountID, id string) (Expert, error)
}

// Deps are the collaborators of the service. Attachments and Experts may be nil: then any
// attachment id is unusable and any expert id unknown.
type Deps struct {
	Store       *store.Store
	Billing     Billing
	Engine      engine.Engine
	Attachments Attachments
	Experts     Experts
	// Tools gives runs the MCP tools their expert grants; nil: granted tools are not offered.
	Tools  Tools
	Sealer *Sealer
	// WebhookClient delivers webhooks; nil builds a netguard client for the environment (production:
	// https and public addresses only, checked at dial time; development: anything).
	WebhookClient *http.Client
	Logger        *slog.Logger
	Now           func() time.Time
	// Queue runs the runs, webhook deliveries and the reaper; its settled hooks hear about every
	// job that settles.
	Queue *queue.Queue
	// Blobs receives the contents of every revision's files (RESEARCH_BLOB_URL's bucket, shared by
	// every process); nil: an in-memory bucket, which only a single process in a test can use.
	Blobs *blob.Bucket
}

// Service runs and manages research jobs.
type Service struct {
	st          *store.Store
	billing     Billing
	engine      engine.Engine
	attachments Attachments
	experts     Experts
	tools       Tools
	sealer      *Sealer
	webhooks    *http.Client
	log         *slog.Logger
	now         func() time.Time
	cfg         Config
	queue       *queue.Queue
	revisions   *revision.Service
	follow      *Follower
}

// New builds the service and registers its work on the queue (it can enqueue at once; the queue's
// Start begins working).
func New(d Deps, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Store == nil || d.Billing == nil || d.Engine == nil || d.Sealer == nil || d.Queue == nil {
		return nil, errors.New("jobs: store, billing, engine, sealer and queue are required")
	}
	s := &Service{
		st: d.Store, billing: d.Billing, engine: d.Engine, attachments: d.Attachments, experts: d.Experts, tools: d.Tools,
		sealer: d.Sealer, webhooks: d.WebhookClient, log: d.Logger, now: d.Now, cfg: cfg, queue: d.Queue,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) } // the databases keep microseconds
	}
	if s.webhooks == nil {
		s.webhooks = netguard.NewClient(s.WebhookPolicy(), cfg.WebhookTimeout)
	}
	blobs := d.Blobs
	if blobs == nil {
		blobs = memblob.OpenBucket(nil)
	}
	s.follow = NewFollower(d.Store, s.log.With("component", "follow"))
	s.revisions = revision.New(d.Store, blobs, s.Workspace, s.log.With("component", "revisions"))
	// A copy, so an injected client is left as it was. A redirect is an answer that is not 2xx:
	// following it would turn the POST into a GET.
	webhooks := *s.webhooks
	webhooks.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s.webhooks = &webhooks
	if err := s.register(); err != nil {
		return nil, err
	}
	return s, nil
}

// register puts the service's queues, workers and the periodic reaper on the queue.
func (s *Service) register() error {
	q, cfg := s.queue, s.cfg
	return errors.Join(
		q.AddQueue(QueueResearch, cfg.Workers),
		q.AddQueue(QueueBackground, cfg.BackgroundWorkers),
		q.AddQueue(QueueWebhooks, cfg.WebhookWorkers),
		queue.AddWorker(q, &runWorker{svc: s}),
		queue.AddWorker(q, &webhookWorker{svc: s}),
		queue.AddWorker(q, &reapWorker{svc: s}),
		q.AddPeriodic(cfg.ReaperInterval, reapArgs{}, &river.InsertOpts{Queue: queue.Maintenance, MaxAttempts: 1}, true),
	)
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// WebhookPolicy is the netguard policy for webhook targets in this environment.
func (s *Service) WebhookPolicy() netguard.Policy {
	if s.cfg.Production {
		return netguard.Policy{}
	}
	return netguard.Policy{AllowHTTP: true, AllowPrivate: true}
}

// Revisions publishes and reads the jobs' revisions (manifests in the database, contents in the
// blob store): every read of a report at a revision, a file list or a file goes through it.
func (s *Service) Revisions() *revision.Service { return s.revisions }

// Workspace opens a job's workspace repository, the runner's working copy in this process's data
// directory, or reports workspace.ErrNotFound when there is none here (queued for the first time, or
// run by another process). API reads go through Revisions instead.
func (s *Service) Workspace(jobID string) (*workspace.Repo, error) {
	r, err := workspace.Open(s.workspaceDir(jobID))
	if err != nil {
		return nil, fmt.Errorf("job %s workspace: %w", jobID, err)
	}
	return r, nil
}

func (s *Service) workspaceDir(jobID string) string {
	return filepath.Join(s.cfg.DataDir, "workspaces", jobID)
}

// enqueueRun inserts the queue entry of a run in the caller's transaction, on the background queue
// when background is set. accountID's jobs beyond its fair share go in at a lower priority (see
// Config.AccountShare).
func (s *Service) enqueueRun(ctx context.Context, tx *store.Store, accountID string, a runArgs, background bool) (*rivertype.JobInsertResult, error) {
	name := QueueResearch
	if background {
		name = QueueBackground
	}
	priority, err := s.priority(ctx, tx, accountID, name)
	if err != nil {
		return nil, err
	}
	return s.queue.EnqueueTx(ctx, tx, a, &river.InsertOpts{Queue: name, MaxAttempts: s.cfg.MaxAttempts, Priority: priority})
}

func ptr[T any](v T) *T { return &v }
