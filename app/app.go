// Package app builds every service of researchd from its configuration. `researchd serve` and the
// test harness (server/servertest) both call Build, so the services a test exercises are wired
// exactly as the ones a deployment runs; the HTTP layer (server.New) is handed them and builds none.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jonboulle/clockwork"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/researchd/researchd/a2aserver"
	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
)

// Config is what the services are built from. Start from Defaults: every field left as it gives
// a working single-process setup.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger     // nil: slog.Default(); each service logs under its own component
	Now    func() time.Time // nil: the wall clock, in microseconds (what the databases keep)
	// Engine runs research jobs; nil: the extractive engine without a corpus.
	Engine engine.Engine
	// Answerer answers campaign records in-process; nil: Engine's answers, in throwaway
	// workspaces under Jobs.DataDir.
	Answerer engine.Answerer
	// Bucket holds attachments, the contents of every revision and campaign deliverables
	// (RESEARCH_BLOB_URL); nil: in memory, which only a single process can use.
	Bucket *blob.Bucket
	// Sealer seals the keys that sign webhooks; nil: a random key, so what it sealed is lost with
	// the process (tests).
	Sealer *jobs.Sealer
	// AuthoringModel drafts expert builds; nil: Engine when it is a chat model, else builds draft
	// from the text alone.
	AuthoringModel authoring.Model
	// Tools are the grantable tools (built-in and MCP servers'); a nil Builtin: the built-in
	// tools of an engine that fetches no pages.
	Tools mcptool.Config
	// ExpertFilesDir holds the experts' git repositories of context files; empty: context files
	// live in the database only.
	ExpertFilesDir string
	// SkillCatalog and ToolCatalog replace the built skills and tools as what experts check names
	// against (tests name the few they use); nil: the built ones.
	SkillCatalog expert.SkillCatalog
	ToolCatalog  expert.ToolCatalog
	// LoopClock drives loop firing; nil: the real clock.
	LoopClock clockwork.Clock

	Billing     billing.Config
	Attachments attachments.Config
	Jobs        jobs.Config // Jobs.DataDir is where workspaces live
	Batches     batch.Config
	Campaigns   campaign.Config
	Builds      expertbuild.Config
}

// Defaults is every service's default configuration.
func Defaults() Config {
	return Config{
		Billing: billing.DefaultConfig(), Jobs: jobs.DefaultConfig(), Batches: batch.DefaultConfig(),
		Campaigns: campaign.DefaultConfig(), Builds: expertbuild.DefaultConfig(),
	}
}

// Services are the built services, ready for server.New, and the queue they run their work on.
// Start begins the background work.
type Services struct {
	Queue       *queue.Queue
	Accounts    *accounts.Service
	Limiter     *ratelimit.Limiter
	Billing     *billing.Service
	Attachments *attachments.Service
	Skills      *skill.Service
	Tools       *mcptool.Registry
	Experts     *expert.Service
	Research    *jobs.Service
	A2ATasks    *a2aserver.TaskStore
	Batches     *batch.Service
	Builds      *expertbuild.Service
	Campaigns   *campaign.Service
	Loops       *loop.Service
}

// Build builds every service; nothing runs until Start.
func Build(cfg Config) (*Services, error) {
	if cfg.Store == nil {
		return nil, errors.New("app: a store is required")
	}
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	st, log, now := cfg.Store, cfg.Logger, cfg.Now
	component := func(name string) *slog.Logger { return log.With("component", name) }
	s := &Services{
		Accounts: accounts.New(st, accounts.Options{Now: now, Logger: component("accounts")}),
		Limiter:  ratelimit.New(st, now),
		Billing:  billing.New(st, cfg.Billing, billing.WithClock(now)),
	}
	ac := cfg.Attachments
	if ac.Now == nil {
		ac.Now = now
	}
	if ac.Logger == nil {
		ac.Logger = log
	}
	s.Attachments = attachments.New(st, cfg.Bucket, ac)
	tc := cfg.Tools
	tc.Logger = component("mcp")
	s.Tools = mcptool.New(tc)
	if s.Skills, err = skill.New(st, now); err != nil {
		return nil, err
	}
	eo := expert.Options{Skills: cfg.SkillCatalog, Tools: cfg.ToolCatalog, Attachments: s.Attachments, FilesDir: cfg.ExpertFilesDir,
		Now: now, Logger: component("experts")}
	if eo.Skills == nil {
		eo.Skills = s.Skills
	}
	if eo.Tools == nil {
		eo.Tools = s.Tools
	}
	if s.Experts, err = expert.New(st, eo); err != nil {
		return nil, err
	}
	qc := cfg.Jobs.Queue()
	qc.Logger = component("river")
	if s.Queue, err = queue.New(st, qc); err != nil {
		return nil, err
	}
	// Each service registers its own queues, workers and hooks on the queue as it is built; the
	// order is that of what each needs: batches launch research jobs, loops run batches.
	runner := s.Experts.Runner()
	if s.Research, err = jobs.New(jobs.Deps{Store: st, Billing: s.Billing, Engine: cfg.Engine, Attachments: jobs.AttachmentsFrom(s.Attachments),
		Experts: runner, Tools: jobs.ToolsFrom(s.Tools), Sealer: cfg.Sealer, Queue: s.Queue, Logger: component("jobs"), Now: now,
		Blobs: cfg.Bucket}, cfg.Jobs); err != nil {
		return nil, err
	}
	s.A2ATasks = a2aserver.NewTaskStore(st, component("a2a"))
	if s.Batches, err = batch.New(batch.Deps{Store: st, Billing: s.Billing, Experts: runner, Jobs: s.Research, Queue: s.Queue,
		Logger: component("batches"), Now: now}, cfg.Batches); err != nil {
		return nil, err
	}
	author := authoring.Author{Model: cfg.AuthoringModel, Log: component("authoring")}
	if s.Builds, err = expertbuild.New(expertbuild.Deps{Store: st, Experts: s.Experts, Skills: s.Skills, Author: author, Queue: s.Queue,
		Logger: component("expert-builds"), Now: now}, cfg.Builds); err != nil {
		return nil, err
	}
	if s.Campaigns, err = campaign.New(campaign.Deps{Store: st, Billing: s.Billing, Experts: runner, Answerer: cfg.Answerer,
		Bucket: cfg.Bucket, Queue: s.Queue, Logger: component("campaigns"), Now: now}, cfg.Campaigns); err != nil {
		return nil, err
	}
	if s.Loops, err = loop.New(loop.Deps{Store: st, Batches: s.Batches.Loops(), Clock: cfg.LoopClock, Now: now, Queue: s.Queue,
		Logger: component("loops")}); err != nil {
		return nil, err
	}
	return s, nil
}

// withDefaults fills what the configuration leaves open.
func withDefaults(cfg Config) (Config, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if cfg.Engine == nil {
		cfg.Engine = extractive.New(extractive.Options{})
	}
	if cfg.Answerer == nil {
		cfg.Answerer = engine.Answers(cfg.Engine, filepath.Join(cfg.Jobs.DataDir, "campaign-answers"))
	}
	if cfg.Bucket == nil {
		cfg.Bucket = memblob.OpenBucket(nil)
	}
	if cfg.AuthoringModel == nil {
		cfg.AuthoringModel, _ = cfg.Engine.(authoring.Model)
	}
	if cfg.Tools.Builtin == nil {
		cfg.Tools.Builtin = mcptool.BuiltinTools(false)
	}
	if cfg.Sealer == nil {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return cfg, err
		}
		sealer, err := jobs.NewSealer(secret)
		if err != nil {
			return cfg, err
		}
		cfg.Sealer = sealer
	}
	return cfg, nil
}

// Start begins the background work: the queue's workers (research runs, webhooks, batches,
// campaigns, expert builds, maintenance). Loops fire from a loop.Timer the caller starts.
func (s *Services) Start(ctx context.Context) error { return s.Queue.Start(ctx) }

// Stop stops the workers gracefully: running work gets until ctx's deadline (or the shutdown
// grace) to finish, then it is cancelled. A cancelled run is left in_progress with its queue entry
// retryable, so the next process resumes it without charging it again (the charge is kept on the
// run id).
func (s *Services) Stop(ctx context.Context) error { return s.Queue.Stop(ctx) }
