package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// newBuildEnv runs the app with started workers that include the expert build queue.
func newBuildEnv(t *testing.T, d store.Dialect) expertEnv {
	t.Helper()
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		cfg.App.Builds.Timeout = 30 * time.Second
		cfg.App.Jobs.TestOnly = true
		cfg.App.Jobs.PollInterval = 20 * time.Millisecond
	})
	env.Start(t)
	return expertEnv{env}
}

// waitBuild polls a build until it ends, within a generous bound (the worker polls every 20 ms).
func waitBuild(t *testing.T, e expertEnv, key, id string) gen.ExpertBuildJob {
	t.Helper()
	var b gen.ExpertBuildJob
	require.Eventually(t, func() bool {
		r := e.req(t, "GET", "/experts/build/"+id, key, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		r.JSON(t, &b)
		return b.Status == gen.ExpertBuildJobStatusSucceeded || b.Status == gen.ExpertBuildJobStatusFailed
	}, 30*time.Second, 20*time.Millisecond)
	return b
}

func TestExpertBuild(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBuildEnv(t, d)
			a := e.NewAccount(t, store.TierPro, false, 0)
			stranger := e.NewAccount(t, store.TierPro, false, 0)
			body := map[string]any{"domain_description": "Compare competitors for SaaS vendors: pricing, customers, strengths and weaknesses; output a scorecard.",
				"name": "SaaS Competitor Analyst"}

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/build", Token: a.Key, Body: body, Header: http.Header{"Idempotency-Key": {"b-1"}}})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var queued gen.ExpertBuildJob
			r.JSON(t, &queued)
			require.Equal(t, gen.ExpertBuildJobStatusQueued, queued.Status)
			id := queued.JobId.String()

			// The same key and body: the same build; a different body: 409.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/build", Token: a.Key, Body: body, Header: http.Header{"Idempotency-Key": {"b-1"}}})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var again gen.ExpertBuildJob
			r.JSON(t, &again)
			require.Equal(t, id, again.JobId.String())
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/build", Token: a.Key, Body: map[string]any{"domain_description": "other"},
				Header: http.Header{"Idempotency-Key": {"b-1"}}})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "idempotency_key_reused", r.Problem(t).Code)

			b := waitBuild(t, e, a.Key, id)
			require.Equal(t, gen.ExpertBuildJobStatusSucceeded, b.Status, "%+v", b)
			require.True(t, b.FinishedAt.IsSpecified() && !b.FinishedAt.IsNull())
			x := b.Expert.MustGet()
			require.Equal(t, gen.ExpertStatusBuilding, x.Status)
			require.Equal(t, "SaaS Competitor Analyst", x.Name)
			require.Contains(t, x.SkillNames, "competitor-matrix")
			require.NotEmpty(t, x.SystemPrompt)
			require.Equal(t, gen.ExpertCallerRole("owner"), x.CallerRole.MustGet())

			// The draft is listed among the caller's experts, once (the retried request built nothing).
			r = e.req(t, "GET", "/experts/custom", a.Key, nil)
			var page gen.ExpertSummaryPage
			r.JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.Equal(t, x.ExpertId, page.Items[0].ExpertId)
			require.Equal(t, gen.ExpertStatusBuilding, page.Items[0].Status)

			// Another account cannot read the build.
			require.Equal(t, http.StatusNotFound, e.req(t, "GET", "/experts/build/"+id, stranger.Key, nil).Status)

			// Finalize the draft.
			r = e.req(t, "PATCH", "/experts/"+x.ExpertId, a.Key, map[string]any{"status": "active"})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var fin gen.Expert
			r.JSON(t, &fin)
			require.Equal(t, gen.ExpertStatusActive, fin.Status)

			// Without a name, one is generated.
			r = e.req(t, "POST", "/experts/build", a.Key, map[string]any{"domain_description": "Screen early-stage biotech companies: pipeline, trial phases, cash runway and partnerships."})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			r.JSON(t, &queued)
			b = waitBuild(t, e, a.Key, queued.JobId.String())
			require.Equal(t, gen.ExpertBuildJobStatusSucceeded, b.Status)
			require.NotEmpty(t, b.Expert.MustGet().Name)
		})
	}
}
