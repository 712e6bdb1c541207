package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/a2aserver/a2atest"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// tierEnv is the whole app as serve wires it (experts, research, batches, loops, campaigns, A2A) on
// a real database, with the job workers not started until start is called: work accepted before a
// tier change is still waiting for dispatch when the change lands. The loops' clock is fake.
type tierEnv struct {
	*servertest.Env
	loops *loop.Service
	clock *clockwork.FakeClock
	start func()
}

func newTierEnv(t *testing.T, d store.Dialect) *tierEnv {
	t.Helper()
	out := &tierEnv{clock: clockwork.NewFakeClockAt(time.Date(2025, 3, 10, 7, 0, 0, 0, time.UTC))}
	corpus := t.TempDir()
	for name, text := range campaignCorpus {
		require.NoError(t, os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o600))
	}
	out.Env = servertest.New(t, d, func(cfg *servertest.Config) {
		jc := &cfg.App.Jobs
		jc.TestOnly = true
		jc.PollInterval, jc.CancelCheck = 20*time.Millisecond, 20*time.Millisecond
		cfg.App.Batches.SweepInterval = 100 * time.Millisecond
		cfg.App.Campaigns.SweepInterval = 100 * time.Millisecond
		cfg.App.Engine = extractive.New(extractive.Options{CorpusDir: testCorpus(t)})
		cfg.App.Answerer = engine.Answers(extractive.New(extractive.Options{CorpusDir: corpus}), t.TempDir())
		cfg.App.LoopClock = out.clock
	})
	out.loops = out.Services.Loops
	out.start = func() { out.Env.Start(t) }
	return out
}

func (e *tierEnv) do(t *testing.T, method, path, key string, body any) *servertest.Resp {
	t.Helper()
	return e.Do(t, servertest.Req{Method: method, Path: path, Token: key, Body: body})
}

// expert creates a custom expert with the body's extra fields and returns its id.
func (e *tierEnv) expert(t *testing.T, key, name string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"name": name, "system_prompt": "Answer briefly."}
	for k, v := range extra {
		body[k] = v
	}
	r := e.do(t, "POST", "/api/v2/experts", key, body)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var x gen.Expert
	r.JSON(t, &x)
	return x.ExpertId
}

// send starts an A2A task (returning at once) and returns its id; the error is the protocol's.
func (e *tierEnv) send(t *testing.T, key, expertID string) (string, error) {
	t.Helper()
	ctx := t.Context()
	card, err := a2atest.Card(ctx, e.URL)
	require.NoError(t, err)
	c, err := a2atest.Client(ctx, card, a2a.Version, key)
	require.NoError(t, err)
	req := question("What drove the 2024 rise in EU electricity prices?", map[string]any{"expert_id": expertID})
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return "", err
	}
	task, ok := res.(*a2a.Task)
	require.True(t, ok, "%T", res)
	return string(task.ID), nil
}

// tierPaths create work naming an expert on every path that takes one; each answers the HTTP
// status (the A2A path: 200, or 403 for the protocol's permission error) and the problem code.
var tierPaths = []struct {
	name   string
	create func(t *testing.T, e *tierEnv, key, expertID string) (int, string)
}{
	{"research", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "POST", "/api/v2/research", key, map[string]any{"question": "What moved EU power prices?", "expert_id": x}))
	}},
	{"run alias", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "POST", "/api/v2/run", key, map[string]any{"question": "What moved EU power prices?", "expert_id": x}))
	}},
	{"batch", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "POST", "/api/v2/batches", key, map[string]any{"batch_name": "Prices", "questions": []string{"What moved EU power prices?"}, "expert_id": x}))
	}},
	{"batch estimate", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "GET", "/api/v2/batches/estimate?rows=2&expert_id="+x, key, nil))
	}},
	{"loop", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "POST", "/api/v2/loops", key, loopBody(x)))
	}},
	{"campaign", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		return status(t, e.do(t, "POST", "/api/v2/campaigns", key, campaignBody(x, true)))
	}},
	{"a2a", func(t *testing.T, e *tierEnv, key, x string) (int, string) {
		_, err := e.send(t, key, x)
		var ae *a2a.Error
		switch {
		case err == nil:
			return http.StatusOK, ""
		case errors.Is(err, a2a.ErrUnauthorized) && errors.As(err, &ae):
			return http.StatusForbidden, fmt.Sprint(ae.Details["code"])
		}
		t.Fatalf("a2a send: %v", err)
		return 0, ""
	}},
}

func status(t *testing.T, r *servertest.Resp) (int, string) {
	t.Helper()
	if r.Status >= 400 {
		return r.Status, r.Problem(t).Code
	}
	return r.Status, ""
}

func loopBody(expertID string) map[string]any {
	return map[string]any{"batch_name": "Weekly prices", "questions": []string{"What moved EU power prices?"}, "expert_id": expertID,
		"schedule": map[string]any{"frequency": "daily", "schedule_config": map[string]any{"hour": 8, "minute": 0}}}
}

func campaignBody(expertID string, start bool) map[string]any {
	return map[string]any{"instruction": "How many people work there?", "records": records(1, "Company %d"), "effort": "low",
		"agent": map[string]any{"id": expertID}, "start": start}
}

// TestExpertTierAtCreate: a free-tier account is refused (403 forbidden; over A2A the protocol's
// permission error with code forbidden) an administrator's public expert whose allow_free_tier_use
// is off, on every path that names an expert; the flag on, a paid tier, or its own expert lets it
// run. A refusal writes nothing.
func TestExpertTierAtCreate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newTierEnv(t, d)
			e.start() // the accepted work runs and ends, A2A executions with it
			admin := e.NewAccount(t, store.TierPro, true, 0)
			free := e.NewAccount(t, store.TierFree, false, 100)
			pro := e.NewAccount(t, store.TierPro, false, 100)
			locked := e.expert(t, admin.Key, "Locked analyst", map[string]any{"is_public": true})
			open := e.expert(t, admin.Key, "Open analyst", map[string]any{"is_public": true, "allow_free_tier_use": true})
			own := e.expert(t, free.Key, "My analyst", nil)
			// A paid account's private experts shared with free accounts: an editor's work is its
			// own, a viewer is like any other reader.
			viewer := e.NewAccount(t, store.TierFree, false, 100)
			shared := e.expert(t, pro.Key, "Shared analyst", nil)
			for who, role := range map[string]string{free.Email: "editor", viewer.Email: "viewer"} {
				r := e.do(t, "POST", "/api/v2/experts/"+shared+"/share", pro.Key, map[string]any{"principal_type": "user", "principal": who, "role": role})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			}
			ok := map[string]int{"research": 202, "run alias": 202, "batch": 202, "batch estimate": 200, "loop": 201, "campaign": 201, "a2a": 200}
			for _, p := range tierPaths {
				for _, tc := range []struct {
					name   string
					key    string
					expert string
					allow  bool
				}{
					{"free tier, flag off", free.Key, locked, false},
					{"free tier, flag on", free.Key, open, true},
					{"paid tier, flag off", pro.Key, locked, true},
					{"free tier, own expert", free.Key, own, true},
					{"free tier, editor of a shared expert", free.Key, shared, true},
					{"free tier, viewer of a shared expert", viewer.Key, shared, false},
				} {
					got, code := p.create(t, e, tc.key, tc.expert)
					if tc.allow {
						require.Equal(t, ok[p.name], got, "%s, %s: %s", p.name, tc.name, code)
						continue
					}
					require.Equal(t, http.StatusForbidden, got, "%s, %s", p.name, tc.name)
					require.Equal(t, "forbidden", code, "%s, %s", p.name, tc.name)
				}
			}
			// Refusals wrote nothing: the free account has only what the allowed cases created.
			var n int64
			require.NoError(t, e.Store.DB().Model(&store.ResearchJob{}).Where("account_id = ? AND expert_id = ?", free.ID, locked).Count(&n).Error)
			require.Zero(t, n)
			for _, table := range []string{"batches", "schedules", "campaigns"} {
				require.NoError(t, e.Store.DB().Table(table).Where("account_id = ? AND expert_id = ?", free.ID, locked).Count(&n).Error)
				require.Zero(t, n, table)
			}
		})
	}
}

// TestExpertTierAtDispatch: work accepted while the account could run the expert, then refused by a
// tier change (the account downgraded, or the flag turned off) before it is dispatched, ends with
// code forbidden: the job failed and refunded (as any run refused at dispatch), the batch row
// FAILED, the campaign's records failed, the loop's firing skipped, the A2A task failed; a
// continuation and a draft's approval are refused at the request.
func TestExpertTierAtDispatch(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newTierEnv(t, d)
			admin := e.NewAccount(t, store.TierPro, true, 0)
			locked := e.expert(t, admin.Key, "Locked analyst", map[string]any{"is_public": true})
			flagged := e.expert(t, admin.Key, "Flagged analyst", map[string]any{"is_public": true, "allow_free_tier_use": true})
			type work struct {
				acct                     servertest.Account
				job, task, batch, loopID string
				campaign, draft          gen.CampaignDetail
			}
			changes := []struct {
				name   string
				expert string
				tier   string // the account's tier before the change
				change func(t *testing.T, w work)
			}{
				{"account downgraded", locked, store.TierPro, func(t *testing.T, w work) {
					require.NoError(t, e.Store.UpdateAccount(t.Context(), w.acct.ID, store.TierFree, false))
				}},
				{"flag turned off", flagged, store.TierFree, func(t *testing.T, _ work) {
					r := e.do(t, "PATCH", "/api/v2/experts/"+flagged, admin.Key, map[string]any{"allow_free_tier_use": false})
					require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				}},
			}
			ws := make([]work, len(changes))
			for i, c := range changes {
				w := work{acct: e.NewAccount(t, c.tier, false, 100)}
				r := e.do(t, "POST", "/api/v2/research", w.acct.Key, map[string]any{"question": "What moved EU power prices?", "expert_id": c.expert})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				var j gen.ResearchJobDetail
				r.JSON(t, &j)
				w.job = j.JobId.String()
				var err error
				w.task, err = e.send(t, w.acct.Key, c.expert)
				require.NoError(t, err)
				r = e.do(t, "POST", "/api/v2/batches", w.acct.Key, map[string]any{"batch_name": "Prices", "questions": []string{"What moved EU power prices?"}, "expert_id": c.expert})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				var b gen.BatchDetail
				r.JSON(t, &b)
				w.batch = b.BatchId.String()
				r = e.do(t, "POST", "/api/v2/loops", w.acct.Key, loopBody(c.expert))
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var l gen.BatchScheduleDetail
				r.JSON(t, &l)
				w.loopID = l.Schedule.ScheduleId.String()
				for _, start := range []bool{true, false} {
					r = e.do(t, "POST", "/api/v2/campaigns", w.acct.Key, campaignBody(c.expert, start))
					require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
					var cd gen.CampaignDetail
					r.JSON(t, &cd)
					if start {
						w.campaign = cd
					} else {
						w.draft = cd
					}
				}
				c.change(t, w)
				ws[i] = w
			}
			e.start()
			var quota gen.QuotaResponse
			for i, c := range changes {
				w := ws[i]
				job := awaitJob(t, e, w.acct.Key, w.job)
				require.Equal(t, gen.JobStatusFailed, job.Status, c.name)
				require.Equal(t, "forbidden", job.Error.MustGet().Code, c.name)
				task := awaitJob(t, e, w.acct.Key, w.task)
				require.Equal(t, "forbidden", task.Error.MustGet().Code, c.name)
				e.do(t, "GET", "/api/v2/quota", w.acct.Key, nil).JSON(t, &quota)
				require.EqualValues(t, 100, quota.CreditsRemaining, "%s: refused runs are refunded", c.name)

				b := awaitBatchDone(t, e, w.acct.Key, w.batch)
				require.Equal(t, gen.BatchStatusPROCESSEDWITHERRORS, b.Status, c.name)
				require.Equal(t, "forbidden", (*b.Rows)[0].ErrorCode.MustGet(), c.name)

				cd := awaitCampaign(t, e, w.acct.Key, w.campaign.CampaignId.String())
				require.Equal(t, gen.CampaignStatusNeedsAttention, cd.Status, c.name)
				var pf gen.CampaignPortfolio
				e.do(t, "GET", "/api/v2/campaigns/"+cd.CampaignId.String()+"/stages/"+cd.Stages[0].Key+"/portfolio", w.acct.Key, nil).JSON(t, &pf)
				require.Equal(t, "forbidden", pf.Items[0].ErrorCode.MustGet(), c.name)
				require.Zero(t, cd.CreditsSpent, c.name)

				got, code := status(t, e.do(t, "POST", "/api/v2/campaigns/"+w.draft.CampaignId.String()+"/approve", w.acct.Key,
					map[string]any{"review_digest": w.draft.ReviewDigest}))
				require.Equal(t, []any{http.StatusForbidden, "forbidden"}, []any{got, code}, "%s: approving the draft", c.name)
				got, code = status(t, e.do(t, "POST", "/api/v2/loops/"+w.loopID+"/run-now", w.acct.Key, nil))
				require.Equal(t, []any{http.StatusForbidden, "forbidden"}, []any{got, code}, "%s: run-now", c.name)
			}
			// The loops' next firing is skipped, not retried on every tick.
			e.clock.Advance(25 * time.Hour)
			fired, err := e.loops.FireDue(t.Context(), e.clock.Now())
			require.NoError(t, err)
			require.Zero(t, fired)
			for i, c := range changes {
				var l gen.BatchScheduleDetail
				e.do(t, "GET", "/api/v2/loops/"+ws[i].loopID, ws[i].acct.Key, nil).JSON(t, &l)
				require.Equal(t, "forbidden", l.Schedule.LastSkipReason.MustGet(), c.name)
				require.Equal(t, 0, l.Schedule.RunCount, c.name)
			}

			// A job that completed before the downgrade cannot be continued after it.
			paid := e.NewAccount(t, store.TierPro, false, 100)
			r := e.do(t, "POST", "/api/v2/research", paid.Key, map[string]any{"question": "What moved EU power prices?", "expert_id": locked, "effort": "low"})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var j gen.ResearchJobDetail
			r.JSON(t, &j)
			require.Equal(t, gen.JobStatusCompleted, awaitJob(t, e, paid.Key, j.JobId.String()).Status)
			require.NoError(t, e.Store.UpdateAccount(t.Context(), paid.ID, store.TierFree, false))
			got, code := status(t, e.do(t, "POST", "/api/v2/research/"+j.JobId.String()+"/continue", paid.Key, nil))
			require.Equal(t, []any{http.StatusForbidden, "forbidden"}, []any{got, code})
		})
	}
}

func awaitJob(t *testing.T, e *tierEnv, key, id string) gen.ResearchJobDetail {
	t.Helper()
	return awaitGet(t, e, key, "/api/v2/research/"+id, isTerminal)
}

func awaitBatchDone(t *testing.T, e *tierEnv, key, id string) gen.BatchDetail {
	t.Helper()
	return awaitGet(t, e, key, "/api/v2/batches/"+id, batchTerminal)
}

func awaitCampaign(t *testing.T, e *tierEnv, key, id string) gen.CampaignDetail {
	t.Helper()
	return awaitGet(t, e, key, "/api/v2/campaigns/"+id, func(d gen.CampaignDetail) bool {
		return d.Status == gen.CampaignStatusNeedsAttention || d.Status == gen.CampaignStatusCompleted
	})
}

// awaitGet reads path until done holds; the bound only stops a hung test.
func awaitGet[T any](t *testing.T, e *tierEnv, key, path string, done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var v T
		e.do(t, "GET", path, key, nil).JSON(t, &v)
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still %+v", path, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
