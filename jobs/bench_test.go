package jobs_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// The measurements behind BENCHMARKS.md. They take a while and print numbers rather than assert
// them, so they run only with RESEARCH_BENCH=1:
//
//	RESEARCH_BENCH=1 [TEST_DATABASE_URL=postgres://...] go test ./jobs/ -run 'TestBench' -count=1 -v

func benchOnly(t *testing.T) {
	if os.Getenv("RESEARCH_BENCH") == "" {
		t.Skip("set RESEARCH_BENCH=1 to run the measurements behind BENCHMARKS.md")
	}
}

// slowBacklog is the real offline engine, except questions marked "[backlog]" take a second: they
// stand for long batch rows that keep a deep queue in place while the probes are measured.
type slowBacklog struct{ engine.Engine }

func (e slowBacklog) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	if strings.Contains(in.Question, "[backlog]") {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return engine.Result{}, ctx.Err()
		}
	}
	return e.Engine.Run(ctx, in, sink)
}

func percentiles(ds []time.Duration) (p50, p99, max time.Duration) {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return at(0.50), at(0.99), ds[len(ds)-1]
}

// benchCreate creates an effort-low job of the bundle's account (on the background queue when
// background is set) and returns its id.
func benchCreate(t *testing.T, b *bundle, question string, background bool) string {
	t.Helper()
	c, err := b.svc.Create(context.Background(), jobs.CreateRequest{AccountID: b.account.ID, Tier: store.TierEnterprise,
		Question: question, Effort: "low", Background: background})
	require.NoError(t, err)
	return c.Job.ID
}

func benchConfig(c *jobs.Config) {
	// Production defaults for everything that affects latency (PollInterval 50 ms).
	def := jobs.DefaultConfig()
	c.PollInterval = def.PollInterval
	c.CancelCheck = def.CancelCheck
}

// TestBenchDispatchLatency: POST → in_progress is started_at − created_at of each API job (both
// stamped by the database transactions of the create and of the dispatch), first with idle queues,
// then while 500 jobs sit queued on the background queue (batch work). Probes are created one
// every 25 ms.
func TestBenchDispatchLatency(t *testing.T) {
	benchOnly(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			b := setup(t, st, slowBacklog{extractive.New(extractive.Options{})}, func(c *jobs.Config) {
				benchConfig(c)
				c.AccountShare = 0 // one tenant: measure the queue, not the account's fair share of it
			})
			probe := func(what string, n int) {
				var ids []string
				for i := 0; i < n; i++ {
					ids = append(ids, benchCreate(t, b, fmt.Sprintf("Probe question %d about queue latency", i), false))
					time.Sleep(25 * time.Millisecond)
				}
				var lat []time.Duration
				for _, id := range ids {
					j := waitFor(t, st, id, func(j store.ResearchJob) bool { return j.StartedAt != nil })
					lat = append(lat, j.StartedAt.Sub(j.CreatedAt))
				}
				counts, err := st.CountJobsByStatus(ctx)
				require.NoError(t, err)
				p50, p99, mx := percentiles(lat)
				t.Logf("%s: POST→in_progress over %d API jobs, %s (now %v): p50 %s, p99 %s, max %s",
					d, len(lat), what, counts, p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), mx.Round(100*time.Microsecond))
			}
			// Once the queue's client is up and the engine warm (the first run loads its model): one
			// job run to the end.
			waitFor(t, st, benchCreate(t, b, "Warm-up question", false), terminal)
			probe("idle queues", 200)
			for i := 0; i < 500; i++ {
				benchCreate(t, b, fmt.Sprintf("Backlog row %d [backlog]", i), true)
			}
			counts, err := st.CountJobsByStatus(ctx)
			require.NoError(t, err)
			t.Logf("backlog before probes: %v", counts)
			probe("500 queued on the background queue", 200)
		})
	}
}

// TestBenchOfflineThroughput: 500 effort-low jobs on the API queue with RESEARCH_WORKERS=4 and the
// real offline engine (a small corpus). It reports jobs per second from first dispatch to last
// completion, and the dispatch gap inside the backlog: when a worker frees up, how long until the
// next queued job is in_progress (start of the k-th run minus end of the (k−4)-th).
func TestBenchOfflineThroughput(t *testing.T) {
	benchOnly(t)
	corpus := t.TempDir()
	for i := 0; i < 20; i++ {
		var sb strings.Builder
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&sb, "Report %d paragraph %d: electricity prices, gas supply, heat pumps and grid congestion in %d.\n", i, j, 2000+j)
		}
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s/doc%02d.txt", corpus, i), []byte(sb.String()), 0o600))
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			const workers, n = 4, 500
			b := setup(t, st, extractive.New(extractive.Options{CorpusDir: corpus}), func(c *jobs.Config) {
				benchConfig(c)
				c.Workers = workers
				c.AccountShare = 0 // one tenant: measure the workers, not its fair share of them
			})
			// The whole backlog is enqueued in one burst; creates are much faster than runs, so the
			// queue stays deep while the workers drain it.
			var ids []string
			for i := 0; i < n; i++ {
				ids = append(ids, benchCreate(t, b, fmt.Sprintf("What moved electricity prices in case %d?", i), false))
			}
			var starts, ends []time.Time
			for _, id := range ids {
				waitFor(t, st, id, terminal)
				runs, err := st.RunsForJob(ctx, id)
				require.NoError(t, err)
				require.Equal(t, jobs.RunCompleted, runs[0].Status)
				starts = append(starts, runs[0].StartedAt)
				ends = append(ends, *runs[0].FinishedAt)
			}
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
			elapsed := ends[len(ends)-1].Sub(starts[0])
			var gaps []time.Duration
			for k := workers; k < len(starts); k++ {
				gaps = append(gaps, max(0, starts[k].Sub(ends[k-workers])))
			}
			p50, p99, mx := percentiles(gaps)
			t.Logf("%s: %d low jobs with %d workers in %s = %.1f jobs/s; dispatch gap in the backlog p50 %s, p99 %s, max %s",
				d, n, workers, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), p50.Round(100*time.Microsecond),
				p99.Round(100*time.Microsecond), mx.Round(100*time.Microsecond))
		})
	}
}
