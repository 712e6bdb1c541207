package batch_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// countingEngine is the offline engine that records how many runs overlap (across every process
// of the test) and holds each run briefly so that they do.
type countingEngine struct {
	engine.Engine
	mu            sync.Mutex
	running, peak int
}

func (c *countingEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	c.mu.Lock()
	c.running++
	c.peak = max(c.peak, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return engine.Result{}, ctx.Err()
	}
	return c.Engine.Run(ctx, in, sink)
}

// process is one serve process: its own connection pool, job workers and dispatcher.
type process struct {
	st    *store.Store
	batch *batch.Service
}

func startProcess(t *testing.T, url string, eng engine.Engine) process {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bill := billing.New(st, billing.DefaultConfig())
	bc := batch.DefaultConfig()
	bc.SweepInterval = 50 * time.Millisecond
	jc := jobs.DefaultConfig()
	jc.DataDir = t.TempDir()
	jc.TestOnly = true
	jc.PollInterval = 10 * time.Millisecond
	jc.BackgroundWorkers = 10
	sealer, err := jobs.NewSealer([]byte("multi-process secret"))
	require.NoError(t, err)
	qc := jc.Queue()
	qc.Logger = log
	q, err := queue.New(st, qc)
	require.NoError(t, err)
	svc, err := jobs.New(jobs.Deps{Store: st, Billing: bill, Engine: eng, Sealer: sealer, Logger: log, Queue: q}, jc)
	require.NoError(t, err)
	b, err := batch.New(batch.Deps{Store: st, Billing: bill, Jobs: svc, Queue: q, Logger: log}, bc)
	require.NoError(t, err)
	require.NoError(t, q.Start(ctx))
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(stop)
	})
	return process{st: st, batch: b}
}

// TestSeveralProcessesLaunchEachRowOnce: two processes dispatch one batch at once (their own
// dispatch jobs, sweeps and extra concurrent Dispatch calls); every row gets exactly one job,
// max_concurrent holds across both, and the counters add up.
func TestSeveralProcessesLaunchEachRowOnce(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			url := storetest.URL(t, d)
			eng := &countingEngine{Engine: extractive.New(extractive.Options{})}
			p1, p2 := startProcess(t, url, eng), startProcess(t, url, eng)
			ctx := context.Background()
			acct, _, err := p1.st.EnsureAccount(ctx, "multi@example.com", store.TierPro, false)
			require.NoError(t, err)
			qs := make([]string, 30)
			for i := range qs {
				qs[i] = "What is the half-life of isotope " + string(rune('A'+i)) + "?"
			}
			c, err := p1.batch.Create(ctx, batch.CreateInput{AccountID: acct.ID, Tier: acct.Tier, Name: "multi", Questions: qs, Effort: "low",
				MaxConcurrent: ptr(3)})
			require.NoError(t, err)
			var wg sync.WaitGroup
			for _, p := range []process{p1, p2, p1, p2} {
				wg.Go(func() {
					for range 10 {
						_ = p.batch.Dispatch(ctx, c.Batch.ID)
					}
				})
			}
			wg.Wait()
			deadline := time.Now().Add(90 * time.Second)
			var b store.Batch
			for {
				b, err = p2.st.BatchByID(ctx, c.Batch.ID)
				require.NoError(t, err)
				require.LessOrEqual(t, b.RunningRows, 3)
				require.Equal(t, b.TotalRows, b.PendingRows+b.RunningRows+b.SucceededRows+b.FailedRows)
				if batch.Terminal(b.Status) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.Equal(t, batch.ProcessedSuccessfully, b.Status)
			rows, err := p1.st.BatchRows(ctx, b.ID, nil)
			require.NoError(t, err)
			jobsSeen := map[string]bool{}
			for _, r := range rows {
				require.Equal(t, 1, r.Attempts, "row %d", r.RowNumber)
				require.NotNil(t, r.JobID)
				require.False(t, jobsSeen[*r.JobID])
				jobsSeen[*r.JobID] = true
			}
			var n int64
			require.NoError(t, p1.st.DB().Model(&store.ResearchJob{}).Where("account_id = ?", acct.ID).Count(&n).Error)
			require.EqualValues(t, 30, n, "no row was launched twice")
			require.LessOrEqual(t, eng.peak, 3)
		})
	}
}

func ptr[T any](v T) *T { return &v }
