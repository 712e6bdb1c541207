package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// receiver is a loopback webhook endpoint that fails its first failures requests (500) and records
// every delivery.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	failures int // -1: always fail
	got      []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, failures int) *receiver {
	rc := &receiver{failures: failures}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, delivery{header: r.Header.Clone(), body: b})
		if rc.failures < 0 || len(rc.got) <= rc.failures {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// awaitDeliveries waits until the job's webhook is settled: delivered, or dropped after its last
// attempt (the queue entry finished).
func awaitDeliveries(t *testing.T, st *store.Store, jobID string, settled func([]store.WebhookDelivery) bool) []store.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ds, err := st.DeliveriesForJob(context.Background(), jobID)
		require.NoError(t, err)
		if settled(ds) {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook of %s never settled: %+v", jobID, ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func webhookJobsLeft(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, st.DB().Table("river_job").Where("kind = ? AND state NOT IN ?", "research_webhook", []string{"completed", "discarded", "cancelled"}).Count(&n).Error)
	return n
}

func TestResearchWebhooks(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierEnterprise, false, 50)

			cases := []struct {
				name     string
				question string
				failures int
				attempts int
				ok       bool
				event    string
				status   gen.JobStatus
			}{
				{"delivered at once", "Webhook question one", 0, 1, true, jobs.EventCompleted, gen.JobStatusCompleted},
				{"fails twice then succeeds", "Webhook question two", 2, 3, true, jobs.EventCompleted, gen.JobStatusCompleted},
				{"always fails: dropped after 3", "Webhook question three", -1, 3, false, jobs.EventCompleted, gen.JobStatusCompleted},
				{"failed job", "Webhook question four [fail]", 0, 1, true, jobs.EventFailed, gen.JobStatusFailed},
			}
			for _, tc := range cases {
				rc := newReceiver(t, tc.failures)
				r := e.create(t, owner.Key, map[string]any{"question": tc.question, "effort": "medium", "webhook_url": rc.URL + "/hook",
					"json_schema": map[string]any{"type": "object"}}, nil)
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				origReqID := r.Header.Get("X-Request-Id")
				require.NotEmpty(t, origReqID)
				var created gen.ResearchJobDetail
				r.JSON(t, &created)
				require.Equal(t, rc.URL+"/hook", created.WebhookUrl.MustGet())
				job := e.await(t, owner.Key, created.Slug, isTerminal)
				require.Equal(t, tc.status, job.Status, "%s: %+v", tc.name, job.Error)

				awaitDeliveries(t, e.Store, created.JobId.String(), func(ds []store.WebhookDelivery) bool {
					return len(ds) > 0 && (ds[len(ds)-1].Succeeded || len(ds) == 3)
				})
				require.Eventually(t, func() bool { return webhookJobsLeft(t, e.Store) == 0 }, 30*time.Second, 20*time.Millisecond)
				ds, err := e.Store.DeliveriesForJob(context.Background(), created.JobId.String())
				require.NoError(t, err)
				require.Len(t, ds, tc.attempts, tc.name)
				require.Equal(t, tc.ok, ds[len(ds)-1].Succeeded, tc.name)
				got := rc.deliveries()
				require.Len(t, got, tc.attempts, tc.name)

				reqIDs := map[string]bool{}
				for i, dv := range got {
					require.Equal(t, "application/json", dv.header.Get("Content-Type"))
					require.True(t, jobs.VerifySignature(owner.Key, dv.body, dv.header.Get("X-Signature-SHA256")), "%s: signature of attempt %d", tc.name, i+1)
					require.False(t, jobs.VerifySignature("rsk-wrong", dv.body, dv.header.Get("X-Signature-SHA256")))
					require.Equal(t, origReqID, dv.header.Get("X-Service-Original-Request-ID"))
					require.Equal(t, created.JobId.String(), dv.header.Get("X-Service-Job-ID"))
					reqIDs[dv.header.Get("X-Request-ID")] = true
					require.Equal(t, ds[i].RequestID, dv.header.Get("X-Request-ID"))
					var wb map[string]any
					require.NoError(t, json.Unmarshal(dv.body, &wb))
					require.Equal(t, tc.event, wb["event"])
					require.Equal(t, created.JobId.String(), wb["job_id"])
					require.Equal(t, string(tc.status), wb["status"])
					if tc.status == gen.JobStatusCompleted {
						rep := wb["report"].(map[string]any)
						require.Equal(t, job.Report.RevisionSha, rep["revision_sha"])
						require.Equal(t, job.Report.Markdown, rep["markdown"])
						require.Contains(t, wb, "structured_output")
					}
					// The body is the same bytes on every attempt.
					require.Equal(t, string(got[0].body), string(dv.body))
				}
				require.Len(t, reqIDs, tc.attempts, "X-Request-ID is unique per attempt")
				if tc.attempts > 1 {
					// Attempts at ~0, ~200 ms and ~800 ms of the test schedule: backoff grows.
					require.True(t, ds[1].CreatedAt.Sub(ds[0].CreatedAt) >= 150*time.Millisecond)
					require.True(t, ds[2].CreatedAt.Sub(ds[0].CreatedAt) >= 700*time.Millisecond)
				}
			}

			// A cancelled job sends no webhook.
			rc := newReceiver(t, 0)
			c := e.mustCreate(t, owner.Key, map[string]any{"question": "Cancelled hook [block]", "effort": "low", "webhook_url": rc.URL})
			e.await(t, owner.Key, c.Slug, hasStatus(gen.JobStatusInProgress))
			e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + c.Slug + "/cancel", Token: owner.Key})
			require.Eventually(t, func() bool { return webhookJobsLeft(t, e.Store) == 0 }, 10*time.Second, 20*time.Millisecond)
			ds, err := e.Store.DeliveriesForJob(context.Background(), c.JobId.String())
			require.NoError(t, err)
			require.Empty(t, ds)
		})
	}
}

// TestResearchWebhookTargetsInProduction: http and private targets are refused at create.
func TestResearchWebhookTargetsInProduction(t *testing.T) {
	t.Parallel()
	e := newResearchEnv(t, store.SQLite, func(c *jobs.Config) { c.Production = true })
	owner := e.NewAccount(t, store.TierPro, false, 10)
	for _, u := range []string{"http://hooks.example.com/x", "https://127.0.0.1/x", "https://10.0.0.8/x", "https://localhost/x", "https://[::1]/x", "https://169.254.169.254/latest"} {
		r := e.create(t, owner.Key, map[string]any{"question": "q", "webhook_url": u}, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, u)
		require.Equal(t, "webhook_url", (*r.Problem(t).Errors)[0].Field)
	}
	r := e.create(t, owner.Key, map[string]any{"question": "q", "effort": "low", "webhook_url": "https://hooks.example.com/research"}, nil)
	require.Equal(t, http.StatusAccepted, r.Status)
}

// TestResearchAccess: public jobs are readable without authentication, another account's private
// job is 404, updates are for the owner and administrators, locked jobs refuse updates.
func TestResearchAccess(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 10)
			other := e.NewAccount(t, store.TierPro, false, 10)
			admin := e.NewAccount(t, store.TierPro, true, 0)
			rc := newReceiver(t, 0)
			body, ct := multipartBody(t, part{filename: "private-notes.txt", data: []byte("owner only\n")})
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status)
			var att struct {
				AttachmentID string `json:"attachment_id"`
			}
			r.JSON(t, &att)
			j := e.mustCreate(t, owner.Key, map[string]any{"question": "Who may read this?", "effort": "low", "webhook_url": rc.URL, "attachment_ids": []string{att.AttachmentID}})
			e.await(t, owner.Key, j.Slug, isTerminal)
			base := "/api/v2/research/" + j.Slug

			reads := []string{base, base + "/timeline", base + "/files", base + "/files/report.md", "/api/v2/run/" + j.Slug}
			for _, p := range reads {
				require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: p}).Status, "anonymous "+p)
				require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: p, Token: other.Key}).Status, "other "+p)
				require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "GET", Path: p, Token: admin.Key}).Status, "admin "+p)
			}
			// A bad key is 401 even where anonymous reads are allowed.
			require.Equal(t, http.StatusUnauthorized, e.Do(t, servertest.Req{Method: "GET", Path: base, Token: "rsk-" + strings.Repeat("x", 43)}).Status)
			// Other accounts never see it in their lists.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: other.Key})
			var page gen.ResearchJobSummaryPage
			r.JSON(t, &page)
			require.Empty(t, page.Items)
			// Updates: another account's private job is 404.
			patch := func(key string, b map[string]any) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "PATCH", Path: base, Token: key, Body: b})
			}
			require.Equal(t, http.StatusNotFound, patch(other.Key, map[string]any{"is_public": true}).Status)
			r = patch(owner.Key, map[string]any{"is_public": true, "anonymous_cta_enabled": true, "anonymous_cta_variant": "banner"})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var pub gen.ResearchJobDetail
			r.JSON(t, &pub)
			require.True(t, pub.IsPublic)
			require.True(t, pub.AnonymousCtaEnabled)
			require.Equal(t, "banner", pub.AnonymousCtaVariant.MustGet())
			require.Equal(t, http.StatusUnprocessableEntity, patch(owner.Key, map[string]any{}).Status)
			require.Equal(t, http.StatusUnprocessableEntity, patch(owner.Key, map[string]any{"locked": false}).Status)

			// Public: anyone reads it; webhook_url and input files are the owner's.
			for _, p := range reads {
				require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "GET", Path: p}).Status, "anonymous "+p)
				require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "GET", Path: p, Token: other.Key}).Status, "other "+p)
			}
			var seen gen.ResearchJobDetail
			e.Do(t, servertest.Req{Method: "GET", Path: base}).JSON(t, &seen)
			require.True(t, seen.WebhookUrl.IsNull())
			require.True(t, seen.Request.WebhookUrl.IsNull())
			require.Equal(t, rc.URL, e.get(t, owner.Key, j.Slug).WebhookUrl.MustGet())
			var files gen.WorkspaceFileList
			e.Do(t, servertest.Req{Method: "GET", Path: base + "/files"}).JSON(t, &files)
			for _, f := range files.Files {
				require.False(t, strings.HasPrefix(f.Path, "input_files/"), f.Path)
			}
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: base + "/files/input_files/private-notes.txt"}).Status)
			require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "GET", Path: base + "/files/input_files/private-notes.txt", Token: owner.Key}).Status)
			// Another account may read but not change a public job: 403.
			require.Equal(t, http.StatusForbidden, patch(other.Key, map[string]any{"is_public": false}).Status)
			require.Equal(t, http.StatusForbidden, e.Do(t, servertest.Req{Method: "POST", Path: base + "/cancel", Token: other.Key}).Status)
			require.Equal(t, http.StatusForbidden, e.Do(t, servertest.Req{Method: "POST", Path: base + "/continue", Token: other.Key}).Status)
			// An administrator may.
			require.Equal(t, http.StatusOK, patch(admin.Key, map[string]any{"anonymous_cta_variant": nil}).Status)

			// A key without the research scope reads public jobs only: 403 on its own private job.
			narrow := e.Key(t, owner.ID, "billing")
			require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "GET", Path: base, Token: narrow}).Status)
			priv := e.mustCreate(t, owner.Key, map[string]any{"question": "Private one", "effort": "low"})
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + priv.Slug, Token: narrow})
			require.Equal(t, http.StatusForbidden, r.Status)
			require.Equal(t, http.StatusForbidden, e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: narrow}).Status)

			// Locked (moderated) jobs refuse every update and continue.
			ok, err := e.Store.UpdateResearchJob(context.Background(), j.JobId.String(), nil, map[string]any{"locked": true})
			require.NoError(t, err)
			require.True(t, ok)
			r = patch(owner.Key, map[string]any{"is_public": false})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "job_locked", r.Problem(t).Code)
			r = e.Do(t, servertest.Req{Method: "POST", Path: base + "/continue", Token: owner.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "job_not_continuable", r.Problem(t).Code)
		})
	}
}

// TestResearchTimelineRedaction plants secrets, shell commands and cost/token fields in the
// timeline, through the engine (sanitized when stored) and straight into the table (sanitized when
// read), and proves none reaches a response.
func TestResearchTimelineRedaction(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 10)
			j := e.mustCreate(t, owner.Key, map[string]any{"question": "Leaky run [secrets]", "effort": "low"})
			e.await(t, owner.Key, j.Slug, isTerminal)

			// Rows written by something that did not sanitize (an older version, a bug).
			raw := `{"cost":0.5,"total_tokens":99,"tool":"bash","command":"` + plantedCommand + `","args":{"token":"` + plantedKey + `","q":"fine"}}`
			require.NoError(t, e.Store.AppendEvent(context.Background(), &store.ResearchEvent{
				JobID: j.JobId.String(), Kind: "tool_call", Title: "bash",
				Content: "curl -H 'Authorization: Bearer " + plantedBearer + "' -H 'X-Api-Key: " + plantedOpenAI + "' " + plantedKey, Data: &raw,
			}))

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + j.Slug + "/timeline?limit=100", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			out := string(r.Body)
			for _, secret := range []string{plantedKey, plantedBearer, plantedOpenAI, plantedCommand, "cost_usd", "prompt_tokens",
				"completion_tokens", "total_tokens", `"cost"`, `"usage"`, `"api_key"`, `"headers"`, `"command"`, `"token"`} {
				require.NotContains(t, out, secret)
			}
			require.Contains(t, out, "[REDACTED]")
			require.Contains(t, out, `"q":"fine"`, "harmless data survives")
			var page gen.TimelineEventPage
			r.JSON(t, &page)
			require.Equal(t, "tool_call", string(page.Items[0].Kind))
			require.Equal(t, "[shell command redacted]", page.Items[0].Content)
		})
	}
}
