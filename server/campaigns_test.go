package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func stage(key, fanout string, deps []string, extra map[string]any) map[string]any {
	s := map[string]any{"key": key, "title": "Stage " + key, "op": "agent", "fanout": fanout, "depends_on": deps, "instruction": "Research " + key}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// TestCampaignCreateValidation: every refused create is 422 (402 for credits with start) naming
// the field, and creates nothing.
func TestCampaignCreateValidation(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d, func(c *campaign.Config) { c.Limits.MaxAssignmentChars = 200 })
			acct := e.NewAccount(t, store.TierPro, false, 100)
			broke := e.NewAccount(t, store.TierPro, false, 0)
			recs := []any{map[string]any{"company": "Acme"}}
			plan := func(stages ...map[string]any) map[string]any { return map[string]any{"stages": stages} }
			for _, tc := range []struct {
				name   string
				key    string
				body   map[string]any
				status int
				field  string
			}{
				{"unknown field", acct.Key, map[string]any{"instruction": "x", "records": recs, "colour": 1}, 422, "colour"},
				{"unknown stage field", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, map[string]any{"colour": 1}))}, 422, ""},
				{"plan and one-stage", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, nil)), "instruction": "x"}, 422, "instruction"},
				{"questions and records", acct.Key, map[string]any{"instruction": "x", "questions": []string{"q"}, "records": recs}, 422, "records"},
				{"no assignment", acct.Key, map[string]any{"records": recs}, 422, "plan"},
				{"too long", acct.Key, map[string]any{"instruction": strings.Repeat("word ", 30), "records": []any{map[string]any{"company": strings.Repeat("x", 100)}}}, 422, "records/0"},
				{"duplicate key", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, nil), stage("a", "root", nil, nil))}, 422, "plan/stages/1/key"},
				{"unknown dependency", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, nil), stage("b", "aggregate", []string{"zz"}, nil))}, 422, "plan/stages/1/depends_on/0"},
				{"later dependency (cycle)", acct.Key, map[string]any{"plan": plan(stage("a", "aggregate", []string{"b"}, nil), stage("b", "aggregate", []string{"a"}, nil))}, 422, "plan/stages/0/depends_on/0"},
				{"root with dependency", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, nil), stage("b", "root", []string{"a"}, nil))}, 422, "plan/stages/1/depends_on"},
				{"deliverable of no stage", acct.Key, map[string]any{"plan": map[string]any{"stages": []any{stage("a", "root", nil, nil)},
					"deliverables": []any{map[string]any{"key": "out", "title": "Out", "stage_key": "zz", "format": "csv"}}}}, 422, "plan/deliverables/0/stage_key"},
				{"records_field off root", acct.Key, map[string]any{"plan": plan(stage("a", "aggregate", nil, map[string]any{"records_field": "x"})), "records": recs}, 422, "plan/stages/0/records_field"},
				{"records_field without schema", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, map[string]any{"records_field": "x"}))}, 422, "plan/stages/0/records_field"},
				{"external ref", acct.Key, map[string]any{"instruction": "x", "records": recs, "output_schema": map[string]any{"$ref": "https://example.com/s.json"}}, 422, "output_schema"},
				{"unknown agent", acct.Key, map[string]any{"instruction": "x", "records": recs, "agent": map[string]any{"id": "no-such-expert"}}, 422, "agent/id"},
				{"budget below one worker", acct.Key, map[string]any{"instruction": "x", "records": recs, "effort": "high", "max_credits": 4}, 422, "max_credits"},
				{"stage budget below one worker", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, map[string]any{"effort": "high", "max_credits": 1}))}, 422, "plan/stages/0/max_credits"},
				{"records nobody reads", acct.Key, map[string]any{"plan": plan(stage("a", "root", nil, nil)), "records": recs}, 422, "records"},
				{"starting per_entity without records", acct.Key, map[string]any{"plan": plan(stage("a", "per_entity", nil, nil))}, 422, "plan/stages/0/fanout"},
				{"missing key field", acct.Key, map[string]any{"plan": plan(stage("a", "per_entity", nil, map[string]any{"entity_key_field": "id"})), "records": recs}, 422, "records/0"},
				{"start without credits", broke.Key, map[string]any{"instruction": "x", "records": recs, "start": true}, 402, ""},
			} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns", Token: tc.key, Body: tc.body})
				require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
				p := r.Problem(t)
				if tc.field != "" {
					require.NotNil(t, p.Errors, tc.name)
					require.Equal(t, tc.field, (*p.Errors)[0].Field, "%s: %s", tc.name, r.Body)
				}
			}
			for _, k := range []string{acct.Key, broke.Key} {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns", Token: k})
				var page gen.CampaignSummaryPage
				r.JSON(t, &page)
				require.Empty(t, page.Items, "a refused create stores nothing")
			}
		})
	}
}

// TestCampaignCreateOneStage: the one-stage fields expand to one stage and a CSV deliverable; the
// response carries the review digest (recomputable from the plan), the records report, the
// workforce; reads and lists agree; limits are served.
func TestCampaignCreateOneStage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierFree, false, 100)
			c := e.create(t, acct.Key, map[string]any{
				"instruction": "Say whether the vendor publishes a SOC 2 report.",
				"questions":   []string{"Acme Corp?", "  ", "Globex Ltd?"},
				"effort":      "high", "concurrency": 50, "max_credits": 10,
				"output_schema": map[string]any{"type": "object", "properties": map[string]any{"publishes_soc2": map[string]any{"type": "boolean"}}},
			})
			require.Equal(t, gen.CampaignStatusDraft, c.Status)
			require.Equal(t, 1, c.Revision)
			require.Equal(t, gen.RecordsReport{Supplied: 3, Accepted: 2, BlankDropped: 1, DuplicatesDropped: 0}, c.Records)
			require.Len(t, c.Plan.Stages, 1)
			st := c.Plan.Stages[0]
			require.Equal(t, "research", st.Key)
			require.Equal(t, gen.AgentStageFanout("per_entity"), *st.Fanout)
			require.Equal(t, "question", st.QuestionField.MustGet())
			require.Equal(t, 20, st.Concurrency.MustGet(), "concurrency is clamped, never refused")
			require.Equal(t, []gen.Deliverable{{Key: "results", Title: "Results", StageKey: "research", Format: "csv", Filename: ptr("results.csv")}}, c.Deliverables)
			require.Equal(t, "medium", string(c.Workforce.Members[0].Effort), "effort is clamped to the free tier")
			require.Equal(t, "Researcher", c.Workforce.Members[0].AgentName)
			require.Equal(t, 20, c.Workforce.Totals.MaxConcurrency)
			require.Equal(t, "Say whether the vendor publishes a SOC 2 report.", c.Objective.MustGet())
			require.Contains(t, c.NextStep, "/approve")
			require.Equal(t, "pending", string(c.Stages[0].Status))
			require.Equal(t, campaignDigest(t, c.Plan, c.Revision, ptr(10)), c.ReviewDigest)

			got := e.get(t, acct.Key, c.CampaignId.String())
			require.Equal(t, c.ReviewDigest, got.ReviewDigest)
			require.Equal(t, c.Plan, got.Plan)

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns?status=draft", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var raw struct{ Items []map[string]any }
			require.NoError(t, json.Unmarshal(r.Body, &raw))
			require.Len(t, raw.Items, 1)
			require.NotContains(t, raw.Items[0], "plan", "list rows have no plan")
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns?status=running", Token: acct.Key})
			require.Contains(t, string(r.Body), `"items":[]`)

			other := e.NewAccount(t, store.TierPro, false, 10)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + c.CampaignId.String(), Token: other.Key})
			require.Equal(t, http.StatusNotFound, r.Status)

			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/limits", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var lim gen.CampaignLimits
			r.JSON(t, &lim)
			require.Equal(t, gen.CampaignLimits{MaxRecordsPerStage: 100000, MaxSuppliedRecords: 100000, MaxAssignmentChars: 32000}, lim)
		})
	}
}

// TestCampaignIdempotentCreate: a replay answers the campaign the key created as it stands now
// without checking the body again; another body is 409; a malformed body is 422 before the key.
func TestCampaignIdempotentCreate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			body := map[string]any{"instruction": "Find the city.", "records": records(3, "Company %d"), "start": true, "effort": "low"}
			h := http.Header{"Idempotency-Key": {"campaign-key-1"}}
			var first gen.CampaignDetail
			for i := range 3 {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns", Token: acct.Key, Body: body, Header: h})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var got gen.CampaignDetail
				r.JSON(t, &got)
				if i == 0 {
					first = got
				}
				require.Equal(t, first.CampaignId, got.CampaignId)
			}
			body["instruction"] = "Something else."
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns", Token: acct.Key, Body: body, Header: h})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "idempotency_key_reused", r.Problem(t).Code)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns", Token: acct.Key, RawBody: []byte(`{"instruction": `), ContentType: "application/json", Header: h})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns", Token: acct.Key})
			var page gen.CampaignSummaryPage
			r.JSON(t, &page)
			require.Len(t, page.Items, 1)
		})
	}
}

// campaignDigest recomputes the review digest as a client would.
func campaignDigest(t testing.TB, plan gen.Plan, revision int, budget *int) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"budget": budget, "plan": plan, "revision": revision})
	require.NoError(t, err)
	canon, err := jcs.Transform(b)
	require.NoError(t, err)
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// TestCampaignEditApproveCancel: a draft is edited with the plan unchanged or one stage changed
// (revision and digest move), a stale revision is 409, approval needs the current digest, and
// cancel is final and repeatable.
func TestCampaignEditApproveCancel(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			c := e.create(t, acct.Key, map[string]any{"name": "Vendors", "plan": map[string]any{"stages": []any{
				stage("find", "root", nil, map[string]any{"instruction": "[gate] List the vendors."}),
				stage("check", "per_entity", []string{"find"}, nil),
			}}})
			id := c.CampaignId.String()
			require.Len(t, c.Deliverables, 1, "one CSV for the final stage")
			require.Equal(t, "check", c.Deliverables[0].StageKey)
			patch := func(body map[string]any) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "PATCH", Path: "/api/v2/campaigns/" + id, Token: acct.Key, Body: body})
			}

			// The plan sent back unchanged changes nothing.
			r := patch(map[string]any{"plan": c.Plan, "revision": 1})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var same gen.CampaignDetail
			r.JSON(t, &same)
			require.Equal(t, 1, same.Revision)
			require.Equal(t, c.ReviewDigest, same.ReviewDigest)

			// One stage changed: revision 2, a new digest.
			plan := c.Plan
			plan.Stages[1].Instruction.Set("Check the vendor's certifications.")
			r = patch(map[string]any{"plan": plan, "revision": 1})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var edited gen.CampaignDetail
			r.JSON(t, &edited)
			require.Equal(t, 2, edited.Revision)
			require.NotEqual(t, c.ReviewDigest, edited.ReviewDigest)
			require.Equal(t, campaignDigest(t, edited.Plan, 2, nil), edited.ReviewDigest)
			require.Equal(t, "Check the vendor's certifications.", edited.Plan.Stages[1].Instruction.MustGet())

			// Two stages changed, or a stage key changed: 422. A stale revision: 409.
			two := edited.Plan
			two.Stages[0].Title, two.Stages[1].Title = "A", "B"
			r = patch(map[string]any{"plan": two})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, "plan", (*r.Problem(t).Errors)[0].Field)
			r = patch(map[string]any{"name": "Renamed", "revision": 1})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "revision_conflict", r.Problem(t).Code)

			// A budget change moves the digest too.
			r = patch(map[string]any{"max_credits": 30})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var budgeted gen.CampaignDetail
			r.JSON(t, &budgeted)
			require.Equal(t, 3, budgeted.Revision)
			require.Equal(t, 30, budgeted.MaxCredits.MustGet())
			require.Equal(t, campaignDigest(t, budgeted.Plan, 3, ptr(30)), budgeted.ReviewDigest)

			// Approval needs the current digest, well formed.
			approve := func(digest string) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/approve", Token: acct.Key, Body: map[string]any{"review_digest": digest}})
			}
			require.Equal(t, http.StatusUnprocessableEntity, approve("ABC").Status)
			r = approve(edited.ReviewDigest)
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "digest_mismatch", r.Problem(t).Code)
			r = approve(budgeted.ReviewDigest)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var approved gen.CampaignSummary
			r.JSON(t, &approved)
			require.Contains(t, []gen.CampaignStatus{"approved", "running"}, approved.Status)
			require.Contains(t, string(r.Body), `"next_step"`)
			require.NotContains(t, string(r.Body), `"plan"`)
			r = approve(budgeted.ReviewDigest)
			require.Equal(t, "campaign_not_draft", r.Problem(t).Code)
			r = patch(map[string]any{"name": "Too late"})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "campaign_not_editable", r.Problem(t).Code)

			// Cancel is final; repeating it changes nothing.
			for range 2 {
				r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/cancel", Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				var cancelled gen.CampaignSummary
				r.JSON(t, &cancelled)
				require.Equal(t, gen.CampaignStatusCancelled, cancelled.Status)
			}
			got := e.get(t, acct.Key, id)
			require.True(t, got.FinishedAt.IsSpecified() && !got.FinishedAt.IsNull())
			e.releaseAnswers(1)
		})
	}
}
