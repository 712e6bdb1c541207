package server_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/oapi-codegen/nullable"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// newExpertResearchEnv is an app whose started workers run jobs as experts: the real skill
// catalogue, expert service and MCP tool registry (mcpServers may be nil), on eng.
func newExpertResearchEnv(t *testing.T, d store.Dialect, eng engine.Engine, mcpServers []mcptool.ServerConfig) *researchEnv {
	t.Helper()
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		jc := &cfg.App.Jobs
		jc.TestOnly = true
		jc.PollInterval = 20 * time.Millisecond
		jc.CancelCheck = 20 * time.Millisecond
		cfg.App.Tools.Servers = mcpServers
		cfg.App.Engine = eng
	})
	env.Start(t)
	return &researchEnv{Env: env, svc: env.Services.Research}
}

// createExpert creates a custom expert and returns its id and slug.
func (e *researchEnv) createExpert(t *testing.T, key string, body map[string]any) (id, slug string) {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts", Token: key, Body: body})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var x gen.Expert
	r.JSON(t, &x)
	return x.ExpertId, x.Slug
}

// timeline reads a job's whole timeline (newest first).
func (e *researchEnv) timeline(t *testing.T, key, ref string) []gen.TimelineEvent {
	t.Helper()
	var out []gen.TimelineEvent
	cursor := ""
	for {
		path := "/api/v2/research/" + ref + "/timeline?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.Do(t, servertest.Req{Method: "GET", Path: path, Token: key})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var page gen.TimelineEventPage
		r.JSON(t, &page)
		out = append(out, page.Items...)
		if !page.HasMore {
			return out
		}
		cursor = page.NextCursor.MustGet()
	}
}

func eventTitled(events []gen.TimelineEvent, title string) *gen.TimelineEvent {
	for i := range events {
		if events[i].Title == title {
			return &events[i]
		}
	}
	return nil
}

const fjordNotes = "# Fjord ferries\n\nThe Vestland fjord ferry fleet converted 42 diesel ferries to battery power by 2023.\n" +
	"Charging stations at each quay draw power from the regional hydro grid.\n"

const heatNotes = "Heat pump adoption is limited by the upfront installation cost of 9,000 to 14,000 euros.\n" +
	"A shortage of trained installers also limits heat pump adoption in rural regions.\n"

// TestResearchAsRegistryExpert: a registry expert's output schema and default effort (clamped by
// tier) apply, the caller's json_schema wins, and the detail names the expert (unversioned).
func TestResearchAsRegistryExpert(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertResearchEnv(t, d, extractive.New(extractive.Options{}), nil)
			free := e.NewAccount(t, store.TierFree, false, 100)

			// literature-review defaults to high; the free tier runs medium at most.
			job := e.mustCreate(t, free.Key, map[string]any{"question": "What do studies say about heat pumps?", "expert_id": "literature-review"})
			require.Equal(t, gen.Effort("high"), job.RequestedEffort)
			require.Equal(t, gen.Effort("high"), job.Request.Effort)
			require.Equal(t, gen.Effort("medium"), job.Effort)
			require.Equal(t, gen.JobExpert{Id: "literature-review", Version: nullable.NewNullNullable[int]()}, job.Expert.MustGet())
			done := e.await(t, free.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.Effort("medium"), done.Runs[0].Effort)
			ev := eventTitled(e.timeline(t, free.Key, job.JobId.String()), "Expert")
			require.NotNil(t, ev)
			require.Contains(t, ev.Content, "Literature Review")

			// The expert's output_schema applies: summary, key findings and the answer's confidence.
			body, ct := multipartBody(t, part{filename: "heat-notes.txt", data: []byte(heatNotes)})
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: free.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var att struct {
				AttachmentID string `json:"attachment_id"`
			}
			r.JSON(t, &att)
			job = e.mustCreate(t, free.Key, map[string]any{"question": "What limits heat pump adoption?", "expert_id": "general-researcher",
				"attachment_ids": []string{att.AttachmentID}})
			done = e.await(t, free.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			out := done.StructuredOutput.MustGet()
			require.Contains(t, out["summary"], "upfront installation cost", "the expert's output_schema applied")
			require.NotEmpty(t, out["key_findings"])
			require.Contains(t, []any{"high", "medium", "low"}, out["confidence"])

			// The caller's json_schema wins over the expert's output_schema, as an explicit effort over
			// its default.

			mine := map[string]any{"type": "object", "properties": map[string]any{"headline": map[string]any{"type": "string"}}, "additionalProperties": false}
			job = e.mustCreate(t, free.Key, map[string]any{"question": "What limits heat pump adoption?", "expert_id": "general-researcher",
				"effort": "low", "json_schema": mine, "attachment_ids": []string{att.AttachmentID}})
			require.Equal(t, gen.Effort("low"), job.RequestedEffort)
			done = e.await(t, free.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			for k := range done.StructuredOutput.MustGet() {
				require.Equal(t, "headline", k)
			}

			// Without an expert the default stays medium and the detail names none.
			job = e.mustCreate(t, free.Key, map[string]any{"question": "Plain question"})
			require.Equal(t, gen.Effort("medium"), job.RequestedEffort)
			require.True(t, job.Expert.IsNull())
		})
	}
}

// TestResearchAsCustomExpert: a custom expert's context file is a source of the report, its output
// schema and default_depth apply, required_tool_calls are monitored, the detail names the version
// that ran (a new one after an update), and an archived or foreign expert is refused.
func TestResearchAsCustomExpert(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertResearchEnv(t, d, extractive.New(extractive.Options{}), nil)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			other := e.NewAccount(t, store.TierPro, false, 100)
			id, slug := e.createExpert(t, owner.Key, map[string]any{
				"name": "Fjord Ferry Analyst", "system_prompt": "You analyse ferry fleets.\n\n## Fleet\n\n## Power supply\n",
				"default_depth": "quick", "skill_names": []string{"fact-checking"},
				"mcp_tool_names": []string{"search_files"}, "required_tool_calls": []string{"search_files"},
				"output_schema": map[string]any{"type": "object", "required": []string{"summary"}, "properties": map[string]any{"summary": map[string]any{"type": "string"}}},
				"context_files": []map[string]any{{"name": "fjord-notes.md", "content": fjordNotes}},
			})

			// By slug, no effort: default_depth quick runs low.
			q := "How many ferries in the Vestland fjord fleet were converted to battery power?"
			job := e.mustCreate(t, owner.Key, map[string]any{"question": q, "expert_id": slug})
			require.Equal(t, gen.Effort("low"), job.RequestedEffort)
			require.Equal(t, gen.Effort("low"), job.Effort)
			require.Equal(t, slug, job.ExpertId.MustGet())
			require.Equal(t, id, job.Expert.MustGet().Id)
			require.Equal(t, 1, job.Expert.MustGet().Version.MustGet())
			done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Contains(t, done.Report.Markdown, "context/fjord-notes.md")
			require.Contains(t, done.Report.Markdown, "42 diesel ferries")
			require.Contains(t, done.StructuredOutput.MustGet(), "summary")
			require.Equal(t, gen.JobExpert{Id: id, Version: nullable.NewNullableWithValue(1)}, done.Expert.MustGet())
			// The extractive engine calls no tools: the required tool is reported missing, here and in the timeline.
			require.Equal(t, gen.RequiredToolCallsOutcome{Required: []string{"search_files"}, Succeeded: []string{}, Missing: []string{"search_files"}},
				done.RequiredToolCalls.MustGet())
			events := e.timeline(t, owner.Key, job.JobId.String())
			require.NotNil(t, eventTitled(events, "Required tool calls missed"))
			ev := eventTitled(events, "Expert")
			require.NotNil(t, ev)
			require.Contains(t, ev.Content, "version 1")
			require.Contains(t, ev.Content, "fact-checking")
			// Context files are read, not committed to the job's workspace.
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/context/fjord-notes.md", Token: owner.Key})
			require.Equal(t, http.StatusNotFound, r.Status)

			// The caller's json_schema wins over the expert's output_schema.
			mine := map[string]any{"type": "object", "properties": map[string]any{"headline": map[string]any{"type": "string"}}, "additionalProperties": false}
			job = e.mustCreate(t, owner.Key, map[string]any{"question": q, "expert_id": id, "json_schema": mine, "effort": "medium"})
			require.Equal(t, gen.Effort("medium"), job.RequestedEffort)
			done = e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			for k := range done.StructuredOutput.MustGet() {
				require.Equal(t, "headline", k)
			}

			// An update is a new version; the next run names it.
			r = e.Do(t, servertest.Req{Method: "PATCH", Path: "/api/v2/experts/" + id, Token: owner.Key, Body: map[string]any{"description": "Now with a description"}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			job = e.mustCreate(t, owner.Key, map[string]any{"question": q, "expert_id": id})
			require.Equal(t, 2, job.Expert.MustGet().Version.MustGet())
			done = e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Equal(t, 2, done.Expert.MustGet().Version.MustGet())

			// Another account cannot run a private expert; nobody can run an archived one.
			r = e.create(t, other.Key, map[string]any{"question": q, "expert_id": id}, nil)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			r = e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/experts/" + id, Token: owner.Key})
			require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
			for _, ref := range []string{id, slug} {
				r = e.create(t, owner.Key, map[string]any{"question": q, "expert_id": ref}, nil)
				require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			}
		})
	}
}
