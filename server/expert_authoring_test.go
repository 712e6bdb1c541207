package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestExpertAuthoring(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d, func(cfg *servertest.Config) { cfg.AuthoringRate = ratelimit.Rate{N: 2, Per: time.Hour} })
			a := e.NewAccount(t, store.TierPro, false, 10)
			stranger := e.NewAccount(t, store.TierPro, false, 10)

			// Extract: fields, steps and a prompt from the pasted text; nothing saved.
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/extract", Token: a.Key, Body: map[string]any{
				"text": "Vendor review playbook\n1. Confirm the legal entity.\n2. Check for breaches in the last 3 years.\n3. Rate risk low/medium/high and write a summary."}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var x gen.ExpertExtractResponse
			r.JSON(t, &x)
			require.Contains(t, x.SystemPrompt, "Vendor review playbook")
			sop := x.OutputSop.MustGet()
			require.Len(t, sop["steps"], 3)
			require.Equal(t, []any{"risk_level", "summary"}, x.OutputSchema.MustGet()["required"])
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/extract", Token: a.Key, Body: map[string]any{"text": "just some words"}})
			var none gen.ExpertExtractResponse
			r.JSON(t, &none)
			require.True(t, none.OutputSop.IsNull())
			require.True(t, none.OutputSchema.IsNull())
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/custom", Token: a.Key})
			var page gen.ExpertSummaryPage
			r.JSON(t, &page)
			require.Empty(t, page.Items, "extract saves nothing")

			// Generate-workflow: valid, then invalid with errors naming the place; then rate limited.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/generate-workflow", Token: a.Key, Body: map[string]any{"sop": map[string]any{"steps": []any{"Find {{vendor}}"}}, "sample_input": map[string]any{"name": "Acme"}}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var wf gen.GeneratedExpertWorkflow
			r.JSON(t, &wf)
			require.False(t, wf.Valid)
			require.Equal(t, "workflow.steps/0.instruction", wf.Errors[0].Field)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/generate-workflow", Token: a.Key, Body: map[string]any{"sop": map[string]any{"steps": []any{"Confirm the legal entity", "Rate the risk"}}}})
			r.JSON(t, &wf)
			require.True(t, wf.Valid)
			require.Len(t, wf.Workflow.MustGet()["steps"], 2)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/generate-workflow", Token: a.Key, Body: map[string]any{"sop": map[string]any{"steps": []any{"x"}}}})
			require.Equal(t, http.StatusTooManyRequests, r.Status)
			require.Equal(t, "rate_limited", r.Problem(t).Code)
			require.NotEmpty(t, r.Header.Get("Retry-After"))
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/generate-workflow", Token: stranger.Key, Body: map[string]any{"sop": map[string]any{"steps": []any{"x"}}}})
			require.Equal(t, http.StatusOK, r.Status, "buckets are per caller")

			// Plan preview of a registry expert, and of a private expert: a stranger gets 404.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/company-due-diligence/plan-preview", Token: a.Key, Body: map[string]any{"question": "Assess Acme Cloud Ltd as a payroll vendor"}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var plan gen.PlanPreviewResponse
			r.JSON(t, &plan)
			require.NotEmpty(t, plan.Plan.Steps)
			require.NotEmpty(t, plan.SubQuestions)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts", Token: a.Key, Body: map[string]any{"name": "Vendor checker",
				"system_prompt": "You check vendors.\n\n1. Identify the entity\n2. Search breach records\n", "output_schema": x.OutputSchema.MustGet()}})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var ex gen.Expert
			r.JSON(t, &ex)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/" + ex.ExpertId + "/plan-preview", Token: a.Key,
				Body: map[string]any{"question": "Is Acme Cloud a safe payroll vendor?", "context": "Spend: $1M"}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &plan)
			titles := []string{}
			for _, s := range plan.Plan.Steps {
				titles = append(titles, s.Title)
			}
			require.Equal(t, []string{"Read the context given", "Identify the entity", "Search breach records", "Fill the output fields"}, titles)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/" + ex.ExpertId + "/plan-preview", Token: stranger.Key, Body: map[string]any{"question": "q"}})
			require.Equal(t, http.StatusNotFound, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/" + ex.ExpertId + "/plan-preview", Token: a.Key, Body: map[string]any{"question": "q"}})
			require.Equal(t, http.StatusTooManyRequests, r.Status, "plan-preview has its own bucket of 2")
		})
	}
}

func TestWorkflowAuthoringOff(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, store.SQLite, func(cfg *servertest.Config) { cfg.WorkflowAuthoringOff = true })
	a := e.NewAccount(t, store.TierPro, false, 0)
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/generate-workflow", Token: a.Key, Body: map[string]any{"sop": map[string]any{"steps": []any{"x"}}}})
	require.Equal(t, http.StatusNotFound, r.Status)
}

func TestValidateExpert(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			a := e.NewAccount(t, store.TierPro, false, 10)
			viewer := e.NewAccount(t, store.TierPro, false, 10)
			good := map[string]any{"name": "Vendor checker", "system_prompt": "You check vendors against public breach records and sanctions lists, and cite each finding."}
			cases := []struct {
				name     string
				body     map[string]any
				errs     []string // fields, in order
				warnings []string
			}{
				{"valid create", map[string]any{"expert": good}, nil, nil},
				{"missing name, unknown field, bad tag", map[string]any{"expert": map[string]any{"system_prompt": "x", "colour": "red", "tags": []any{""}}},
					[]string{"colour", "tags/0", "name"}, nil},
				{"unknown skill and tool, template file not attached", map[string]any{"expert": merge(good, map[string]any{"skill_names": []any{"no-such-skill"},
					"mcp_tool_names": []any{"nope.tool"}, "output_template_file": "t.html"})}, []string{"skill_names/0", "mcp_tool_names/0", "output_template_file"}, nil},
				{"external ref in output schema", map[string]any{"expert": merge(good, map[string]any{"output_schema": map[string]any{"$ref": "file:///etc/passwd"}})},
					[]string{"output_schema"}, nil},
				{"admin only", map[string]any{"expert": merge(good, map[string]any{"is_public": true})}, []string{"is_public"}, nil},
				{"draft and short prompt warn", map[string]any{"expert": map[string]any{"name": "x", "system_prompt": "short", "status": "building"}}, nil,
					[]string{"status", "system_prompt"}},
			}
			for _, tc := range cases {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/validate", Token: a.Key, Body: tc.body})
				require.Equal(t, http.StatusOK, r.Status, "%s: %s", tc.name, r.Body)
				var v gen.ExpertValidateResponse
				r.JSON(t, &v)
				require.Equal(t, tc.errs == nil, v.Ok, tc.name)
				require.Equal(t, tc.errs, fieldsOf(v.Errors), "%s: %+v", tc.name, v.Errors)
				require.Equal(t, tc.warnings, fieldsOf(v.Warnings), "%s: %+v", tc.name, v.Warnings)
			}

			// As an update: merged over the current state; another account's expert is 404.
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts", Token: a.Key, Body: good})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var ex gen.Expert
			r.JSON(t, &ex)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/validate", Token: a.Key, Body: map[string]any{"expert_id": ex.ExpertId, "expert": map[string]any{"status": "building", "max_cost_usd": nil}}})
			var v gen.ExpertValidateResponse
			r.JSON(t, &v)
			require.Equal(t, []string{"status"}, fieldsOf(v.Errors), "active cannot go back to building")
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/validate", Token: a.Key, Body: map[string]any{"expert_id": ex.ExpertId, "expert": map[string]any{"tags": []any{"vendors"}}}})
			r.JSON(t, &v)
			require.True(t, v.Ok)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/validate", Token: viewer.Key, Body: map[string]any{"expert_id": ex.ExpertId, "expert": map[string]any{}}})
			require.Equal(t, http.StatusNotFound, r.Status)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/" + ex.ExpertId, Token: a.Key})
			var after gen.Expert
			r.JSON(t, &after)
			require.Equal(t, ex.Tags, after.Tags, "validate saves nothing")
		})
	}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func fieldsOf(errs []gen.FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}
