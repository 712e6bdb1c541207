package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestV1Research(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			// deep has no budget here, so it answers in_progress at once, deterministically; the
			// others wait (at most a minute) for the job, which the offline engine finishes quickly.
			e := newResearchEnvWith(t, d, func(cfg *servertest.Config) {
				cfg.V1Budgets = server.V1Budgets{"ultra_fast": time.Minute, "ultra_deep": time.Minute}
			})
			owner := e.NewAccount(t, store.TierPro, false, 100)
			other := e.NewAccount(t, store.TierPro, false, 100)

			tests := []struct {
				depth      string
				wantStatus int
				effort     gen.Effort
			}{
				{depth: "ultra_fast", wantStatus: http.StatusOK, effort: "low"},
				{depth: "", wantStatus: http.StatusAccepted, effort: "medium"},
				{depth: "deep", wantStatus: http.StatusAccepted, effort: "medium"},
				{depth: "ultra_deep", wantStatus: http.StatusOK, effort: "high"},
			}
			for _, tc := range tests {
				body := map[string]any{"question": "Who won the 2024 Nobel Prize in Chemistry?", "approach": "general", "mcp_tools": []string{"search_files"}}
				if tc.depth != "" {
					body["depth"] = tc.depth
				}
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/v1/grep/research", Token: owner.Key, Body: body})
				require.Equal(t, tc.wantStatus, r.Status, "%s: %s", tc.depth, r.Body)
				var v gen.V1ResearchResponse
				r.JSON(t, &v)
				if tc.wantStatus == http.StatusAccepted {
					require.Equal(t, gen.V1ResearchResponseStatus("in_progress"), v.Status)
					require.True(t, v.Result.IsNull())
					require.True(t, v.CompletedAt.IsNull())
					e.await(t, owner.Key, v.JobId.String(), isTerminal)
					r = e.Do(t, servertest.Req{Method: "GET", Path: "/v1/grep/research/" + v.JobId.String(), Token: owner.Key})
					require.Equal(t, http.StatusOK, r.Status)
					r.JSON(t, &v)
				}
				require.Equal(t, gen.V1ResearchResponseStatus("complete"), v.Status, tc.depth)
				require.NotEmpty(t, v.Result.MustGet())
				require.False(t, v.CompletedAt.MustGet().Before(v.CreatedAt))

				// The same job under v2, at the depth's effort.
				job := e.get(t, owner.Key, v.JobId.String())
				require.Equal(t, tc.effort, job.Effort, tc.depth)
				require.Equal(t, job.Report.Markdown, v.Result.MustGet())

				r = e.Do(t, servertest.Req{Method: "GET", Path: "/v1/grep/research/" + v.JobId.String(), Token: other.Key})
				require.Equal(t, http.StatusNotFound, r.Status)
			}

			// Bad input changes nothing: unknown tools, unknown depth, no question.
			for name, body := range map[string]map[string]any{
				"unknown tool":  {"question": "q", "mcp_tools": []string{"no_such_tool"}},
				"unknown depth": {"question": "q", "depth": "medium"},
				"no question":   {"depth": "deep"},
			} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/v1/grep/research", Token: owner.Key, Body: body})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, name)
				if name == "unknown tool" {
					require.Equal(t, "mcp_tools", (*r.Problem(t).Errors)[0].Field)
				}
			}
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research?limit=100", Token: owner.Key})
			var page gen.ResearchJobSummaryPage
			r.JSON(t, &page)
			require.Len(t, page.Items, len(tests))
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/v1/grep/research", Body: map[string]any{"question": "q"}})
			require.Equal(t, http.StatusUnauthorized, r.Status)
		})
	}
}
