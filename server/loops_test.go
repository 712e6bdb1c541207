package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store/storetest"
)

func TestLoopsHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clock := clockwork.NewFakeClockAt(time.Date(2025, 3, 10, 7, 0, 0, 0, time.UTC))
			// The batch service, its dispatcher and job workers are real; only the loop's clock is fake.
			env := newBatchEnvWith(t, d, func(cfg *servertest.Config) { cfg.App.LoopClock = clock })
			svc := env.Services.Loops
			alice := env.NewAccount(t, "pro", false, 100)
			bob := env.NewAccount(t, "pro", false, 100)

			create := map[string]any{
				"batch_name": "Weekly competitor watch",
				// [gate]: a row's run holds until the test releases it, so run 1 is still active below.
				"questions":   []string{"What did Initech announce? [gate]", "  ", "What did Hooli announce? [gate]"},
				"max_credits": 10,
				"schedule": map[string]any{"frequency": "weekly", "timezone": "Europe/Berlin",
					"schedule_config": map[string]any{"hour": 8, "minute": 30, "day_of_week": "Wednesday"}},
			}
			r := env.Do(t, servertest.Req{Method: http.MethodPost, Path: "/api/v2/loops", Token: alice.Key, Body: create})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "day names are lowercase in the document")

			create["schedule"].(map[string]any)["schedule_config"].(map[string]any)["day_of_week"] = "wednesday"
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: "/api/v2/loops", Token: alice.Key, Body: create,
				Header: http.Header{"Idempotency-Key": {"k1"}}})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var det gen.BatchScheduleDetail
			r.JSON(t, &det)
			id := det.Schedule.ScheduleId.String()
			require.Equal(t, 2, det.Schedule.QuestionCount)
			require.Equal(t, "en", det.Config.ResponseLanguage)
			require.Equal(t, time.Date(2025, 3, 12, 7, 30, 0, 0, time.UTC), det.Schedule.NextRunAt.MustGet().UTC())
			dow, err := det.Schedule.ScheduleConfig.DayOfWeek.AsScheduleConfigDayOfWeek0()
			require.NoError(t, err)
			require.Equal(t, 2, dow, "responses give day_of_week as an integer")

			again := env.Do(t, servertest.Req{Method: http.MethodPost, Path: "/api/v2/loops", Token: alice.Key, Body: create,
				Header: http.Header{"Idempotency-Key": {"k1"}}})
			require.Equal(t, http.StatusCreated, again.Status)
			var det2 gen.BatchScheduleDetail
			again.JSON(t, &det2)
			require.Equal(t, id, det2.Schedule.ScheduleId.String())

			bad := []struct {
				name  string
				mut   func(m map[string]any)
				field string
			}{
				{"monthly without day_of_month", func(m map[string]any) {
					m["schedule"] = map[string]any{"frequency": "monthly", "schedule_config": map[string]any{"hour": 1}}
				}, "schedule/schedule_config/day_of_month"},
				{"unknown zone", func(m map[string]any) {
					m["schedule"] = map[string]any{"frequency": "daily", "timezone": "Mars/Base"}
				}, "schedule/timezone"},
				{"unknown expert", func(m map[string]any) { m["expert_id"] = "nobody" }, "expert_id"},
				{"rows misaligned", func(m map[string]any) { m["rows"] = []map[string]any{{"a": 1}} }, "rows"},
			}
			for _, tt := range bad {
				body := map[string]any{}
				for k, v := range create {
					body[k] = v
				}
				tt.mut(body)
				r := env.Do(t, servertest.Req{Method: http.MethodPost, Path: "/api/v2/loops", Token: alice.Key, Body: body})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tt.name)
				p := r.Problem(t)
				require.NotNil(t, p.Errors, tt.name)
				require.Equal(t, tt.field, (*p.Errors)[0].Field, tt.name)
			}

			path := "/api/v2/loops/" + id
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: bob.Key}).Status)
			var page gen.BatchScheduleSummaryPage
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: "/api/v2/loops", Token: alice.Key}).JSON(t, &page)
			require.Len(t, page.Items, 1)
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: "/api/v2/loops", Token: bob.Key}).JSON(t, &page)
			require.Empty(t, page.Items)

			// Run 1 is a real batch whose rows run; a second run-now while it is active is refused.
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var b1 gen.BatchDetail
			r.JSON(t, &b1)
			require.Equal(t, 1, b1.RunNumber.MustGet())
			require.Equal(t, id, b1.ScheduleId.MustGet().String())
			require.Equal(t, "Weekly competitor watch", b1.BatchName)
			require.Len(t, *b1.Rows, 2)
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: alice.Key}).JSON(t, &det)
			require.Len(t, det.Runs, 1)
			require.Equal(t, b1.BatchId, det.Runs[0].BatchId)
			require.Equal(t, 1, det.Schedule.RunCount)
			env.engine.awaitInFlight(t, 2)
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "loop_run_active", r.Problem(t).Code)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet,
				Path: "/api/v2/batches/" + b1.BatchId.String(), Token: bob.Key}).Status)

			env.releaseRuns(2)
			done := env.awaitBatch(t, alice.Key, b1.BatchId.String(), batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)
			require.Equal(t, 1, done.RunNumber.MustGet())
			res := env.results(t, alice.Key, b1.BatchId.String(), "")
			require.Equal(t, 1, res.RunNumber.MustGet())
			require.Equal(t, id, res.ScheduleId.MustGet().String())
			require.Equal(t, id, res.Schedule.MustGet().ScheduleId.String())
			require.Len(t, res.Results, 2)

			// After run 1 ends, run-now makes run 2; the diff compares their real results.
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var b2 gen.BatchDetail
			r.JSON(t, &b2)
			require.Equal(t, 2, b2.RunNumber.MustGet())
			env.releaseRuns(2)
			done = env.awaitBatch(t, alice.Key, b2.BatchId.String(), batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)

			var diff gen.LoopRunDiff
			r = env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/2/diff", Token: alice.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &diff)
			require.Equal(t, b2.BatchId, diff.BatchId)
			require.Equal(t, 1, diff.PreviousRunNumber.MustGet())
			require.Equal(t, b1.BatchId, diff.PreviousBatchId.MustGet())
			require.Len(t, diff.Questions, 2)
			for i, q := range diff.Questions {
				require.Equal(t, i+1, q.RowNumber)
				require.Equal(t, gen.BatchRowStatus("SUCCESS"), q.Status)
				require.NotEmpty(t, q.Headline.MustGet())
				require.NotEmpty(t, q.PreviousHeadline.MustGet())
				require.Contains(t, []gen.LoopQuestionDiffChange{gen.LoopQuestionDiffChange(loop.ChangeChanged), gen.LoopQuestionDiffChange(loop.ChangeUnchanged)}, q.Change)
			}
			require.Equal(t, 2, diff.Summary.Changed+diff.Summary.Unchanged)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/9/diff", Token: alice.Key}).Status)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/1/diff", Token: bob.Key}).Status)

			// The ended runs were reported to the loop (Settled): no failure counted.
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: alice.Key}).JSON(t, &det)
			require.Equal(t, 2, det.Schedule.RunCount)
			require.Zero(t, det.Schedule.ConsecutiveFailures)
			require.Len(t, det.Runs, 2)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, det.Runs[0].Status)

			var sum gen.BatchScheduleSummary
			env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/pause", Token: alice.Key}).JSON(t, &sum)
			require.False(t, sum.IsActive)
			require.True(t, sum.NextRunAt.IsNull())
			env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/resume", Token: alice.Key}).JSON(t, &sum)
			require.True(t, sum.IsActive)

			r = env.Do(t, servertest.Req{Method: http.MethodPatch, Path: path, Token: alice.Key, Body: map[string]any{
				"batch_name": "Daily watch", "max_credits": nil,
				"schedule": map[string]any{"frequency": "daily", "schedule_config": map[string]any{"hour": 6}},
			}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &det)
			require.Equal(t, "Daily watch", det.Schedule.Name)
			require.True(t, det.Config.MaxCredits.IsNull())
			require.Equal(t, time.Date(2025, 3, 11, 6, 0, 0, 0, time.UTC), det.Schedule.NextRunAt.MustGet().UTC())
			require.Len(t, det.Runs, 2)
			require.Equal(t, 2, det.Runs[0].RunNumber)

			// A firing (the timer's pass, on the fake clock) starts run 3 through the same batch service.
			clock.Advance(det.Schedule.NextRunAt.MustGet().Sub(clock.Now()) + time.Second)
			fired, err := svc.FireDue(t.Context(), clock.Now())
			require.NoError(t, err)
			require.Equal(t, 1, fired)
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: alice.Key}).JSON(t, &det)
			require.Len(t, det.Runs, 3)
			require.Equal(t, 3, det.Runs[0].RunNumber)
			require.Equal(t, time.Date(2025, 3, 12, 6, 0, 0, 0, time.UTC), det.Schedule.NextRunAt.MustGet().UTC())
			env.releaseRuns(2)
			done = env.awaitBatch(t, alice.Key, det.Runs[0].BatchId.String(), batchTerminal, nil)
			require.Equal(t, gen.BatchStatusPROCESSEDSUCCESSFULLY, done.Status)
			require.Equal(t, 3, done.RunNumber.MustGet())

			require.Equal(t, http.StatusNoContent, env.Do(t, servertest.Req{Method: http.MethodDelete, Path: path, Token: alice.Key}).Status)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodDelete, Path: path, Token: alice.Key}).Status)
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: alice.Key}).JSON(t, &det)
			require.False(t, det.Schedule.DeletedAt.IsNull())
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: "/api/v2/loops", Token: alice.Key}).JSON(t, &page)
			require.Empty(t, page.Items)
		})
	}
}
