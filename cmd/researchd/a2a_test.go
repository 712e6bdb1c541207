package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/a2aserver/a2atest"
	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestServeSpeaksA2AAndV1 starts `researchd serve` as a real process and drives it as outside
// clients would: a2a-go's client in protocol v1.0 and v0.3 (send, get, stream, cancel, another
// account's task), a malformed request, and the v1 grep endpoint at each depth.
func TestServeSpeaksA2AAndV1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	bin := buildResearchd(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			dbURL := storetest.URL(t, d)
			st, err := store.Open(ctx, dbURL)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, st.Migrate(ctx))
			keys := map[string]string{}
			for _, email := range []string{"owner@example.com", "other@example.com"} {
				acct, err := createAccount(ctx, st, email, store.TierPro, false, 100, billing.DefaultConfig())
				require.NoError(t, err)
				_, keys[email], err = accounts.New(st, accounts.Options{}).CreateKey(ctx, acct.ID, nil, []string{"research"})
				require.NoError(t, err)
			}
			env := append(os.Environ(), "DATABASE_URL="+dbURL, "RESEARCH_DATA_DIR="+filepath.Join(dir, "data"),
				"RESEARCH_ADDR=127.0.0.1:0", "RESEARCH_POLL_INTERVAL=20ms", "RESEARCH_LOG_LEVEL=info", "RESEARCH_SEARCH_PROVIDER=none")
			p := startProcess(t, bin, env, filepath.Join(dir, "serve.log"))
			base := "http://" + p.addr

			card, err := a2atest.Card(ctx, base)
			require.NoError(t, err)
			require.True(t, card.Capabilities.Streaming)
			for _, v := range a2atest.Versions {
				t.Run(string(v), func(t *testing.T) {
					c, err := a2atest.Client(ctx, card, v, keys["owner@example.com"])
					require.NoError(t, err)
					o, err := a2atest.Client(ctx, card, v, keys["other@example.com"])
					require.NoError(t, err)
					req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What drove the 2024 rise in EU electricity prices?")),
						Metadata: map[string]any{"effort": "low"}}

					// Send waits for the job; the task is the job, under REST too.
					res, err := c.SendMessage(ctx, req)
					require.NoError(t, err)
					task := res.(*a2a.Task)
					require.Equal(t, a2a.TaskStateCompleted, task.Status.State)
					require.NotEmpty(t, task.Artifacts)
					got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
					require.NoError(t, err)
					require.Equal(t, task.Artifacts[0].Parts[0].Text(), got.Artifacts[0].Parts[0].Text())
					var job struct {
						Status string `json:"status"`
						Report struct {
							Markdown string `json:"markdown"`
						} `json:"report"`
					}
					require.Equal(t, http.StatusOK, getJSON(t, base+"/api/v2/research/"+string(task.ID), keys["owner@example.com"], &job))
					require.Equal(t, "completed", job.Status)
					require.Equal(t, job.Report.Markdown, got.Artifacts[0].Parts[0].Text())

					// Another account: no such task.
					_, err = o.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
					require.ErrorIs(t, err, a2a.ErrTaskNotFound)
					_, err = o.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
					require.ErrorIs(t, err, a2a.ErrTaskNotFound)

					// Stream: the timeline, the report, the terminal state.
					var events []a2a.Event
					for ev, err := range c.SendStreamingMessage(ctx, req) {
						require.NoError(t, err)
						events = append(events, ev)
					}
					require.GreaterOrEqual(t, len(events), 4)
					last := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
					require.Equal(t, a2a.TaskStateCompleted, last.Status.State)
					_, isArtifact := events[len(events)-2].(*a2a.TaskArtifactUpdateEvent)
					require.True(t, isArtifact)

					// Cancel a task right after sending it. Its job may beat the cancel (a fast
					// worker finishes first: not cancelable); a few tries always catch one queued
					// or running.
					canceled := false
					for range 5 {
						quick := *req
						quick.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
						res, err := c.SendMessage(ctx, &quick)
						require.NoError(t, err)
						ct, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: res.(*a2a.Task).ID})
						if err != nil {
							require.ErrorIs(t, err, a2a.ErrTaskNotCancelable)
							continue
						}
						require.Equal(t, a2a.TaskStateCanceled, ct.Status.State)
						canceled = true
						break
					}
					require.True(t, canceled)
				})
			}

			// A malformed request is a JSON-RPC parse error, not a problem.
			r, err := http.NewRequest("POST", base+"/api/v2/a2a", strings.NewReader(`{"jsonrpc":"2.0",`))
			require.NoError(t, err)
			r.Header.Set("Authorization", "Bearer "+keys["owner@example.com"])
			r.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(r)
			require.NoError(t, err)
			b, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body is not valid JSON"}}`, string(b))

			// v1 at each depth: the default budgets outlast the offline engine, so each answers
			// complete with the report, at its depth's effort.
			for depth, effort := range map[string]string{"ultra_fast": "low", "deep": "medium", "ultra_deep": "high"} {
				var out struct {
					Status string `json:"status"`
					JobID  string `json:"job_id"`
					Result string `json:"result"`
				}
				body := `{"question":"Who won the 2024 Nobel Prize in Chemistry?","depth":"` + depth + `"}`
				require.Equal(t, http.StatusOK, postJSON(t, base+"/v1/grep/research", keys["owner@example.com"], body, &out), depth)
				require.Equal(t, "complete", out.Status, depth)
				require.NotEmpty(t, out.Result)
				var job struct {
					Effort string `json:"effort"`
				}
				require.Equal(t, http.StatusOK, getJSON(t, base+"/api/v2/research/"+out.JobID, keys["owner@example.com"], &job))
				require.Equal(t, effort, job.Effort, depth)
				require.Equal(t, http.StatusOK, getJSON(t, base+"/v1/grep/research/"+out.JobID, keys["owner@example.com"], &out))
				require.Equal(t, "complete", out.Status)
				require.Equal(t, http.StatusNotFound, getJSON(t, base+"/v1/grep/research/"+out.JobID, keys["other@example.com"], nil))
			}
		})
	}
}

func getJSON(t *testing.T, url, key string, v any) int {
	t.Helper()
	return doJSON(t, "GET", url, key, "", v)
}

func postJSON(t *testing.T, url, key, body string, v any) int {
	t.Helper()
	return doJSON(t, "POST", url, key, body, v)
}

func doJSON(t *testing.T, method, url, key, body string, v any) int {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if v != nil && res.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(b, v), string(b))
	}
	return res.StatusCode
}
