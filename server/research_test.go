package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestResearchFlow is the typical flow of a research job over HTTP: create, poll, read the report,
// revisions, files and timeline, by UUID and by slug, under /research and /run.
func TestResearchFlow(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 100)

			// Attachments are copied into input_files/.
			body, ct := multipartBody(t, part{filename: "grid-notes.txt", data: []byte("EU electricity prices rose in 2024 because gas prices stayed high and interconnectors were congested.\n")})
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var att struct {
				AttachmentID string `json:"attachment_id"`
			}
			r.JSON(t, &att)

			r = e.create(t, owner.Key, map[string]any{
				"question": "What drove the 2024 rise in EU electricity prices? [files]", "effort": "build",
				"attachment_ids": []string{att.AttachmentID},
			}, nil)
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var created gen.ResearchJobDetail
			r.JSON(t, &created)
			require.Equal(t, "/api/v2/research/"+created.JobId.String(), r.Header.Get("Location"))
			require.Equal(t, gen.JobStatusQueued, created.Status)
			require.Equal(t, gen.Effort("high"), created.Effort, "pro tier clamps build to high")
			require.Equal(t, gen.Effort("build"), created.RequestedEffort)
			require.Equal(t, gen.Effort("build"), created.Request.Effort)
			require.Regexp(t, `^[a-z0-9]+(-[a-z0-9]+)*$`, created.Slug)
			require.True(t, strings.HasPrefix(created.Slug, "drove-2024-rise-eu-electricity-prices-"), created.Slug)
			require.Empty(t, created.Runs)

			done := e.await(t, owner.Key, created.Slug, isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Equal(t, created.JobId, done.JobId)
			require.NotNil(t, done.Report)
			require.Contains(t, done.Report.Markdown, "electricity")
			require.Regexp(t, shaPattern, done.Report.RevisionSha)
			require.GreaterOrEqual(t, len(done.Revisions), 2)
			for _, rev := range done.Revisions {
				require.Regexp(t, shaPattern, rev.CommitSha)
				require.Equal(t, done.Runs[0].RunId, rev.RunId)
			}
			require.Equal(t, gen.RevisionCheckpointType("progress"), done.Revisions[0].CheckpointType)
			last := done.Revisions[len(done.Revisions)-1]
			require.Equal(t, gen.RevisionCheckpointType("final"), last.CheckpointType)
			require.Equal(t, last.CommitSha, done.Report.RevisionSha)
			require.Len(t, done.Runs, 1)
			require.Equal(t, gen.CheckResultStatusCompleted, done.Runs[0].Status)
			require.Equal(t, 5, done.Runs[0].CreditsCharged)
			require.Equal(t, 5, done.CreditsCharged)
			require.True(t, done.StartedAt.IsSpecified() && !done.StartedAt.IsNull())
			require.True(t, done.CompletedAt.IsSpecified() && !done.CompletedAt.IsNull())

			// The same job under /run, by UUID.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/run/" + created.JobId.String(), Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)

			// ?revision= shows the report as it was at that commit; unknown is 404, a short prefix works.
			first := done.Revisions[0].CommitSha
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "?revision=" + first[:10], Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var atFirst gen.ResearchJobDetail
			r.JSON(t, &atFirst)
			require.NotNil(t, atFirst.Report)
			require.Equal(t, first, atFirst.Report.RevisionSha)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "?revision=" + strings.Repeat("0", 40), Token: owner.Key})
			require.Equal(t, http.StatusNotFound, r.Status)

			// Files: the report, the input file, nested files with their MIME types.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var files gen.WorkspaceFileList
			r.JSON(t, &files)
			byPath := map[string]gen.WorkspaceFile{}
			for _, f := range files.Files {
				byPath[f.Path] = f
			}
			require.Contains(t, byPath, "report.md")
			require.Contains(t, byPath, "input_files/grid-notes.txt")
			require.Equal(t, "image/png", byPath["files/charts/q1.png"].ContentType)
			require.Equal(t, done.Report.RevisionSha, files.RevisionSha.MustGet())

			// Raw bytes with literal slashes, and with %2F.
			for _, p := range []string{"files/charts/q1.png", url.PathEscape("files/charts/q1.png")} {
				r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/" + p, Token: owner.Key})
				require.Equal(t, http.StatusOK, r.Status, p)
				require.Equal(t, "image/png", r.Header.Get("Content-Type"))
				require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
				require.True(t, strings.HasPrefix(string(r.Body), "\x89PNG"))
			}
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/input_files/grid-notes.txt", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.Contains(t, string(r.Body), "interconnectors")
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/site/index.html", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.Equal(t, "sandbox", r.Header.Get("Content-Security-Policy"))
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/report.md", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/markdown"))
			require.Equal(t, done.Report.Markdown, string(r.Body))
			// At an older revision the later files do not exist yet... and the report differs or not,
			// but a file that never existed is 404; traversal is refused; a directory is not a file.
			for p, want := range map[string]int{
				"nope.txt": http.StatusNotFound, "files/charts": http.StatusNotFound, "files/../report.md": http.StatusUnprocessableEntity,
				"files%2F..%2Freport.md": http.StatusUnprocessableEntity, "files//q1.png": http.StatusUnprocessableEntity,
				"./report.md": http.StatusUnprocessableEntity, ".git/config": http.StatusUnprocessableEntity,
			} {
				res, err := e.Send(servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/" + p, Token: owner.Key})
				require.NoError(t, err)
				if res.Status != want && (p == "files/../report.md" || p == "./report.md") {
					// The HTTP client or router may clean dot segments before they arrive; then the
					// request names another path, which must still not escape the workspace.
					require.NotEqual(t, http.StatusOK, res.Status, p)
					continue
				}
				require.Equal(t, want, res.Status, p)
				require.NoError(t, e.Check(servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/files/" + p}, res))
			}

			// Timeline: newest first, walked with the cursor; seq strictly decreasing down to 1.
			var seqs []int
			cursor := ""
			for {
				path := "/api/v2/research/" + created.Slug + "/timeline?limit=7"
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				r = e.Do(t, servertest.Req{Method: "GET", Path: path, Token: owner.Key})
				require.Equal(t, http.StatusOK, r.Status)
				var page gen.TimelineEventPage
				r.JSON(t, &page)
				for _, ev := range page.Items {
					seqs = append(seqs, ev.Seq)
				}
				if !page.HasMore {
					break
				}
				cursor = page.NextCursor.MustGet()
			}
			require.Greater(t, len(seqs), 3)
			for i := range seqs {
				require.Equal(t, len(seqs)-i, seqs[i])
			}
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created.Slug + "/timeline?cursor=bm9wZQ", Token: owner.Key})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)

			// Lists: /research and /run, newest first, with a status filter.
			second := e.mustCreate(t, owner.Key, map[string]any{"question": "A second question", "effort": "low"})
			e.await(t, owner.Key, second.JobId.String(), isTerminal)
			for _, p := range []string{"/api/v2/research?limit=1", "/api/v2/run?limit=1"} {
				r = e.Do(t, servertest.Req{Method: "GET", Path: p, Token: owner.Key})
				require.Equal(t, http.StatusOK, r.Status)
				var page gen.ResearchJobSummaryPage
				r.JSON(t, &page)
				require.Len(t, page.Items, 1)
				require.True(t, page.HasMore)
				require.Equal(t, second.JobId, page.Items[0].JobId)
			}
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research?status=failed", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var none gen.ResearchJobSummaryPage
			r.JSON(t, &none)
			require.Empty(t, none.Items)
			// POST /run is the same resource.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/run", Token: owner.Key, Body: map[string]any{"question": "Via run", "effort": "low"}})
			require.Equal(t, http.StatusAccepted, r.Status)
		})
	}
}

// TestResearchCancelAndContinue covers the job state machine (cancelResearch, continueResearch).
func TestResearchCancelAndContinue(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d, func(c *jobs.Config) { c.Workers = 1 })
			owner := e.NewAccount(t, store.TierEnterprise, false, 4)

			// in_progress → cancelled; the running run is interrupted and keeps its charge.
			running := e.mustCreate(t, owner.Key, map[string]any{"question": "Long one [block]", "effort": "medium"})
			e.await(t, owner.Key, running.Slug, hasStatus(gen.JobStatusInProgress))
			// The only worker is busy: the next job stays queued.
			queued := e.mustCreate(t, owner.Key, map[string]any{"question": "Waiting one", "effort": "medium"})

			cancel := func(ref string) gen.CancelResearchResponse {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + ref + "/cancel", Token: owner.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				var c gen.CancelResearchResponse
				r.JSON(t, &c)
				return c
			}
			require.Equal(t, gen.JobStatusCancelled, cancel(queued.Slug).Status)
			q := e.get(t, owner.Key, queued.Slug)
			require.Empty(t, q.Runs, "a job cancelled before dispatch never ran")
			require.Zero(t, q.CreditsCharged, "and costs nothing")

			c := cancel(running.JobId.String())
			require.Equal(t, gen.JobStatusCancelled, c.Status)
			require.Equal(t, running.Slug, c.Slug)
			got := e.get(t, owner.Key, running.Slug)
			require.Equal(t, gen.CheckResultStatusInterrupted, got.Runs[0].Status)
			require.True(t, got.Runs[0].FinishedAt.IsSpecified() && !got.Runs[0].FinishedAt.IsNull())
			// Terminal: a repeat changes nothing.
			require.Equal(t, gen.JobStatusCancelled, cancel(running.Slug).Status)

			// Continue is refused on cancelled, failed and active jobs.
			cont := func(ref string) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + ref + "/continue", Token: owner.Key})
			}
			r := cont(running.Slug)
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "job_not_continuable", r.Problem(t).Code)
			failed := e.mustCreate(t, owner.Key, map[string]any{"question": "Broken [fail]", "effort": "medium"})
			f := e.await(t, owner.Key, failed.Slug, isTerminal)
			require.Equal(t, gen.JobStatusFailed, f.Status)
			require.Equal(t, "engine_error", f.Error.MustGet().Code)
			require.Equal(t, gen.CheckResultStatusFailed, f.Runs[0].Status)
			require.Zero(t, f.CreditsCharged, "a failed run is refunded")
			require.Equal(t, "job_not_continuable", cont(failed.Slug).Problem(t).Code)
			require.Equal(t, gen.JobStatusFailed, cancel(failed.Slug).Status, "cancel of a terminal job returns its status")

			// Completed → continue: same id and slug, a continuation run, new revisions, charged again.
			ok := e.mustCreate(t, owner.Key, map[string]any{"question": "What is BM25 ranking?", "effort": "medium"})
			first := e.await(t, owner.Key, ok.Slug, isTerminal)
			require.Equal(t, gen.JobStatusCompleted, first.Status)
			r = cont(ok.Slug)
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var again gen.ResearchJobDetail
			r.JSON(t, &again)
			require.Equal(t, ok.JobId, again.JobId)
			require.Equal(t, ok.Slug, again.Slug)
			require.Equal(t, gen.JobStatusQueued, again.Status)
			require.True(t, again.CompletedAt.IsNull())
			require.NotNil(t, again.Report, "the previous report stays until a new one is committed")
			second := e.await(t, owner.Key, ok.Slug, isTerminal)
			require.Equal(t, gen.JobStatusCompleted, second.Status)
			require.Len(t, second.Runs, 2)
			require.Equal(t, gen.CheckResultKindContinuation, second.Runs[1].Kind)
			require.Greater(t, len(second.Revisions), len(first.Revisions))
			require.Equal(t, gen.RevisionCheckpointType("continuation"), second.Revisions[len(second.Revisions)-1].CheckpointType)
			require.Equal(t, second.Runs[1].RunId, second.Revisions[len(second.Revisions)-1].RunId)
			require.Equal(t, 2, second.CreditsCharged)

			// 4 credits: block (1) + ok (1) + continuation (1) spent; one left is enough for medium
			// once more, then 402 and nothing changes.
			r = cont(ok.Slug)
			require.Equal(t, http.StatusAccepted, r.Status)
			e.await(t, owner.Key, ok.Slug, isTerminal)
			r = cont(ok.Slug)
			require.Equal(t, http.StatusPaymentRequired, r.Status, string(r.Body))
			require.Equal(t, "insufficient_credits", r.Problem(t).Code)
			require.Equal(t, gen.JobStatusCompleted, e.get(t, owner.Key, ok.Slug).Status)

			// Another account: private job 404, unknown job 404.
			other := e.NewAccount(t, store.TierEnterprise, false, 10)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + ok.Slug + "/cancel", Token: other.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + ok.Slug + "/continue", Token: other.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/no-such-job-123456/cancel", Token: owner.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
		})
	}
}

// TestResearchCreateRules covers create's refusals: nothing is created by a refused request.
func TestResearchCreateRules(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			broke := e.NewAccount(t, store.TierFree, false, 0)
			rich := e.NewAccount(t, store.TierFree, false, 10)

			cases := []struct {
				name   string
				key    string
				body   map[string]any
				status int
				code   string
				field  string
			}{
				{"no credits for medium", broke.Key, map[string]any{"question": "q"}, http.StatusPaymentRequired, "insufficient_credits", ""},
				{"unknown expert", rich.Key, map[string]any{"question": "q", "expert_id": "financial-analyst"}, http.StatusNotFound, "not_found", ""},
				{"unknown attachment", rich.Key, map[string]any{"question": "q", "attachment_ids": []string{"5f1d3c2b-8a7e-4b6d-9c0f-1e2a3b4c5d6e"}}, http.StatusUnprocessableEntity, "validation_error", "attachment_ids/0"},
				{"invalid json_schema", rich.Key, map[string]any{"question": "q", "json_schema": map[string]any{"type": "nonsense"}}, http.StatusUnprocessableEntity, "validation_error", "json_schema"},
				{"json_schema reading a server file", rich.Key, map[string]any{"question": "q", "json_schema": map[string]any{"$ref": "file:///etc/passwd"}}, http.StatusUnprocessableEntity, "validation_error", "json_schema"},
				{"json_schema on a device that blocks", rich.Key, map[string]any{"question": "q", "json_schema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "file:///dev/ptmx"}}}}, http.StatusUnprocessableEntity, "validation_error", "json_schema"},
				{"json_schema over http", rich.Key, map[string]any{"question": "q", "json_schema": map[string]any{"$ref": "http://127.0.0.1:1/s.json"}}, http.StatusUnprocessableEntity, "validation_error", "json_schema"},
				{"json_schema not an object", rich.Key, map[string]any{"question": "q", "json_schema": map[string]any{"type": "string"}}, http.StatusUnprocessableEntity, "validation_error", "json_schema"},
				{"webhook not http", rich.Key, map[string]any{"question": "q", "webhook_url": "ftp://example.com/x"}, http.StatusUnprocessableEntity, "validation_error", "webhook_url"},
				{"unknown field", rich.Key, map[string]any{"question": "q", "colour": "red"}, http.StatusUnprocessableEntity, "validation_error", "colour"},
				{"empty question", rich.Key, map[string]any{"question": ""}, http.StatusUnprocessableEntity, "validation_error", "question"},
			}
			for _, tc := range cases {
				r := e.create(t, tc.key, tc.body, nil)
				require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
				p := r.Problem(t)
				require.Equal(t, tc.code, p.Code, tc.name)
				require.NotContains(t, string(r.Body), "root:", "%s: no server file content in the answer", tc.name)
				if tc.field != "" {
					require.NotNil(t, p.Errors, tc.name)
					require.Equal(t, tc.field, (*p.Errors)[0].Field, tc.name)
				}
			}
			for _, a := range []servertest.Account{broke, rich} {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: a.Key})
				var page gen.ResearchJobSummaryPage
				r.JSON(t, &page)
				require.Empty(t, page.Items, "refused creates leave no job")
			}

			// Low costs nothing, so a broke account may run it; build is clamped to the free tier's medium.
			low := e.mustCreate(t, broke.Key, map[string]any{"question": "Cheap question", "effort": "low"})
			require.Equal(t, gen.Effort("low"), low.Effort)
			clamped := e.mustCreate(t, rich.Key, map[string]any{"question": "Big question", "effort": "build"})
			require.Equal(t, gen.Effort("medium"), clamped.Effort)
			require.Equal(t, gen.Effort("build"), clamped.RequestedEffort)
			// Defaults: effort medium, not public, no attachments.
			def := e.mustCreate(t, rich.Key, map[string]any{"question": "Default question"})
			require.Equal(t, gen.Effort("medium"), def.RequestedEffort)
			require.False(t, def.IsPublic)
			require.Empty(t, def.Request.AttachmentIds)
		})
	}
}

// TestResearchIdempotency: the same key and body replays the original job and status; another body
// is 409; concurrent duplicates make exactly one job and one charge.
func TestResearchIdempotency(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 20)
			h := http.Header{"Idempotency-Key": {"order-42"}}
			body := map[string]any{"question": "Idempotent question", "effort": "medium"}

			r1 := e.create(t, owner.Key, body, h)
			require.Equal(t, http.StatusAccepted, r1.Status)
			var first gen.ResearchJobDetail
			r1.JSON(t, &first)
			// Same key and body, keys in another order: the original job.
			r2 := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: owner.Key, Header: h,
				RawBody: []byte(`{"effort":"medium",   "question":"Idempotent question"}`), ContentType: "application/json"})
			require.Equal(t, http.StatusAccepted, r2.Status)
			var replay gen.ResearchJobDetail
			r2.JSON(t, &replay)
			require.Equal(t, first.JobId, replay.JobId)
			// Another body: 409, nothing created.
			r3 := e.create(t, owner.Key, map[string]any{"question": "Another question", "effort": "medium"}, h)
			require.Equal(t, http.StatusConflict, r3.Status)
			require.Equal(t, "idempotency_key_reused", r3.Problem(t).Code)
			// The same key from another account is another key.
			other := e.NewAccount(t, store.TierPro, false, 20)
			r4 := e.create(t, other.Key, body, h)
			require.Equal(t, http.StatusAccepted, r4.Status)
			var theirs gen.ResearchJobDetail
			r4.JSON(t, &theirs)
			require.NotEqual(t, first.JobId, theirs.JobId)

			// Concurrent duplicates: one job, one charge.
			const n = 12
			hc := http.Header{"Idempotency-Key": {"burst-7"}}
			ids := make(chan string, n)
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.Send(servertest.Req{Method: "POST", Path: "/api/v2/research", Token: owner.Key, Header: hc,
						Body: map[string]any{"question": "Burst question", "effort": "medium"}})
					if err != nil {
						ids <- "error: " + err.Error()
						return
					}
					if res.Status != http.StatusAccepted {
						ids <- fmt.Sprintf("status %d: %s", res.Status, res.Body)
						return
					}
					var dj gen.ResearchJobDetail
					if err := json.Unmarshal(res.Body, &dj); err != nil {
						ids <- "decode: " + err.Error()
						return
					}
					ids <- dj.JobId.String()
				}()
			}
			wg.Wait()
			close(ids)
			seen := map[string]int{}
			for id := range ids {
				seen[id]++
			}
			require.Len(t, seen, 1, "%v", seen)
			var burstID string
			for id := range seen {
				burstID = id
			}
			done := e.await(t, owner.Key, burstID, isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status)
			require.EqualValues(t, 1, consumptionCount(t, e.Store, burstID))
			var count int64
			require.NoError(t, e.Store.DB().Model(&store.ResearchJob{}).Where("account_id = ? AND question = ?", owner.ID, "Burst question").Count(&count).Error)
			require.EqualValues(t, 1, count)
			// A replay after completion answers the job as it stands now, with the original 202.
			r5 := e.create(t, owner.Key, map[string]any{"question": "Burst question", "effort": "medium"}, hc)
			require.Equal(t, http.StatusAccepted, r5.Status)
			var now gen.ResearchJobDetail
			r5.JSON(t, &now)
			require.Equal(t, gen.JobStatusCompleted, now.Status)
			require.EqualValues(t, 1, consumptionCount(t, e.Store, burstID))
		})
	}
}
