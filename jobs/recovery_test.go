package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestRunSurvivesProcessDeath: a process dies mid-run (its database pool vanishes, as with kill -9:
// nothing is written, its queue entry stays claimed), a new process starts, River's rescuer
// re-queues the entry after the run's own effort timeout plus the margin (while other efforts may
// run for an hour), and the job ends terminal, its run charged once. The graceful variant stops the
// first client with a shutdown deadline shorter than the run.
func TestRunSurvivesProcessDeath(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		for _, mode := range []string{"killed", "shutdown"} {
			t.Run(string(d)+"/"+mode, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				url := storetest.URL(t, d)
				stA := openStore(t, url)
				require.NoError(t, stA.Migrate(ctx))

				// Process A: its engine never finishes on its own.
				engA := &scriptEngine{block: make(chan struct{}), started: make(chan string, 1)}
				a := setup(t, stA, engA, nil)
				// Registered after setup, so it runs first at cleanup and the dead process's worker
				// returns at once.
				t.Cleanup(func() { close(engA.block) })
				c, err := a.svc.Create(ctx, jobs.CreateRequest{AccountID: a.account.ID, Tier: store.TierEnterprise, Question: "Survive a crash", Effort: "medium"})
				require.NoError(t, err)
				<-engA.started
				running := waitFor(t, stA, c.Job.ID, func(j store.ResearchJob) bool { return j.Status == jobs.InProgress })

				switch mode {
				case "killed":
					// The process is gone: no more writes, no resignation, no completion.
					require.NoError(t, stA.Close())
				case "shutdown":
					stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
					require.NoError(t, a.queue.Stop(stopCtx))
					cancel()
				}

				stB := openStore(t, url)
				if mode == "killed" {
					// A dead leader cannot resign; its lease would expire on its own after ~15 s.
					require.NoError(t, stB.DB().Exec("DELETE FROM river_leader").Error)
					// The rescuer considers a medium run stuck once it has been claimed for RescueDelay("medium").
					time.Sleep(time.Until(running.StartedAt.Add(4500 * time.Millisecond)))
				}
				// Process B: a short medium timeout and margin, an hour for high and build (a rescue
				// delay derived from the longest effort would hold the killed run that long), an
				// engine that finishes.
				engB := &scriptEngine{}
				b := setup(t, stB, engB, func(c *jobs.Config) {
					c.JobTimeouts = map[string]time.Duration{"low": 3 * time.Second, "medium": 3 * time.Second, "high": time.Hour, "build": time.Hour}
					c.RescueMargin = time.Second
				})
				require.Equal(t, 4*time.Second, b.svc.Config().RescueDelay("medium"))
				done := waitFor(t, stB, c.Job.ID, terminal)
				require.Equal(t, jobs.Completed, done.Status, "error: %v %v", done.ErrorCode, done.ErrorMessage)
				require.Equal(t, 1, engB.Runs())

				runs, err := stB.RunsForJob(ctx, c.Job.ID)
				require.NoError(t, err)
				require.Len(t, runs, 1, "the resumed run is the same run")
				require.Equal(t, jobs.RunCompleted, runs[0].Status)
				require.EqualValues(t, 1, consumptions(t, stB, c.Job.ID), "charged once")
				credits, err := billing.New(stB, billing.DefaultConfig()).JobCredits(ctx, c.Job.ID)
				require.NoError(t, err)
				require.EqualValues(t, 1, credits)
				events, err := stB.ListEvents(ctx, c.Job.ID, store.PageRequest{Limit: 100})
				require.NoError(t, err)
				resumed := false
				for _, e := range events.Items {
					resumed = resumed || e.Content == "A worker resumed the run after an interruption."
				}
				require.True(t, resumed)
			})
		}
	}
}

// countingEngine records how many runs of each job are in flight at once, across processes.
type countingEngine struct {
	mu       sync.Mutex
	inFlight map[string]int
	runs     map[string]int
	perProc  map[string]int
	overlap  bool
}

// proc is one process's view of the shared counting engine.
type proc struct {
	*countingEngine
	name string
}

func (e proc) Name() string { return "counting" }

func (e proc) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	e.mu.Lock()
	e.perProc[e.name]++
	e.mu.Unlock()
	return e.countingEngine.Run(ctx, in, sink)
}

func (e *countingEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	e.mu.Lock()
	e.inFlight[in.Question]++
	e.runs[in.Question]++
	e.overlap = e.overlap || e.inFlight[in.Question] > 1
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.inFlight[in.Question]--
		e.mu.Unlock()
	}()
	time.Sleep(20 * time.Millisecond) // long enough for another process to try the same entry
	return (&scriptEngine{}).Run(ctx, in, sink)
}

// TestTwoProcessesNeverRunAJobTwice: two services on one database (two connection pools, as two
// serve processes) share the queue; every job runs exactly once.
func TestTwoProcessesNeverRunAJobTwice(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := storetest.URL(t, d)
			st1, st2 := openStore(t, url), openStore(t, url)
			require.NoError(t, st1.Migrate(ctx))
			eng := &countingEngine{inFlight: map[string]int{}, runs: map[string]int{}, perProc: map[string]int{}}
			p1 := setup(t, st1, proc{eng, "one"}, func(c *jobs.Config) { c.Workers = 3 })
			setup(t, st2, proc{eng, "two"}, func(c *jobs.Config) { c.Workers = 3 })
			var ids []string
			for i := 0; i < 24; i++ {
				c, err := p1.svc.Create(ctx, jobs.CreateRequest{AccountID: p1.account.ID, Tier: store.TierEnterprise, Question: fmt.Sprintf("Question %d", i), Effort: "medium"})
				require.NoError(t, err)
				ids = append(ids, c.Job.ID)
			}
			for _, id := range ids {
				require.Equal(t, jobs.Completed, waitFor(t, st1, id, terminal).Status)
				require.EqualValues(t, 1, consumptions(t, st1, id))
			}
			eng.mu.Lock()
			defer eng.mu.Unlock()
			require.False(t, eng.overlap, "a job ran in two places at once")
			require.Positive(t, eng.perProc["one"], "both processes worked")
			require.Positive(t, eng.perProc["two"], "both processes worked")
			for q, n := range eng.runs {
				require.Equal(t, 1, n, q)
			}
		})
	}
}

// TestReaperFailsOrphanedJobs: a job whose queue entry can no longer run it (discarded after its
// last attempt) is failed by the periodic reaper instead of staying queued forever.
func TestReaperFailsOrphanedJobs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		eng := &scriptEngine{block: make(chan struct{}), started: make(chan string, 1)}
		b := setup(t, st, eng, func(c *jobs.Config) {
			c.Workers = 1
			c.ReaperInterval = 200 * time.Millisecond
		})
		t.Cleanup(func() { close(eng.block) })
		busy, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "Keeps the worker busy", Effort: "low"})
		require.NoError(t, err)
		<-eng.started
		orphan, err := b.svc.Create(ctx, jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise, Question: "Orphan", Effort: "low"})
		require.NoError(t, err)
		require.NoError(t, st.DB().Exec("UPDATE river_job SET state = 'discarded', finalized_at = ? WHERE id = ?", time.Now().UTC(), *orphan.Job.RiverJobID).Error)
		j := waitFor(t, st, orphan.Job.ID, terminal)
		require.Equal(t, jobs.Failed, j.Status)
		require.Equal(t, "internal_error", *j.ErrorCode)
		still, err := st.ResearchJobByID(ctx, busy.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobs.InProgress, still.Status, "a live run is left alone")
	})
}
