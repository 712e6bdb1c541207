package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
)

// campaignCorpus is what the offline engine searches in campaign tests: a list of companies to
// discover and a fact about each.
var campaignCorpus = map[string]string{
	"vendors.md": "# Vendors\n\nAcme Corp is a vendor of solar panels based in Lyon.\n\nGlobex Ltd is a vendor of wind turbines based in Leeds.\n\nInitech GmbH is a vendor of heat pumps based in Essen.\n",
	"acme.md":    "# Acme Corp\n\nAcme Corp publishes a SOC 2 Type II report on its trust center. Acme Corp employs 120 people.\n",
	"globex.md":  "# Globex Ltd\n\nGlobex Ltd does not publish a SOC 2 report. Globex Ltd employs 80 people.\n",
	"initech.md": "# Initech GmbH\n\nInitech GmbH publishes an ISO 27001 certificate. Initech GmbH employs 45 people.\n",
}

// gateAnswerer is the offline engine's answerer plus markers: an assignment containing "[fail]"
// fails, one containing "[gate]" holds until the test releases it.
type gateAnswerer struct {
	inner   engine.Answerer
	release chan struct{}
	failing atomic.Bool // while set, assignments containing "[flaky]" fail too
	mu      sync.Mutex
	running int
}

type gateSession struct {
	inner engine.AnswerSession
	g     *gateAnswerer
}

func (g *gateAnswerer) OpenAnswers(ctx context.Context, cfg engine.AnswerConfig) (engine.AnswerSession, error) {
	s, err := g.inner.OpenAnswers(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return gateSession{inner: s, g: g}, nil
}

func (s gateSession) Close() error { return s.inner.Close() }

func (s gateSession) Answer(ctx context.Context, a engine.Assignment) (engine.Result, error) {
	q := a.Question
	if strings.Contains(q, "[fail]") || (strings.Contains(q, "[flaky]") && s.g.failing.Load()) {
		return engine.Result{}, &engine.Error{Code: engine.CodeEngineError, Message: "the test answerer was told to fail"}
	}
	if strings.Contains(q, "[gate]") {
		s.g.mu.Lock()
		s.g.running++
		s.g.mu.Unlock()
		defer func() {
			s.g.mu.Lock()
			s.g.running--
			s.g.mu.Unlock()
		}()
		select {
		case <-s.g.release:
		case <-ctx.Done():
			return engine.Result{}, ctx.Err()
		}
	}
	return s.inner.Answer(ctx, a)
}

func (g *gateAnswerer) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// campaignEnv is an app with started job workers and the campaign executor.
type campaignEnv struct {
	*servertest.Env
	answers *gateAnswerer
	billing *billing.Service
	svc     *campaign.Service
}

func newCampaignEnv(t testing.TB, d store.Dialect, tune ...func(*campaign.Config)) *campaignEnv {
	t.Helper()
	corpus := t.TempDir()
	for name, text := range campaignCorpus {
		require.NoError(t, os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o600))
	}
	g := &gateAnswerer{inner: engine.Answers(extractive.New(extractive.Options{CorpusDir: corpus}), t.TempDir()), release: make(chan struct{}, 1000)}
	out := &campaignEnv{answers: g}
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		cfg.App.Jobs.TestOnly = true
		cfg.App.Jobs.PollInterval = 20 * time.Millisecond
		cc := &cfg.App.Campaigns
		cc.ChunkSize, cc.SweepInterval = 2, 100*time.Millisecond
		for _, f := range tune {
			f(cc)
		}
		cfg.App.Answerer = g
	})
	env.Start(t)
	out.billing, out.svc = env.Services.Billing, env.Services.Campaigns
	out.Env = env
	return out
}

func (e *campaignEnv) releaseAnswers(n int) {
	for range n {
		e.answers.release <- struct{}{}
	}
}

func (e *campaignEnv) create(t testing.TB, key string, body map[string]any) gen.CampaignDetail {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns", Token: key, Body: body})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var d gen.CampaignDetail
	r.JSON(t, &d)
	return d
}

func (e *campaignEnv) get(t testing.TB, key, id string) gen.CampaignDetail {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id, Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var d gen.CampaignDetail
	r.JSON(t, &d)
	return d
}

func (e *campaignEnv) approve(t testing.TB, key string, d gen.CampaignDetail) gen.CampaignSummary {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + d.CampaignId.String() + "/approve", Token: key,
		Body: map[string]any{"review_digest": d.ReviewDigest}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var s gen.CampaignSummary
	r.JSON(t, &s)
	return s
}

// await polls the campaign until ok holds; the bound only stops a hung test.
func (e *campaignEnv) await(t testing.TB, key, id string, ok func(gen.CampaignDetail) bool) gen.CampaignDetail {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		d := e.get(t, key, id)
		for _, st := range d.Stages {
			require.LessOrEqual(t, st.RecordsDone+st.RecordsFailed, st.RecordsTotal, "%+v", st)
		}
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(d)
			t.Fatalf("campaign %s is still %s: %s", id, d.Status, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusIs(s ...gen.CampaignStatus) func(gen.CampaignDetail) bool {
	return func(d gen.CampaignDetail) bool {
		for _, x := range s {
			if d.Status == x {
				return true
			}
		}
		return false
	}
}

func records(n int, format string) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"company": fmt.Sprintf(format, i+1)}
	}
	return out
}
