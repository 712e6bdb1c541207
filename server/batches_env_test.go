package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
)

// gateEngine is the test engine plus a "[gate]" marker: such a run holds until the test releases
// it (one release per run), so a test can hold rows running and observe the dispatcher. It counts
// the runs in flight and remembers the peak.
type gateEngine struct {
	testEngine
	release chan struct{}
	mu      sync.Mutex
	running int
	peak    int
}

func (g *gateEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	g.mu.Lock()
	g.running++
	g.peak = max(g.peak, g.running)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	if strings.Contains(in.Question, "[gate]") {
		select {
		case <-g.release:
		case <-ctx.Done():
			return engine.Result{}, ctx.Err()
		}
	}
	return g.testEngine.Run(ctx, in, sink)
}

// awaitInFlight waits until n runs are inside the engine at once; the bound only stops a hung test.
func (g *gateEngine) awaitInFlight(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		g.mu.Lock()
		running := g.running
		g.mu.Unlock()
		if running == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs in the engine, want %d", running, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (g *gateEngine) Peak() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// batchEnv is an app with started job workers and the batch dispatcher.
type batchEnv struct {
	*servertest.Env
	engine  *gateEngine
	billing *billing.Service
}

func newBatchEnv(t testing.TB, d store.Dialect, opts ...researchOpt) *batchEnv {
	t.Helper()
	return newBatchEnvWith(t, d, nil, opts...)
}

// newBatchEnvWith is newBatchEnv with a change to the configuration.
func newBatchEnvWith(t testing.TB, d store.Dialect, configure servertest.Option, opts ...researchOpt) *batchEnv {
	t.Helper()
	g := &gateEngine{testEngine: testEngine{offline: extractive.New(extractive.Options{CorpusDir: testCorpus(t)})}, release: make(chan struct{}, 200)}
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		jc := &cfg.App.Jobs
		jc.TestOnly = true
		jc.PollInterval = 20 * time.Millisecond
		jc.CancelCheck = 20 * time.Millisecond
		jc.BackgroundWorkers = 10
		for _, o := range opts {
			o(jc)
		}
		cfg.App.Batches.SweepInterval = 100 * time.Millisecond
		cfg.App.Engine = g
		if configure != nil {
			configure(cfg)
		}
	})
	env.Start(t)
	return &batchEnv{Env: env, engine: g, billing: env.Services.Billing}
}

// release lets n gated runs finish.
func (e *batchEnv) releaseRuns(n int) {
	for range n {
		e.engine.release <- struct{}{}
	}
}

func (e *batchEnv) createBatch(t testing.TB, key string, body map[string]any) gen.BatchDetail {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches", Token: key, Body: body})
	require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
	var d gen.BatchDetail
	r.JSON(t, &d)
	return d
}

func (e *batchEnv) getBatch(t testing.TB, key, id string, rows bool) gen.BatchDetail {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: fmt.Sprintf("/api/v2/batches/%s?include_rows=%t", id, rows), Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var d gen.BatchDetail
	r.JSON(t, &d)
	requireCountersAddUp(t, d.Counters)
	return d
}

func (e *batchEnv) results(t testing.TB, key, id, rowStatus string) gen.BatchResultsResponse {
	t.Helper()
	path := "/api/v2/batches/" + id + "/results"
	if rowStatus != "" {
		path += "?row_status=" + rowStatus
	}
	r := e.Do(t, servertest.Req{Method: "GET", Path: path, Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var res gen.BatchResultsResponse
	r.JSON(t, &res)
	return res
}

// awaitBatch polls the batch (without rows, as a client's cheap poll would) until ok holds; the
// bound only stops a hung test. each, when set, sees every poll (invariants checked throughout).
func (e *batchEnv) awaitBatch(t testing.TB, key, id string, ok func(gen.BatchDetail) bool, each func(gen.BatchDetail)) gen.BatchDetail {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		d := e.getBatch(t, key, id, false)
		if each != nil {
			each(d)
		}
		if ok(d) {
			return e.getBatch(t, key, id, true)
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch %s is still %s %+v", id, d.Status, d.Counters)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func batchTerminal(d gen.BatchDetail) bool {
	switch d.Status {
	case gen.BatchStatusPROCESSEDSUCCESSFULLY, gen.BatchStatusPROCESSEDWITHERRORS, gen.BatchStatusCANCELLED:
		return d.Counters.RunningRows == 0
	}
	return false
}

func requireCountersAddUp(t testing.TB, c gen.BatchCounters) {
	t.Helper()
	require.Equal(t, c.TotalRows, c.SucceededRows+c.FailedRows+c.PendingRows+c.RunningRows, "%+v", c)
	require.Equal(t, c.ProcessedRows, c.SucceededRows+c.FailedRows, "%+v", c)
}

func questions(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}
