package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestCampaignRunsOneStage: an approved one-stage campaign answers every record, charges each
// successful worker once, builds its CSV (one column per output-schema field) and completes.
func TestCampaignRunsOneStage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			c := e.create(t, acct.Key, map[string]any{
				"name":        "Headcount",
				"instruction": "How many people does the company employ?",
				"records":     []any{map[string]any{"company": "Acme Corp"}, map[string]any{"company": "Globex Ltd"}, map[string]any{"company": "Initech GmbH"}, map[string]any{}},
				"output_schema": map[string]any{"type": "object", "properties": map[string]any{
					"employees": map[string]any{"type": "integer"}, "summary": map[string]any{"type": "string"}}},
				"concurrency": 2,
			})
			require.Equal(t, 1, c.Records.BlankDropped)
			e.approve(t, acct.Key, c)
			done := e.await(t, acct.Key, c.CampaignId.String(), statusIs(gen.CampaignStatusCompleted, gen.CampaignStatusNeedsAttention))
			require.Equal(t, gen.CampaignStatusCompleted, done.Status, "%+v", done.Attention)
			require.Equal(t, 3, done.Stages[0].RecordsTotal)
			require.Equal(t, 3, done.Stages[0].RecordsDone)
			require.Equal(t, 3, done.CreditsSpent, "one credit per worker at medium")
			require.Equal(t, 3, done.Stages[0].CreditsSpent)
			require.Len(t, done.Artifacts, 1)
			require.Len(t, done.DeliverableFiles, 1)
			require.True(t, strings.HasSuffix(done.DeliverableFiles[0].Url, "/deliverables/results"))

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + c.CampaignId.String() + "/deliverables/results", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
			require.Contains(t, r.Header.Get("Content-Disposition"), "results.csv")
			require.Equal(t, done.Artifacts[0].ByteSize, len(r.Body))
			rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"position", "company", "employees", "summary", "error_code"}, rows[0])
			require.Len(t, rows, 4)
			require.Equal(t, []string{"1", "Acme Corp"}, rows[1][:2])
			for _, row := range rows[1:] {
				require.Contains(t, row[3], row[1], "each record is answered from passages about it: %v", row)
			}

			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/transactions", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.Contains(t, string(r.Body), "Campaign")
		})
	}
}

// TestCampaignThreeStageDAG: a discovery stage finds records through records_field, a per-entity
// stage researches each found record (identity by entity_key_field, given fields reattached), an
// aggregate stage sees them all; every deliverable is built and the campaign completes.
func TestCampaignThreeStageDAG(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			vendor := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
			c := e.create(t, acct.Key, map[string]any{"name": "Vendor review", "start": true, "plan": map[string]any{
				"stages": []any{
					stage("discover", "root", nil, map[string]any{"instruction": "Which vendors are listed?", "records_field": "vendors",
						"output_schema": map[string]any{"type": "object", "properties": map[string]any{"vendors": map[string]any{"type": "array", "items": vendor, "maxItems": 3}}}}),
					stage("profile", "per_entity", []string{"discover"}, map[string]any{"instruction": "How many people does the vendor employ?", "entity_key_field": "name",
						"output_schema": map[string]any{"type": "object", "properties": map[string]any{"employees": map[string]any{"type": "integer"}}}}),
					stage("summary", "aggregate", []string{"profile"}, map[string]any{"instruction": "Summarise the vendors' headcounts.", "effort": "low"}),
				},
				"deliverables": []any{
					map[string]any{"key": "vendors", "title": "Vendors", "stage_key": "profile", "format": "csv"},
					map[string]any{"key": "vendors-json", "title": "Vendors", "stage_key": "profile", "format": "json"},
					map[string]any{"key": "summary", "title": "Summary", "stage_key": "summary", "format": "markdown"},
				},
			}})
			require.Equal(t, gen.CampaignStatusApproved, c.Status, "start: true approves in the same call")
			require.Equal(t, 3, c.Workforce.Totals.Members)
			require.Equal(t, 5, c.Workforce.Totals.MaxConcurrency, "the stages run one after the other")
			id := c.CampaignId.String()
			done := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusCompleted, gen.CampaignStatusNeedsAttention))
			require.Equal(t, gen.CampaignStatusCompleted, done.Status, "%+v", done.Attention)
			found := done.Stages[0].RecordsTotal
			require.GreaterOrEqual(t, found, 1)
			require.Equal(t, found, done.Stages[1].RecordsTotal, "the per-entity stage reads every discovered record")
			require.Equal(t, found, done.Stages[1].RecordsDone)
			require.Equal(t, 1, done.Stages[2].RecordsTotal)
			require.Len(t, done.Artifacts, 3)
			require.Equal(t, 1+found, done.CreditsSpent, "root and per-entity workers at medium, the aggregate at low")

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/stages/profile/portfolio", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var pf gen.CampaignPortfolio
			r.JSON(t, &pf)
			require.Equal(t, "name", pf.EntityKeyField.MustGet())
			require.Equal(t, gen.FieldView{Name: "name", Label: "Name", Type: "string", Source: "identity"}, pf.Fields[0])
			require.Equal(t, gen.FieldView{Name: "employees", Label: "Employees", Type: "integer", Source: "researched"}, pf.Fields[len(pf.Fields)-1])
			require.Equal(t, gen.PortfolioCoverage{Total: found, Done: found}, pf.Coverage)
			for _, it := range pf.Items {
				require.Equal(t, gen.PortfolioItemStatusDone, it.Status)
				require.Equal(t, it.EntityKey, it.Fields["name"], "the identity is reattached")
				require.True(t, it.JobId.IsNull())
			}
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/deliverables/summary", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.True(t, strings.HasPrefix(string(r.Body), "# Summary"), string(r.Body))
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/deliverables/vendors-json", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var rows []map[string]any
			require.NoError(t, json.Unmarshal(r.Body, &rows))
			require.Len(t, rows, found)
		})
	}
}

// TestCampaignPausedForCreditsResumes: when the account's credits cannot cover the next worker
// the campaign needs attention (quota_exhausted, add_credits); a retry without credits is 402;
// once credits are added it resumes on its own and completes.
func TestCampaignPausedForCreditsResumes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d, func(c *campaign.Config) { c.ChunkSize = 2 })
			acct := e.NewAccount(t, store.TierPro, false, 2)
			c := e.create(t, acct.Key, map[string]any{"instruction": "How many people does the company employ?", "records": records(5, "Company %d"),
				"concurrency": 1, "start": true})
			id := c.CampaignId.String()
			paused := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusNeedsAttention, gen.CampaignStatusCompleted))
			require.Equal(t, gen.CampaignStatusNeedsAttention, paused.Status)
			att := paused.Attention.MustGet()
			require.Equal(t, gen.CampaignAttentionReasonQuotaExhausted, att.Reason)
			require.Equal(t, gen.AddCredits, att.NextAction)
			require.True(t, att.StageKey.IsNull())
			require.Equal(t, gen.StageDetailStatusPaused, paused.Stages[0].Status)
			require.Equal(t, 2, paused.Stages[0].RecordsDone)
			require.Equal(t, 2, paused.CreditsSpent)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/retry", Token: acct.Key})
			require.Equal(t, http.StatusPaymentRequired, r.Status, string(r.Body))

			_, err := e.billing.Grant(context.Background(), nil, acct.ID, 10, "top-up")
			require.NoError(t, err)
			done := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusCompleted))
			require.Equal(t, 5, done.Stages[0].RecordsDone)
			require.Equal(t, 5, done.CreditsSpent)
			require.True(t, done.Attention.IsNull())
		})
	}
}

// TestCampaignBudgetExhausted: a stage budget stops new workers; with nothing running the campaign
// needs attention (budget_exhausted, cancel); retry is refused; cancel keeps the finished records.
func TestCampaignBudgetExhausted(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			c := e.create(t, acct.Key, map[string]any{"start": true, "records": records(5, "Company %d"), "plan": map[string]any{"stages": []any{
				stage("check", "per_entity", nil, map[string]any{"instruction": "How many people?", "max_credits": 3}),
			}}})
			id := c.CampaignId.String()
			paused := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusNeedsAttention, gen.CampaignStatusCompleted))
			require.Equal(t, gen.CampaignStatusNeedsAttention, paused.Status)
			att := paused.Attention.MustGet()
			require.Equal(t, gen.CampaignAttentionReasonBudgetExhausted, att.Reason)
			require.Equal(t, "check", att.StageKey.MustGet())
			require.Equal(t, gen.Cancel, att.NextAction)
			require.Equal(t, 3, paused.Stages[0].RecordsDone, "no worker starts that the budget cannot cover")
			require.Equal(t, 3, paused.CreditsSpent)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/retry", Token: acct.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "campaign_not_retryable", r.Problem(t).Code)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/deliverables/check", Token: acct.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "deliverable_not_ready", r.Problem(t).Code)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/deliverables/nope", Token: acct.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/stages/check/portfolio?limit=2", Token: acct.Key})
			var pf gen.CampaignPortfolio
			r.JSON(t, &pf)
			require.Equal(t, gen.PortfolioCoverage{Total: 5, Done: 3, Pending: 2}, pf.Coverage)
			require.True(t, pf.HasMore)
			seen := len(pf.Items)
			for pf.HasMore {
				r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/stages/check/portfolio?limit=2&cursor=" + pf.NextCursor.MustGet(), Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				pf = gen.CampaignPortfolio{}
				r.JSON(t, &pf)
				seen += len(pf.Items)
			}
			require.Equal(t, 5, seen)
		})
	}
}

// TestCampaignStageFailedRetry: a stage none of whose records succeeded fails; the campaign needs
// attention (stage_failed, retry) and a retry runs the failed records again.
func TestCampaignStageFailedRetry(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d)
			e.answers.failing.Store(true)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			c := e.create(t, acct.Key, map[string]any{"instruction": "[flaky] How many people?", "records": records(3, "Company %d"), "start": true})
			id := c.CampaignId.String()
			failed := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusNeedsAttention, gen.CampaignStatusCompleted))
			require.Equal(t, gen.CampaignStatusNeedsAttention, failed.Status)
			att := failed.Attention.MustGet()
			require.Equal(t, gen.CampaignAttentionReasonStageFailed, att.Reason)
			require.Equal(t, gen.Retry, att.NextAction)
			require.Equal(t, gen.StageDetailStatusFailed, failed.Stages[0].Status)
			require.Equal(t, 3, failed.Stages[0].RecordsFailed)
			require.Equal(t, 0, failed.CreditsSpent, "failed workers cost nothing")
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/stages/research/portfolio", Token: acct.Key})
			var pf gen.CampaignPortfolio
			r.JSON(t, &pf)
			require.Equal(t, "engine_error", pf.Items[0].ErrorCode.MustGet())

			e.answers.failing.Store(false)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/retry", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			done := e.await(t, acct.Key, id, statusIs(gen.CampaignStatusCompleted))
			require.Equal(t, 3, done.Stages[0].RecordsDone)
			require.Equal(t, 0, done.Stages[0].RecordsFailed)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/retry", Token: acct.Key})
			require.Equal(t, http.StatusConflict, r.Status)
		})
	}
}

// TestCampaignKeyUnusableAndCancel: revoking the approving key pauses the campaign
// (key_unusable); a retry with another key continues under it; cancel stops new work while
// finished records stay.
func TestCampaignKeyUnusableAndCancel(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newCampaignEnv(t, d, func(c *campaign.Config) { c.ChunkSize = 1 })
			acct := e.NewAccount(t, store.TierPro, false, 100)
			approver := e.Key(t, acct.ID, "campaigns")
			c := e.create(t, acct.Key, map[string]any{"instruction": "[gate] How many people?", "records": records(4, "Company %d"), "concurrency": 1})
			id := c.CampaignId.String()
			e.approve(t, approver, c)
			awaitInFlight(t, e, 1)
			keys, err := e.Store.APIKeysByPrefix(context.Background(), approver[:8])
			require.NoError(t, err)
			require.NoError(t, e.Store.RevokeAPIKey(context.Background(), acct.ID, keys[0].ID, time.Now()))
			e.releaseAnswers(1)
			paused := e.await(t, acct.Key, id, func(d gen.CampaignDetail) bool {
				return d.Status == gen.CampaignStatusNeedsAttention && d.Stages[0].RecordsDone == 1 // the worker in flight finishes
			})
			require.Equal(t, gen.CampaignAttentionReasonKeyUnusable, paused.Attention.MustGet().Reason)
			require.Equal(t, 1, paused.Stages[0].RecordsDone)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/retry", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			awaitInFlight(t, e, 1)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/campaigns/" + id + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			e.releaseAnswers(1)
			got := e.await(t, acct.Key, id, func(d gen.CampaignDetail) bool { return d.Stages[0].RecordsDone == 2 })
			require.Equal(t, gen.CampaignStatusCancelled, got.Status)
			require.Equal(t, gen.StageDetailStatusPaused, got.Stages[0].Status)
			require.Equal(t, 2, got.CreditsSpent, "the worker in flight finished and was charged; nothing else started")

			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/browser-sessions?stage_key=research", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var bs gen.CampaignBrowserSessions
			r.JSON(t, &bs)
			require.Empty(t, bs.Items)
			require.Equal(t, gen.CampaignBrowserSessionCounts{}, bs.Counts)
			require.False(t, bs.HasMore)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/browser-sessions?stage_key=nope", Token: acct.Key})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/browser-sessions?cursor=%21%21", Token: acct.Key})
			require.Equal(t, "invalid_cursor", r.Problem(t).Code)
		})
	}
}

func awaitInFlight(t testing.TB, e *campaignEnv, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for e.answers.inFlight() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers in flight, want %d", e.answers.inFlight(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
