package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestTwoServeProcessesServeEveryJob is the scale-out check of issue 13 (point 9): two real
// `researchd serve` processes with separate data directories over one Postgres database and one
// blob store. Jobs (some with an attachment, some public) are created on either, run wherever a
// worker takes them, and some are continued; then every job's detail, its report at every revision,
// its file list at every revision and every file's bytes are read from both processes and must be
// identical, anonymous reads of public jobs included.
func TestTwoServeProcessesServeEveryJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two processes; skipped with -short")
	}
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("two processes need a shared Postgres: set TEST_DATABASE_URL")
	}
	t.Parallel()
	bin := buildResearchd(t)
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := storetest.URL(t, store.Postgres)
	st, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	acct, err := createAccount(ctx, st, "scale@example.com", store.TierPro, false, 200, billing.DefaultConfig())
	require.NoError(t, err)
	_, key, err := accounts.New(st, accounts.Options{}).CreateKey(ctx, acct.ID, nil, []string{"research", "attachments"})
	require.NoError(t, err)

	env := func(name string) []string {
		return append(os.Environ(),
			"DATABASE_URL="+dbURL, "RESEARCH_DATA_DIR="+filepath.Join(dir, name), "RESEARCH_BLOB_URL=file://"+filepath.Join(dir, "blobs"),
			"RESEARCH_ADDR=127.0.0.1:0", "RESEARCH_WORKERS=2", "RESEARCH_POLL_INTERVAL=20ms", "RESEARCH_SECRET_KEY=scale-out test secret",
			"RESEARCH_RATE_LIMITS=pro=1000000/m,anonymous=1000000/m", "RESEARCH_LOG_LEVEL=info", "RESEARCH_SEARCH_PROVIDER=none")
	}
	procs := []*process{startProcess(t, bin, env("one"), filepath.Join(dir, "one.log")), startProcess(t, bin, env("two"), filepath.Join(dir, "two.log"))}
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			_ = p.cmd.Wait()
		}
	})

	attID := uploadAttachment(t, procs[1].addr, key, "grid-notes.txt", "Wholesale electricity prices rose because gas prices stayed high and interconnectors were congested.\n")
	var ids []string
	for i := 0; i < 10; i++ {
		body := map[string]any{"question": fmt.Sprintf("Why did wholesale electricity prices move in scenario %d?", i), "effort": "medium", "is_public": i%3 == 0}
		if i%2 == 0 {
			body["attachment_ids"] = []string{attID}
		}
		r := call(t, procs[i%2].addr, key, "POST", "/api/v2/research", body)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		ids = append(ids, r.field(t, "job_id"))
	}
	settled := func() bool {
		n, err := st.CountJobsByStatus(ctx)
		require.NoError(t, err)
		return n[jobs.Queued]+n[jobs.InProgress] == 0
	}
	waitUntil(t, settled)
	for i, id := range ids[:4] {
		r := call(t, procs[(i+1)%2].addr, key, "POST", "/api/v2/research/"+id+"/continue", nil)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	}
	waitUntil(t, settled)

	ranOnlyElsewhere := 0
	for _, id := range ids {
		var j store.ResearchJob
		require.NoError(t, st.DB().Where("id = ?", id).Take(&j).Error)
		require.Equal(t, jobs.Completed, j.Status, "job %s: %s", id, deref(j.ErrorMessage))
		held := 0
		for _, name := range []string{"one", "two"} {
			if _, err := os.Stat(filepath.Join(dir, name, "workspaces", id, ".git")); err == nil {
				held++
			}
		}
		ranOnlyElsewhere += 2 - held
		tokens := []string{key}
		if j.IsPublic {
			tokens = append(tokens, "")
		}
		for _, tok := range tokens {
			sameFromBoth(t, procs, tok, id)
		}
	}
	t.Logf("reads served by a process without the job's working copy: %d of %d (job, process) pairs", ranOnlyElsewhere, 2*len(ids))
	require.Positive(t, ranOnlyElsewhere, "some job was served by a process that never ran it")
}

type answer struct {
	status      int
	contentType string
	body        []byte
}

func (a answer) field(t *testing.T, name string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m))
	s, _ := m[name].(string)
	return s
}

func call(t *testing.T, addr, key, method, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b}
}

func uploadAttachment(t *testing.T, addr, key, name, content string) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, err := mw.CreateFormFile("files", name)
	require.NoError(t, err)
	_, err = io.WriteString(w, content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	req, err := http.NewRequest("POST", "http://"+addr+"/api/v2/attachments", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusCreated, res.StatusCode, string(b))
	return answer{body: b}.field(t, "attachment_id")
}

// sameFromBoth reads everything of one job from both processes and requires identical answers.
func sameFromBoth(t *testing.T, procs []*process, key, id string) {
	t.Helper()
	read := func(path string) answer {
		t.Helper()
		first := call(t, procs[0].addr, key, "GET", path, nil)
		require.Equal(t, http.StatusOK, first.status, "%s: %s", path, first.body)
		other := call(t, procs[1].addr, key, "GET", path, nil)
		require.Equal(t, first.status, other.status, path)
		require.Equal(t, first.contentType, other.contentType, path)
		require.Equal(t, string(first.body), string(other.body), path)
		return first
	}
	base := "/api/v2/research/" + id
	var detail struct {
		Revisions []struct {
			CommitSha string `json:"commit_sha"`
		} `json:"revisions"`
	}
	require.NoError(t, json.Unmarshal(read(base).body, &detail))
	require.NotEmpty(t, detail.Revisions)
	queries := []string{""}
	for _, r := range detail.Revisions {
		read(base + "?revision=" + r.CommitSha)
		queries = append(queries, "?revision="+r.CommitSha)
	}
	for _, q := range queries {
		var list struct {
			Files []struct {
				Path      string `json:"path"`
				SizeBytes int    `json:"size_bytes"`
			} `json:"files"`
		}
		require.NoError(t, json.Unmarshal(read(base+"/files"+q).body, &list))
		require.NotEmpty(t, list.Files, q)
		for _, f := range list.Files {
			got := read(base + "/files/" + f.Path + q)
			require.Len(t, got.body, f.SizeBytes, f.Path)
			require.False(t, key == "" && strings.HasPrefix(f.Path, "input_files/"), "anonymous readers never see inputs")
		}
	}
}
