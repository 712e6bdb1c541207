package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/server"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// loopBatches stands in for the batch service (not merged into this branch yet): it records runs
// in memory and answers every row with a canned result. The loop store and HTTP layer are real.
type loopBatches struct {
	mu   sync.Mutex
	runs map[string]loop.RunInput
	done map[string]bool
}

func (b *loopBatches) Validate(_ context.Context, _ string, cfg loop.Config) error {
	if cfg.ExpertID != nil {
		return &loop.ValidationError{Code: "validation_error", Field: "expert_id", Message: "no expert " + *cfg.ExpertID}
	}
	return nil
}

func (b *loopBatches) CreateRun(_ context.Context, _ *store.Store, in loop.RunInput) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := uuid.NewString()
	b.runs[id] = in
	return id, nil
}

func (b *loopBatches) RunStates(_ context.Context, ids []string) (map[string]loop.RunState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]loop.RunState{}
	for _, id := range ids {
		if in, ok := b.runs[id]; ok {
			n := len(in.Config.Questions)
			st := loop.RunState{Status: loop.StatusPending, TotalRows: n, PendingRows: n}
			if b.done[id] {
				st = loop.RunState{Status: loop.StatusProcessedSuccessfully, TotalRows: n, ProcessedRows: n, SucceededRows: n}
			}
			out[id] = st
		}
	}
	return out, nil
}

func (b *loopBatches) RunResults(_ context.Context, id string) ([]loop.RowResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := b.runs[id]
	var out []loop.RowResult
	for i, q := range in.Config.Questions {
		h := "Answer to " + q + " in run " + string(rune('0'+in.RunNumber))
		out = append(out, loop.RowResult{RowNumber: i + 1, Question: q, Status: "SUCCESS", Headline: &h,
			StructuredOutput: map[string]any{"run": float64(in.RunNumber), "topic": q}})
	}
	return out, nil
}

func (b *loopBatches) detail(_ context.Context, _ string, id string) (gen.BatchDetail, error) {
	b.mu.Lock()
	in := b.runs[id]
	b.mu.Unlock()
	n := len(in.Config.Questions)
	rows := make([]map[string]any, n)
	for i, q := range in.Config.Questions {
		rows[i] = map[string]any{"row_number": i + 1, "question": q, "status": "PENDING", "job_id": nil, "error_code": nil,
			"attempts": 0, "row_data": nil, "input": nil}
	}
	raw, err := json.Marshal(map[string]any{
		"batch_id": id, "batch_name": in.Name, "status": "PENDING", "effort": "medium", "requested_effort": "medium",
		"expert_id": nil, "approach": nil, "response_language": "en", "max_concurrent": 5, "max_credits": nil,
		"custom_json_schema": nil, "credits_per_row": 1, "credits_spent": 0, "created_at": time.Now().UTC(),
		"processing_started_at": nil, "processing_completed_at": nil, "schedule_id": in.ScheduleID, "run_number": in.RunNumber,
		"counters": map[string]any{"total_rows": n, "processed_rows": 0, "succeeded_rows": 0, "failed_rows": 0, "pending_rows": n, "running_rows": 0},
		"rows":     rows,
	})
	if err != nil {
		return gen.BatchDetail{}, err
	}
	var d gen.BatchDetail
	err = json.Unmarshal(raw, &d)
	return d, err
}

func TestLoopsHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fb := &loopBatches{runs: map[string]loop.RunInput{}, done: map[string]bool{}}
			clock := clockwork.NewFakeClockAt(time.Date(2025, 3, 10, 7, 0, 0, 0, time.UTC))
			var svc *loop.Service
			env := servertest.New(t, d, func(cfg *server.Config) {
				var err error
				svc, err = loop.New(loop.Deps{Store: cfg.Store, Batches: fb, Clock: clock})
				require.NoError(t, err)
				cfg.Loops, cfg.LoopRunBatch = svc, fb.detail
			})
			alice := env.NewAccount(t, "pro", false, 100)
			bob := env.NewAccount(t, "pro", false, 100)

			create := map[string]any{
				"batch_name":  "Weekly competitor watch",
				"questions":   []string{"What did Initech announce?", "  ", "What did Hooli announce?"},
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

			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var b1 gen.BatchDetail
			r.JSON(t, &b1)
			require.Equal(t, 1, b1.RunNumber.MustGet())
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "loop_run_active", r.Problem(t).Code)
			fb.mu.Lock()
			fb.done[b1.BatchId.String()] = true
			fb.mu.Unlock()
			r = env.Do(t, servertest.Req{Method: http.MethodPost, Path: path + "/run-now", Token: alice.Key})
			require.Equal(t, http.StatusAccepted, r.Status)

			var diff gen.LoopRunDiff
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/2/diff", Token: alice.Key}).JSON(t, &diff)
			require.Equal(t, 1, diff.PreviousRunNumber.MustGet())
			require.Equal(t, 2, diff.Summary.Changed)
			require.Equal(t, "/run", diff.Questions[0].ChangedFields[0].Path)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/9/diff", Token: alice.Key}).Status)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodGet, Path: path + "/runs/1/diff", Token: bob.Key}).Status)

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

			require.Equal(t, http.StatusNoContent, env.Do(t, servertest.Req{Method: http.MethodDelete, Path: path, Token: alice.Key}).Status)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: http.MethodDelete, Path: path, Token: alice.Key}).Status)
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: path, Token: alice.Key}).JSON(t, &det)
			require.False(t, det.Schedule.DeletedAt.IsNull())
			env.Do(t, servertest.Req{Method: http.MethodGet, Path: "/api/v2/loops", Token: alice.Key}).JSON(t, &page)
			require.Empty(t, page.Items)
		})
	}
}
