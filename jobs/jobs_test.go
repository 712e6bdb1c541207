package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
	"github.com/researchd/researchd/workspace"
)

// scriptEngine is a deterministic engine for queue tests: it writes a report, takes a progress and
// a final checkpoint, and can be told to block (until released or cancelled) or to fail.
type scriptEngine struct {
	block   chan struct{} // nil: do not block
	fail    *engine.Error
	started chan string // receives the question when a run starts (buffered or nil)
	mu      sync.Mutex
	runs    int
}

func (e *scriptEngine) Name() string { return "script" }

func (e *scriptEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	e.mu.Lock()
	e.runs++
	e.mu.Unlock()
	if e.started != nil {
		e.started <- in.Question
	}
	if err := sink.Event(ctx, engine.Event{Kind: engine.KindThinking, Title: "plan", Content: "Planning " + in.Question}); err != nil {
		return engine.Result{}, err
	}
	report := "# Report\n\n" + in.Question + "\n"
	if in.Continuation {
		report = in.PriorReport + "\n## Continued\n"
	}
	if err := in.Workspace.WriteFile(engine.ReportPath, []byte(report)); err != nil {
		return engine.Result{}, err
	}
	if _, err := sink.Checkpoint(ctx, "Draft", workspace.CheckpointProgress); err != nil {
		return engine.Result{}, err
	}
	if e.block != nil {
		select {
		case <-e.block:
		case <-ctx.Done():
			return engine.Result{}, ctx.Err()
		}
	}
	if e.fail != nil {
		return engine.Result{}, e.fail
	}
	typ := workspace.CheckpointFinal
	if in.Continuation {
		typ = workspace.CheckpointContinuation
	}
	if _, err := sink.Checkpoint(ctx, "Final report", typ); err != nil {
		return engine.Result{}, err
	}
	var out map[string]any
	if in.JSONSchema != nil {
		out = map[string]any{"answer": "42"}
	}
	return engine.Result{Report: report, StructuredOutput: out}, nil
}

func (e *scriptEngine) Runs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs
}

func testConfig(t testing.TB) jobs.Config {
	cfg := jobs.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.TestOnly = true
	cfg.PollInterval = 20 * time.Millisecond
	cfg.CancelCheck = 20 * time.Millisecond
	cfg.WebhookSchedule = []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}
	cfg.WebhookTimeout = 2 * time.Second
	cfg.WebhookBudget = 5 * time.Second
	return cfg
}

type bundle struct {
	st      *store.Store
	billing *billing.Service
	svc     *jobs.Service
	queue   *queue.Queue
	account store.Account
}

// newService builds a service on a queue of its own, not started.
func newService(t testing.TB, d jobs.Deps, cfg jobs.Config) (*jobs.Service, *queue.Queue) {
	t.Helper()
	qc := cfg.Queue()
	qc.Logger = d.Logger
	q, err := queue.New(d.Store, qc)
	require.NoError(t, err)
	d.Queue = q
	svc, err := jobs.New(d, cfg)
	require.NoError(t, err)
	return svc, q
}

// start starts the queue's workers; they stop when t ends.
func start(t testing.TB, q *queue.Queue) {
	t.Helper()
	require.NoError(t, q.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// liveKey stores a new API key of the account and returns its secret: webhooks are signed only
// with a key the store knows and has not revoked.
func liveKey(t *testing.T, st *store.Store, accountID string) string {
	t.Helper()
	k := auth.MintKey()
	require.NoError(t, st.CreateAPIKey(context.Background(), &store.APIKey{ID: uuid.NewString(), AccountID: accountID,
		Prefix: k.Prefix, Last4: k.Last4, Hash: k.Hash, Scopes: "research"}))
	return k.Secret
}

// setup starts a service on st with eng; it stops when t ends.
func setup(t *testing.T, st *store.Store, eng engine.Engine, mod func(*jobs.Config)) *bundle {
	t.Helper()
	cfg := testConfig(t)
	if mod != nil {
		mod(&cfg)
	}
	sealer, err := jobs.NewSealer([]byte("test secret"))
	require.NoError(t, err)
	b := billing.New(st, billing.DefaultConfig())
	svc, q := newService(t, jobs.Deps{Store: st, Billing: b, Engine: eng, Sealer: sealer, Logger: quietLogger()}, cfg)
	start(t, q)
	acct, _, err := st.EnsureAccount(context.Background(), storetest.Name("user")+"@example.com", store.TierEnterprise, false)
	require.NoError(t, err)
	require.NoError(t, st.AppendLedger(context.Background(), &store.LedgerEntry{AccountID: acct.ID, Type: store.TxDeposit, AmountCents: 1000}))
	return &bundle{st: st, billing: b, svc: svc, queue: q, account: acct}
}

// waitFor polls until the job satisfies ok; the generous bound only stops a hung test.
func waitFor(t *testing.T, st *store.Store, jobID string, ok func(store.ResearchJob) bool) store.ResearchJob {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := st.ResearchJobByID(context.Background(), jobID)
		require.NoError(t, err)
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never reached the expected state; it is %s", jobID, j.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func terminal(j store.ResearchJob) bool { return jobs.Terminal(j.Status) }

func consumptions(t *testing.T, st *store.Store, jobID string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, st.DB().Model(&store.LedgerEntry{}).Where("job_id = ? AND type = ?", jobID, store.TxConsumption).Count(&n).Error)
	return n
}

func TestRunCompletesAndIsChargedOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, &scriptEngine{}, nil)
		c, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "What is the answer?",
			Effort: "high", JSONSchema: map[string]any{"type": "object"}})
		require.NoError(t, err)
		require.Equal(t, jobs.Queued, c.Job.Status)
		require.Regexp(t, `^answer-[0-9a-f]{6}$`, c.Job.Slug)

		j := waitFor(t, st, c.Job.ID, terminal)
		require.Equal(t, jobs.Completed, j.Status)
		require.NotNil(t, j.ReportSHA)
		require.Contains(t, *j.ReportMarkdown, "What is the answer?")
		require.JSONEq(t, `{"answer":"42"}`, *j.StructuredOutput)
		runs, err := st.RunsForJob(ctx, j.ID)
		require.NoError(t, err)
		require.Len(t, runs, 1)
		require.Equal(t, jobs.RunCompleted, runs[0].Status)
		require.EqualValues(t, 5, runs[0].CreditsCharged)
		revs, err := st.RevisionsForJob(ctx, j.ID)
		require.NoError(t, err)
		require.Len(t, revs, 2)
		require.Equal(t, "progress", revs[0].CheckpointType)
		require.Equal(t, "final", revs[1].CheckpointType)
		require.Equal(t, *j.ReportSHA, revs[1].SHA)
		require.EqualValues(t, 1, consumptions(t, st, j.ID))

		// Continue: same job, a continuation run, charged again.
		cj, err := b.svc.Continue(ctx, j.ID, store.TierEnterprise, "")
		require.NoError(t, err)
		require.Equal(t, jobs.Queued, cj.Job.Status)
		require.Nil(t, cj.Job.CompletedAt)
		j = waitFor(t, st, j.ID, terminal)
		require.Equal(t, jobs.Completed, j.Status)
		runs, err = st.RunsForJob(ctx, j.ID)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		require.Equal(t, jobs.RunContinuation, runs[1].Kind)
		revs, err = st.RevisionsForJob(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, "continuation", revs[len(revs)-1].CheckpointType)
		require.Contains(t, *j.ReportMarkdown, "## Continued")
		require.EqualValues(t, 2, consumptions(t, st, j.ID))

		// A failed job cannot be continued.
		_, err = b.svc.Cancel(ctx, j.ID)
		require.NoError(t, err)
	})
}

func TestFailedRunIsRefunded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, &scriptEngine{fail: &engine.Error{Code: "structured_output_invalid", Message: "no"}}, nil)
		c, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "Q", Effort: "medium"})
		require.NoError(t, err)
		j := waitFor(t, st, c.Job.ID, terminal)
		require.Equal(t, jobs.Failed, j.Status)
		require.Equal(t, "structured_output_invalid", *j.ErrorCode)
		credits, err := b.billing.JobCredits(ctx, j.ID)
		require.NoError(t, err)
		require.Zero(t, credits)
		_, err = b.svc.Continue(ctx, j.ID, store.TierEnterprise, "")
		require.ErrorIs(t, err, jobs.ErrNotContinuable)
	})
}

// TestRunOverItsBudgetTimesOut: at its effort's timeout a run stops and fails with timed_out, refunded
// (River's own deadline is the rescue margin later, which leaves time to record that).
func TestRunOverItsBudgetTimesOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		eng := &scriptEngine{block: make(chan struct{})}
		t.Cleanup(func() { close(eng.block) })
		b := setup(t, st, eng, func(c *jobs.Config) {
			c.JobTimeouts["low"] = 300 * time.Millisecond
			c.RescueMargin = time.Minute
		})
		c, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "Too slow", Effort: "low"})
		require.NoError(t, err)
		j := waitFor(t, st, c.Job.ID, terminal)
		require.Equal(t, jobs.Failed, j.Status)
		require.Equal(t, "timed_out", *j.ErrorCode)
		credits, err := b.billing.JobCredits(ctx, j.ID)
		require.NoError(t, err)
		require.Zero(t, credits)
	})
}

func TestCancelStopsARunningJob(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		eng := &scriptEngine{block: make(chan struct{}), started: make(chan string, 1)}
		b := setup(t, st, eng, nil)
		c, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "Slow one", Effort: "low"})
		require.NoError(t, err)
		<-eng.started
		j := waitFor(t, st, c.Job.ID, func(j store.ResearchJob) bool { return j.ReportSHA != nil })
		require.Equal(t, jobs.InProgress, j.Status)
		j, err = b.svc.Cancel(ctx, c.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobs.Cancelled, j.Status)
		runs, err := st.RunsForJob(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, jobs.RunInterrupted, runs[0].Status)
		// Cancelling again changes nothing.
		j, err = b.svc.Cancel(ctx, c.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobs.Cancelled, j.Status)
		// The worker noticed and stopped: the engine was cancelled without being released, and the
		// job stays cancelled.
		require.Eventually(t, func() bool {
			n, _ := st.CountJobsByStatus(ctx)
			return n[jobs.InProgress] == 0
		}, 30*time.Second, 10*time.Millisecond)
		_, err = b.svc.Continue(ctx, c.Job.ID, store.TierEnterprise, "")
		require.ErrorIs(t, err, jobs.ErrNotContinuable)
	})
}

// loopbackResolver answers every name with 127.0.0.1, like a DNS record pointing inside.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestProductionWebhookRefusedAtDialTime: a public-looking https name that resolves to a private
// address passes the create-time URL check but is refused when dialled; the attempts are recorded.
func TestProductionWebhookRefusedAtDialTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	cfg := testConfig(t)
	cfg.Production = true
	sealer, err := jobs.NewSealer([]byte("s"))
	require.NoError(t, err)
	client := netguard.NewClient(netguard.Policy{}, time.Second, netguard.WithResolver(loopbackResolver{}))
	svc, q := newService(t, jobs.Deps{Store: st, Billing: billing.New(st, billing.DefaultConfig()), Engine: &scriptEngine{}, Sealer: sealer,
		WebhookClient: client, Logger: quietLogger()}, cfg)
	start(t, q)
	acct, _, err := st.EnsureAccount(ctx, "prod@example.com", store.TierPro, false)
	require.NoError(t, err)
	_, err = svc.Create(ctx, jobs.CreateRequest{AccountID: acct.ID, Tier: store.TierPro, Question: "q", Effort: "low", WebhookURL: ptr("http://hooks.example.com/x")})
	require.True(t, fault.IsKind(err, fault.Invalid), "http is refused in production: %v", err)
	c, err := svc.Create(ctx, jobs.CreateRequest{AccountID: acct.ID, Tier: store.TierPro, APIKey: liveKey(t, st, acct.ID), Question: "q", Effort: "low",
		WebhookURL: ptr("https://hooks.example.com/x")})
	require.NoError(t, err)
	waitFor(t, st, c.Job.ID, terminal)
	require.Eventually(t, func() bool {
		ds, err := st.DeliveriesForJob(ctx, c.Job.ID)
		return err == nil && len(ds) == 3
	}, 30*time.Second, 20*time.Millisecond)
	ds, err := st.DeliveriesForJob(ctx, c.Job.ID)
	require.NoError(t, err)
	for _, d := range ds {
		require.False(t, d.Succeeded)
		require.Nil(t, d.StatusCode)
		require.Contains(t, *d.Error, "not allowed")
	}
}

func ptr[T any](v T) *T { return &v }

// A kill -9 can leave a workspace git cannot open, or one whose history does not read; the re-run of
// an initial run starts over in a fresh one (forgetting the revisions it had recorded) instead of
// failing the job.
func TestInitialRunRecoversABrokenWorkspace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, st *store.Store, jobID, dir string)
	}{
		{"half-written .git", func(t *testing.T, _ *store.Store, _, dir string) {
			gitDir := filepath.Join(dir, ".git")
			require.NoError(t, os.MkdirAll(gitDir, 0o750))
			require.NoError(t, os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core\n\x00"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/hea"), 0o600))
		}},
		{"torn branch ref after a recorded checkpoint", func(t *testing.T, st *store.Store, jobID, dir string) {
			repo, err := workspace.Init(dir)
			require.NoError(t, err)
			require.NoError(t, repo.WriteFile("report.md", []byte("# Draft\n")))
			sha, err := repo.Commit("Draft", workspace.CheckpointProgress)
			require.NoError(t, err)
			require.NoError(t, st.AddRevision(context.Background(), &store.ResearchRevision{JobID: jobID, SHA: sha, CheckpointType: "progress"}))
			head, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
			require.NoError(t, err)
			ref := strings.TrimSpace(strings.TrimPrefix(string(head), "ref: "))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", filepath.FromSlash(ref)), []byte("0f1e2d"), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				cfg := testConfig(t)
				sealer, err := jobs.NewSealer([]byte("test secret"))
				require.NoError(t, err)
				svc, q := newService(t, jobs.Deps{Store: st, Billing: billing.New(st, billing.DefaultConfig()), Engine: &scriptEngine{}, Sealer: sealer, Logger: quietLogger()}, cfg)
				acct, _, err := st.EnsureAccount(ctx, storetest.Name("user")+"@example.com", store.TierEnterprise, false)
				require.NoError(t, err)
				c, err := svc.Create(ctx, jobs.CreateRequest{AccountID: acct.ID, Tier: store.TierEnterprise, Question: "Q", Effort: "low"})
				require.NoError(t, err)
				tc.break_(t, st, c.Job.ID, filepath.Join(cfg.DataDir, "workspaces", c.Job.ID))

				start(t, q)
				j := waitFor(t, st, c.Job.ID, terminal)
				require.Equal(t, jobs.Completed, j.Status, "%v", j.ErrorMessage)
				revs, err := st.RevisionsForJob(ctx, j.ID)
				require.NoError(t, err)
				require.Len(t, revs, 2, "only the fresh run's progress and final checkpoints")
				require.Equal(t, *j.ReportSHA, revs[1].SHA)
				aside, err := filepath.Glob(filepath.Join(cfg.DataDir, "workspaces", c.Job.ID+".broken-*"))
				require.NoError(t, err)
				require.Len(t, aside, 1, "the broken folder is kept for inspection")
			})
		})
	}
}
