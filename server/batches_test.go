package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestBatchCreateValidation: bad bodies are refused with the right code and create nothing;
// defaults and blank-dropping apply to good ones.
func TestBatchCreateValidation(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			broke := e.NewAccount(t, store.TierPro, false, 0)
			q := []string{"What is the capital of France?", "What is the capital of Spain?"}
			for _, tc := range []struct {
				name   string
				key    string
				body   map[string]any
				status int
				code   string
				field  string
			}{
				{"unknown field", acct.Key, map[string]any{"batch_name": "x", "questions": q, "colour": "blue"}, 422, "validation_error", ""},
				{"no name", acct.Key, map[string]any{"questions": q}, 422, "validation_error", ""},
				{"no questions", acct.Key, map[string]any{"batch_name": "x", "questions": []string{}}, 422, "validation_error", ""},
				{"all blank", acct.Key, map[string]any{"batch_name": "x", "questions": []string{" ", "\t"}}, 422, "validation_error", "questions"},
				{"too many", acct.Key, map[string]any{"batch_name": "x", "questions": questions(101, "question %d?")}, 422, "validation_error", ""},
				{"inputs without expert", acct.Key, map[string]any{"batch_name": "x", "questions": q, "inputs": []any{nil, nil}}, 422, "validation_error", "inputs"},
				{"inputs misaligned", acct.Key, map[string]any{"batch_name": "x", "questions": q, "expert_id": "general-researcher", "inputs": []any{nil}}, 422, "validation_error", "inputs"},
				{"rows misaligned", acct.Key, map[string]any{"batch_name": "x", "questions": q, "rows": []any{map[string]any{"a": 1}}}, 422, "validation_error", "rows"},
				{"unknown expert", acct.Key, map[string]any{"batch_name": "x", "questions": q, "expert_id": "no-such-expert"}, 422, "validation_error", "expert_id"},
				{"concurrency", acct.Key, map[string]any{"batch_name": "x", "questions": q, "max_concurrent": 21}, 422, "validation_error", ""},
				{"unknown effort", acct.Key, map[string]any{"batch_name": "x", "questions": q, "effort": "extreme"}, 422, "validation_error", ""},
				{"budget below one row", acct.Key, map[string]any{"batch_name": "x", "questions": q, "effort": "high", "max_credits": 4}, 422, "max_credits_too_low", "max_credits"},
				{"schema not an object", acct.Key, map[string]any{"batch_name": "x", "questions": q, "custom_json_schema": map[string]any{"type": "string"}}, 422, "validation_error", "custom_json_schema"},
				{"schema external ref", acct.Key, map[string]any{"batch_name": "x", "questions": q, "custom_json_schema": map[string]any{"$ref": "file:///etc/passwd"}}, 422, "validation_error", "custom_json_schema"},
				{"no credits", broke.Key, map[string]any{"batch_name": "x", "questions": q}, 402, "insufficient_credits", ""},
			} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches", Token: tc.key, Body: tc.body})
				require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
				p := r.Problem(t)
				require.Equal(t, tc.code, p.Code, tc.name)
				if tc.field != "" {
					require.NotNil(t, p.Errors, tc.name)
					require.Equal(t, tc.field, (*p.Errors)[0].Field, tc.name)
				}
			}
			for _, k := range []string{acct.Key, broke.Key} {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches", Token: k})
				require.Equal(t, http.StatusOK, r.Status)
				var page gen.BatchPage
				r.JSON(t, &page)
				require.Empty(t, page.Items, "a refused create changes nothing")
			}

			// Blank questions are dropped with their rows entries; defaults apply.
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "Capitals", "questions": []string{"What is the capital of France?", "  ", "What is the capital of Spain?"},
				"rows": []any{map[string]any{"country": "FR"}, map[string]any{"country": "--"}, map[string]any{"country": "ES"}},
			})
			require.Equal(t, gen.BatchStatusPENDING, created.Status)
			require.Equal(t, gen.Effort("medium"), created.Effort)
			require.Equal(t, 5, created.MaxConcurrent)
			require.Equal(t, 1, created.CreditsPerRow)
			require.Equal(t, 2, created.Counters.TotalRows)
			require.Equal(t, 2, created.Counters.PendingRows)
			require.Len(t, *created.Rows, 2)
			require.Equal(t, "What is the capital of Spain?", (*created.Rows)[1].Question)
			require.Equal(t, "ES", (*created.Rows)[1].RowData.MustGet()["country"])

			// The expert's default effort applies, clamped to the tier.
			free := e.NewAccount(t, store.TierFree, false, 100)
			ex := e.createBatch(t, free.Key, map[string]any{"batch_name": "DD", "questions": q, "expert_id": "company-due-diligence",
				"inputs": []any{map[string]any{"company": "Acme"}, nil}})
			require.Equal(t, gen.Effort("high"), ex.RequestedEffort)
			require.Equal(t, gen.Effort("medium"), ex.Effort)
			require.Equal(t, "Acme", (*ex.Rows)[0].Input.MustGet()["company"])
			require.True(t, (*ex.Rows)[1].Input.IsNull())

			// Another account's batch does not exist for the caller.
			other := e.NewAccount(t, store.TierPro, false, 10)
			for _, p := range []string{"", "/results"} {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches/" + created.BatchId.String() + p, Token: other.Key})
				require.Equal(t, http.StatusNotFound, r.Status)
			}
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + created.BatchId.String() + "/cancel", Token: other.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
		})
	}
}

// TestBatchIdempotentCreate: a retried create with the same key returns the original batch and
// starts nothing; a different body with the key is 409.
func TestBatchIdempotentCreate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			body := map[string]any{"batch_name": "Idem", "questions": []string{"What is solar power?"}, "effort": "low"}
			h := http.Header{"Idempotency-Key": {"batch-key-1"}}
			var first gen.BatchDetail
			for i := range 3 {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches", Token: acct.Key, Body: body, Header: h})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				var got gen.BatchDetail
				r.JSON(t, &got)
				if i == 0 {
					first = got
				}
				require.Equal(t, first.BatchId, got.BatchId)
			}
			body["batch_name"] = "Different"
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches", Token: acct.Key, Body: body, Header: h})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "idempotency_key_reused", r.Problem(t).Code)
			// The key is per resource kind: the same key on POST /research makes a job.
			jr := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: acct.Key, Body: map[string]any{"question": "What is wind power?", "effort": "low"}, Header: h})
			require.Equal(t, http.StatusAccepted, jr.Status, string(jr.Body))

			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches", Token: acct.Key})
			var page gen.BatchPage
			r.JSON(t, &page)
			require.Len(t, page.Items, 1)
			done := e.awaitBatch(t, acct.Key, first.BatchId.String(), batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)
			require.Equal(t, 1, (*done.Rows)[0].Attempts, "a replayed create launches nothing")
		})
	}
}

// TestBatchDispatch: rows run as research jobs, never more than max_concurrent at once, the next
// launched as one settles; results appear per row as each finishes; the batch ends successful.
func TestBatchDispatch(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "Gated energy scan", "questions": questions(5, "[gate] What is renewable energy source number %d?"),
				"max_concurrent": 2, "effort": "medium",
				"custom_json_schema": map[string]any{"type": "object", "properties": map[string]any{"summary": map[string]any{"type": "string"}}},
			})
			id := created.BatchId.String()
			maxRunning := func(d gen.BatchDetail) { require.LessOrEqual(t, d.Counters.RunningRows, 2) }

			// Two rows run and hold; the other three wait.
			d1 := e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool { return d.Counters.RunningRows == 2 }, maxRunning)
			require.Equal(t, gen.BatchStatusPROCESSING, d1.Status)
			require.Equal(t, 3, d1.Counters.PendingRows)
			require.NotNil(t, d1.ProcessingStartedAt.MustGet())
			for _, r := range (*d1.Rows)[:2] {
				require.Equal(t, gen.BatchRowStatusRUNNING, r.Status)
				require.True(t, r.JobId.IsSpecified() && !r.JobId.IsNull())
			}

			e.engine.awaitInFlight(t, 2)

			// One settles: its result is readable while the rest still run, and the next row launches.
			e.releaseRuns(1)
			e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool { return d.Counters.SucceededRows == 1 }, maxRunning)
			res := e.results(t, acct.Key, id, "SUCCESS")
			require.Len(t, res.Results, 1)
			row := res.Results[0]
			require.NotEmpty(t, row.Headline.MustGet())
			require.NotEmpty(t, row.Excerpt.MustGet())
			require.LessOrEqual(t, len([]rune(row.Excerpt.MustGet())), 1000)
			require.NotContains(t, row.Excerpt.MustGet(), "## ")
			require.True(t, strings.HasSuffix(row.ReportLink.MustGet(), "/api/v2/research/"+row.JobId.MustGet().String()), row.ReportLink.MustGet())
			require.True(t, strings.HasPrefix(row.ReportLink.MustGet(), "http"), row.ReportLink.MustGet())
			require.False(t, row.StructuredOutput.IsNull(), "the schema applies to every row")
			e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool { return d.Counters.RunningRows == 2 }, maxRunning)

			e.releaseRuns(4)
			done := e.awaitBatch(t, acct.Key, id, batchTerminal, maxRunning)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)
			require.Equal(t, 5, done.Counters.SucceededRows)
			require.Equal(t, 5, done.CreditsSpent)
			require.NotNil(t, done.ProcessingCompletedAt.MustGet())
			require.Equal(t, 2, e.engine.Peak(), "max_concurrent is reached and never exceeded")
			all := e.results(t, acct.Key, id, "")
			require.Len(t, all.Results, 5)
			require.Equal(t, 5, all.ProcessedRows)
			require.Equal(t, "default", all.AgentKey)
			seen := map[string]bool{}
			for _, r := range all.Results {
				require.Equal(t, gen.BatchRowStatusSUCCESS, r.Status)
				jid := r.JobId.MustGet().String()
				require.False(t, seen[jid], "one job per row")
				seen[jid] = true
				// The row's job is an ordinary research job: metered once.
				require.EqualValues(t, 1, consumptionCount(t, e.Store, jid))
			}
			require.Empty(t, e.results(t, acct.Key, id, "FAILED").Results)
		})
	}
}

// TestBatchCancel: cancel answers at once; waiting rows fail with cancelled, a running row settles
// on its own; a second cancel is a no-op; retries on a cancelled batch are 409.
func TestBatchCancel(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "To cancel", "questions": questions(3, "[gate] What is the history of tea, part %d?"), "max_concurrent": 1,
			})
			id := created.BatchId.String()
			e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool { return d.Counters.RunningRows == 1 }, nil)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + id + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var c gen.BatchDetail
			r.JSON(t, &c)
			require.Equal(t, gen.BatchStatusCANCELLED, c.Status)
			requireCountersAddUp(t, c.Counters)
			require.Equal(t, 1, c.Counters.RunningRows)
			require.Equal(t, 2, c.Counters.FailedRows)
			for _, row := range (*c.Rows)[1:] {
				require.Equal(t, gen.BatchRowStatusFAILED, row.Status)
				require.Equal(t, "cancelled", row.ErrorCode.MustGet())
				require.Equal(t, 0, row.Attempts, "never dispatched")
			}

			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + id + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var again gen.BatchDetail
			r.JSON(t, &again)
			require.Equal(t, c.Counters, again.Counters)
			require.Equal(t, c.ProcessingCompletedAt, again.ProcessingCompletedAt)

			for _, p := range []string{"/retry-failed", "/rows/2/retry"} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + id + p, Token: acct.Key})
				require.Equal(t, http.StatusConflict, r.Status, p)
				require.Equal(t, "batch_cancelled", r.Problem(t).Code)
			}

			e.releaseRuns(1)
			done := e.awaitBatch(t, acct.Key, id, batchTerminal, nil)
			require.Equal(t, gen.BatchStatusCANCELLED, done.Status)
			require.Equal(t, gen.BatchRowStatusSUCCESS, (*done.Rows)[0].Status, "the running row settled on its own")
			require.Equal(t, 1, done.Counters.SucceededRows)
		})
	}
}

// TestBatchRetries: failed rows carry their error_code; a batch with no success ends
// PROCESSED_WITH_ERRORS; retry-failed and row retry reopen it; a no-op retry is 0.
func TestBatchRetries(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "Failing", "questions": []string{"[fail] What is fusion power?", "[fail] What is fission power?"},
			})
			id := created.BatchId.String()
			done := e.awaitBatch(t, acct.Key, id, batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDWITHERRORS, done.Status, "zero successes is never successful")
			require.Equal(t, 0, done.CreditsSpent, "failed rows are refunded")
			for _, row := range *done.Rows {
				require.Equal(t, "engine_error", row.ErrorCode.MustGet())
			}
			failed := e.results(t, acct.Key, id, "FAILED")
			require.Len(t, failed.Results, 2)
			require.True(t, failed.Results[0].Headline.IsNull())

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + id + "/rows/1/retry", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var row gen.BatchRow
			r.JSON(t, &row)
			require.Equal(t, gen.BatchRowStatusPENDING, row.Status)
			require.True(t, row.ErrorCode.IsNull())
			again := e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool {
				return batchTerminal(d) && (*e.getBatch(t, acct.Key, id, true).Rows)[0].Attempts == 2
			}, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDWITHERRORS, again.Status)

			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + id + "/retry-failed", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var rf gen.RetryFailedResponse
			r.JSON(t, &rf)
			require.Equal(t, 2, rf.RetriedRows)
			reopened := e.getBatch(t, acct.Key, id, false)
			require.Contains(t, []gen.BatchStatus{gen.BatchStatusPROCESSING, gen.BatchStatusPROCESSEDWITHERRORS}, reopened.Status)
			final := e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool {
				return batchTerminal(d) && (*e.getBatch(t, acct.Key, id, true).Rows)[1].Attempts == 2
			}, nil)
			require.Equal(t, 3, (*final.Rows)[0].Attempts)

			// A batch with nothing failed: retry-failed is a successful no-op; a SUCCESS row is not retryable.
			ok := e.createBatch(t, acct.Key, map[string]any{"batch_name": "Fine", "questions": []string{"What is tidal power?"}, "effort": "low"})
			e.awaitBatch(t, acct.Key, ok.BatchId.String(), batchTerminal, nil)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + ok.BatchId.String() + "/retry-failed", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &rf)
			require.Equal(t, 0, rf.RetriedRows)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + ok.BatchId.String() + "/rows/1/retry", Token: acct.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "row_not_retryable", r.Problem(t).Code)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + ok.BatchId.String() + "/rows/9/retry", Token: acct.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, e.getBatch(t, acct.Key, ok.BatchId.String(), false).Status)
		})
	}
}

// TestBatchQuotaPauseAndResume: when the balance runs out the batch pauses with quota_exhausted
// (waiting rows say so) and resumes by itself once credits are granted.
func TestBatchQuotaPauseAndResume(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 1)
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "Quota", "questions": questions(3, "What is the boiling point of compound %d?"), "max_concurrent": 1, "effort": "medium",
			})
			id := created.BatchId.String()
			paused := e.awaitBatch(t, acct.Key, id, func(d gen.BatchDetail) bool {
				return d.PausedReason.IsSpecified() && d.Counters.RunningRows == 0
			}, nil)
			require.Equal(t, gen.BatchStatusPROCESSING, paused.Status)
			require.Equal(t, gen.BatchPausedReasonQuotaExhausted, paused.PausedReason.MustGet())
			require.Equal(t, 1, paused.Counters.SucceededRows)
			require.Equal(t, 2, paused.Counters.PendingRows)
			for _, row := range (*paused.Rows)[1:] {
				require.Equal(t, gen.BatchRowStatusPENDING, row.Status)
				require.Equal(t, "quota_exhausted", row.ErrorCode.MustGet())
			}

			_, err := e.billing.Grant(context.Background(), nil, acct.ID, 5, "")
			require.NoError(t, err)
			done := e.awaitBatch(t, acct.Key, id, batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)
			require.False(t, done.PausedReason.IsSpecified())
			require.Equal(t, 3, done.CreditsSpent)
			for _, row := range *done.Rows {
				require.True(t, row.ErrorCode.IsNull())
			}
		})
	}
}

// TestBatchBudget: spend never exceeds max_credits; failed rows' refunds free budget; rows the
// budget cannot cover fail with budget_exhausted once nothing runs.
func TestBatchBudget(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			qs := questions(8, "What is the melting point of alloy %d?")
			qs[1] = "[fail] " + qs[1]
			created := e.createBatch(t, acct.Key, map[string]any{
				"batch_name": "Budget", "questions": qs, "max_concurrent": 3, "effort": "medium", "max_credits": 4,
			})
			id := created.BatchId.String()
			within := func(d gen.BatchDetail) {
				require.LessOrEqual(t, d.CreditsSpent, 4)
				require.LessOrEqual(t, d.Counters.RunningRows, 3)
			}
			done := e.awaitBatch(t, acct.Key, id, batchTerminal, within)
			require.Equal(t, gen.BatchStatusPROCESSEDWITHERRORS, done.Status)
			require.Equal(t, 4, done.Counters.SucceededRows, "the failed row's refund paid for another row")
			require.Equal(t, 4, done.CreditsSpent)
			codes := map[string]int{}
			var ledger int64
			for _, row := range *done.Rows {
				if row.Status == gen.BatchRowStatusFAILED {
					codes[row.ErrorCode.MustGet()]++
				}
				if row.JobId.IsSpecified() && !row.JobId.IsNull() {
					n, err := e.billing.JobCredits(context.Background(), row.JobId.MustGet().String())
					require.NoError(t, err)
					ledger += n
				}
			}
			require.Equal(t, map[string]int{"engine_error": 1, "budget_exhausted": 3}, codes)
			require.EqualValues(t, 4, ledger, "the ledger agrees: spend never exceeds max_credits")
		})
	}
}

// TestBatchEstimate prices with the creation defaults and the tier clamp.
func TestBatchEstimate(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, store.SQLite)
	free := e.NewAccount(t, store.TierFree, false, 0)
	for _, tc := range []struct {
		query, effort, requested string
		perRow, total            int
		downgraded               bool
	}{
		{"rows=10", "medium", "medium", 1, 10, false},
		{"rows=10&effort=high", "medium", "high", 1, 10, true},
		{"rows=3&effort=low", "low", "low", 0, 0, false},
		{"rows=2&expert_id=company-due-diligence", "medium", "high", 1, 2, true},
	} {
		r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches/estimate?" + tc.query, Token: free.Key})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var est gen.BatchCreditEstimateResponse
		r.JSON(t, &est)
		require.Equal(t, gen.Effort(tc.effort), est.Effort, tc.query)
		require.Equal(t, gen.Effort(tc.requested), est.RequestedEffort, tc.query)
		require.Equal(t, tc.perRow, est.CreditsPerRow, tc.query)
		require.Equal(t, tc.total, est.TotalCredits, tc.query)
		require.Equal(t, tc.downgraded, est.Downgraded, tc.query)
	}
	for _, q := range []string{"rows=0", "rows=101", "", "rows=2&expert_id=nobody"} {
		r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches/estimate?" + q, Token: free.Key})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, q)
	}
}

// TestBatchEstimateCustomExpert: a custom expert's default_depth is the batch's default effort,
// and an archived expert is refused like an unknown one (the same resolution as POST /research).
func TestBatchEstimateCustomExpert(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, store.SQLite)
	pro := e.NewAccount(t, store.TierPro, false, 0)
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts", Token: pro.Key, Body: map[string]any{
		"name": "Depth Analyst", "system_prompt": "You analyse.", "default_depth": "ultra_deep",
	}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var x gen.Expert
	r.JSON(t, &x)
	estimate := func() *servertest.Resp {
		return e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches/estimate?rows=2&expert_id=" + x.ExpertId, Token: pro.Key})
	}
	r = estimate()
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var est gen.BatchCreditEstimateResponse
	r.JSON(t, &est)
	require.Equal(t, gen.Effort("high"), est.RequestedEffort, "ultra_deep runs high")
	require.Equal(t, gen.Effort("high"), est.Effort)

	require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/experts/" + x.ExpertId, Token: pro.Key}).Status)
	r = estimate()
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Body))
	require.Equal(t, "expert_id", (*r.Problem(t).Errors)[0].Field)
}

// TestBatchList: newest first, case-insensitive name search, status filter, cursor paging.
func TestBatchList(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 100)
			var ids []string
			for _, name := range []string{"Solar Scan", "wind scan", "Hydro 100%_report"} {
				b := e.createBatch(t, acct.Key, map[string]any{"batch_name": name, "questions": []string{"[gate] What is " + name + "?"}, "effort": "low"})
				ids = append(ids, b.BatchId.String())
			}
			list := func(q string) gen.BatchPage {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/batches" + q, Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				var p gen.BatchPage
				r.JSON(t, &p)
				return p
			}
			p := list("")
			require.Len(t, p.Items, 3)
			require.Equal(t, ids[2], p.Items[0].BatchId.String(), "newest first")
			p = list("?query=SCAN")
			require.Len(t, p.Items, 2)
			p = list("?query=%25_")
			require.Len(t, p.Items, 1, "LIKE wildcards match literally")
			require.Equal(t, "Hydro 100%_report", p.Items[0].BatchName)

			var seen []string
			cursor := ""
			for {
				p := list("?limit=1" + cursor)
				for _, it := range p.Items {
					seen = append(seen, it.BatchId.String())
				}
				if !p.HasMore {
					break
				}
				cursor = "&cursor=" + p.NextCursor.MustGet()
			}
			require.Equal(t, []string{ids[2], ids[1], ids[0]}, seen)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/batches/" + ids[0] + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			p = list("?status=CANCELLED")
			require.Len(t, p.Items, 1)
			require.Equal(t, ids[0], p.Items[0].BatchId.String())
			e.releaseRuns(3)
			for _, id := range ids {
				e.awaitBatch(t, acct.Key, id, batchTerminal, nil)
			}
			require.Len(t, list("?status=PROCESSED_SUCCESSFULLY").Items, 2)
		})
	}
}
