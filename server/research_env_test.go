package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
)

// testEngine is the real offline engine, with a few question markers that make runs behave in ways
// a test needs to control: "[block]" waits until the run is cancelled, "[fail]" fails with
// engine_error, "[files]" also writes nested and active files, "[secrets]" plants secrets, shell
// commands and cost fields in the timeline.
type testEngine struct{ offline engine.Engine }

func (e testEngine) Name() string { return "test-offline" }

func (e testEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	q := in.Question
	if strings.Contains(q, "[secrets]") {
		for _, ev := range plantedEvents() {
			if err := sink.Event(ctx, ev); err != nil {
				return engine.Result{}, err
			}
		}
	}
	if strings.Contains(q, "[files]") {
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
		for p, b := range map[string][]byte{"files/charts/q1.png": png, "site/index.html": []byte("<script>alert(1)</script>"), "data/notes.txt": []byte("plain notes\n")} {
			if err := in.Workspace.WriteFile(p, b); err != nil {
				return engine.Result{}, err
			}
		}
	}
	if strings.Contains(q, "[block]") {
		if err := in.Workspace.WriteFile("report.md", []byte("# Draft\n")); err != nil {
			return engine.Result{}, err
		}
		if _, err := sink.Checkpoint(ctx, "Draft", "progress"); err != nil {
			return engine.Result{}, err
		}
		<-ctx.Done()
		return engine.Result{}, ctx.Err()
	}
	if strings.Contains(q, "[drip]") {
		// Events a few milliseconds apart: several flushes of the run's event buffer.
		for i := 0; i < dripEvents; i++ {
			if err := sink.Event(ctx, engine.Event{Kind: engine.KindThinking, Title: fmt.Sprintf("step %d", i+1), Content: "thinking"}); err != nil {
				return engine.Result{}, err
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if strings.Contains(q, "[fail]") {
		return engine.Result{}, &engine.Error{Code: "engine_error", Message: "the test engine was told to fail"}
	}
	return e.offline.Run(ctx, in, sink)
}

// dripEvents is how many events a "[drip]" question's run emits.
const dripEvents = 120

// Secrets planted in the timeline; none of them may appear in a response.
const (
	plantedKey     = "rsk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFG"
	plantedBearer  = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl"
	plantedOpenAI  = "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	plantedCommand = "rm -rf /var/lib/important"
)

func plantedEvents() []engine.Event {
	return []engine.Event{
		{Kind: engine.KindThinking, Title: "calling the API with " + plantedKey, Content: "Authorization: Bearer " + plantedBearer + "\nusing " + plantedOpenAI},
		{Kind: engine.KindToolCall, Title: "shell", Content: plantedCommand, Data: map[string]any{"tool": "shell", "command": plantedCommand}},
		{Kind: engine.KindText, Title: "progress", Content: "Ran it:\n$ " + plantedCommand + "\nand\n```bash\n" + plantedCommand + "\n```\ndone",
			Data: map[string]any{"cost_usd": 1.25, "usage": map[string]any{"prompt_tokens": 1200}, "completion_tokens": 300,
				"nested": map[string]any{"api_key": plantedOpenAI, "note": "key " + plantedKey}, "headers": map[string]any{"Authorization": "Bearer " + plantedBearer}}},
	}
}

// testCorpus is a one-document RESEARCH_CORPUS_DIR. With it every run has a source and is charged
// as usual: a run with no source at all is not (TestResearchWithoutSourcesIsNotCharged).
func testCorpus(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	notes := "# Grid notes\n\nWholesale electricity prices in the EU rose in early 2024 because gas-fired plants set the\nmarginal price on most days.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "grid-notes.md"), []byte(notes), 0o600))
	return dir
}

// researchEnv is an app with started workers on the real (wrapped) offline engine.
type researchEnv struct {
	*servertest.Env
	svc *jobs.Service
}

type researchOpt func(*jobs.Config)

func newResearchEnv(t testing.TB, d store.Dialect, opts ...researchOpt) *researchEnv {
	t.Helper()
	return newResearchEnvWith(t, d, func(*servertest.Config) {}, opts...)
}

// newResearchEnvWith is newResearchEnv with a change to the server configuration.
func newResearchEnvWith(t testing.TB, d store.Dialect, configure servertest.Option, opts ...researchOpt) *researchEnv {
	t.Helper()
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		configure(cfg)
		jc := &cfg.App.Jobs
		jc.TestOnly = true
		jc.PollInterval = 20 * time.Millisecond
		jc.CancelCheck = 20 * time.Millisecond
		jc.WebhookSchedule = []time.Duration{0, 200 * time.Millisecond, 800 * time.Millisecond}
		jc.WebhookTimeout = 2 * time.Second
		jc.WebhookBudget = 6 * time.Second
		for _, o := range opts {
			o(jc)
		}
		cfg.App.Engine = testEngine{offline: extractive.New(extractive.Options{CorpusDir: testCorpus(t)})}
	})
	env.Start(t)
	return &researchEnv{Env: env, svc: env.Services.Research}
}

// create posts a job and returns the response.
func (e *researchEnv) create(t testing.TB, key string, body map[string]any, header http.Header) *servertest.Resp {
	t.Helper()
	return e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: key, Body: body, Header: header})
}

// mustCreate posts a job that must be accepted.
func (e *researchEnv) mustCreate(t testing.TB, key string, body map[string]any) gen.ResearchJobDetail {
	t.Helper()
	r := e.create(t, key, body, nil)
	require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
	var d gen.ResearchJobDetail
	r.JSON(t, &d)
	return d
}

// get reads a job's detail.
func (e *researchEnv) get(t testing.TB, key, ref string) gen.ResearchJobDetail {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + ref, Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var d gen.ResearchJobDetail
	r.JSON(t, &d)
	return d
}

// await polls the detail until ok holds, as a client would; the bound only stops a hung test.
func (e *researchEnv) await(t testing.TB, key, ref string, ok func(gen.ResearchJobDetail) bool) gen.ResearchJobDetail {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		d := e.get(t, key, ref)
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is still %s", ref, d.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isTerminal(d gen.ResearchJobDetail) bool {
	switch d.Status {
	case gen.JobStatusCompleted, gen.JobStatusFailed, gen.JobStatusBlocked, gen.JobStatusCancelled:
		return true
	}
	return false
}

func hasStatus(s gen.JobStatus) func(gen.ResearchJobDetail) bool {
	return func(d gen.ResearchJobDetail) bool { return d.Status == s }
}

// consumptionCount counts the consumption ledger entries of a job.
func consumptionCount(t *testing.T, st *store.Store, jobID string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, st.DB().Model(&store.LedgerEntry{}).Where("job_id = ? AND type = ?", jobID, store.TxConsumption).Count(&n).Error)
	return n
}
