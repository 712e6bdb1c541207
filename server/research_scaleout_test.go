package server_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/researchd/researchd/app"
	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// process is one app with its own job service and data directory over a database and a blob store
// it shares with others: what one `serve` process is. Its workers start only when the test says.
type process struct {
	*researchEnv
	dir string
}

func newProcess(t *testing.T, st *store.Store, bucket *blob.Bucket) *process {
	t.Helper()
	dir := t.TempDir()
	env := servertest.NewOn(t, st, func(cfg *servertest.Config) {
		jc := &cfg.App.Jobs
		jc.DataDir = dir
		jc.TestOnly = true
		jc.PollInterval = 20 * time.Millisecond
		jc.CancelCheck = 20 * time.Millisecond
		cfg.App.Bucket = bucket
		cfg.App.Engine = testEngine{offline: extractive.New(extractive.Options{CorpusDir: testCorpus(t)})}
	})
	t.Cleanup(func() { stopWorkers(env.Services) })
	return &process{researchEnv: &researchEnv{Env: env, svc: env.Services.Research}, dir: dir}
}

func stopWorkers(svcs *app.Services) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = svcs.Stop(ctx)
}

// ranHere reports whether the process holds a working copy of the job.
func (p *process) ranHere(jobID string) bool {
	_, err := os.Stat(filepath.Join(p.dir, "workspaces", jobID, ".git"))
	return err == nil
}

// sharedStores opens the database twice on Postgres (one pool per process); SQLite keeps one
// connection, so both processes share it.
func sharedStores(t *testing.T, d store.Dialect) (*store.Store, *store.Store) {
	t.Helper()
	if d == store.SQLite {
		st := storetest.Open(t, d)
		return st, st
	}
	u := storetest.URL(t, d)
	return storetest.OpenURL(t, u), storetest.OpenURL(t, u)
}

// twoProcesses are two processes over one database (two pools on Postgres) and one blob store,
// with an account created through the first.
func twoProcesses(t *testing.T, d store.Dialect) (a, b *process, owner servertest.Account) {
	t.Helper()
	stA, stB := sharedStores(t, d)
	bucket, err := attachments.OpenBucket(context.Background(), "file://"+t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bucket.Close() })
	a, b = newProcess(t, stA, bucket), newProcess(t, stB, bucket)
	return a, b, a.NewAccount(t, store.TierPro, false, 100)
}

// TestScaleOutEveryProcessServesEveryJob (issue 13, point 9): two processes with separate data
// directories over one database and one blob store. A runs the first runs, then B (which never saw
// A's git repositories) runs the continuations. Every job's detail, every revision's report, every
// file list and every file's bytes are the same from both, and match what A's git history says.
func TestScaleOutEveryProcessServesEveryJob(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			a, b, owner := twoProcesses(t, d)

			// An attachment uploaded through B is copied into input_files/ by a run on A.
			body, ct := multipartBody(t, part{filename: "grid-notes.txt", data: []byte("EU electricity prices rose in 2024 because gas prices stayed high.\n")})
			r := b.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var att struct {
				AttachmentID string `json:"attachment_id"`
			}
			r.JSON(t, &att)
			created := []gen.ResearchJobDetail{
				a.mustCreate(t, owner.Key, map[string]any{"question": "What drove the 2024 rise in EU electricity prices? [files]", "effort": "high",
					"attachment_ids": []string{att.AttachmentID}, "is_public": true}),
				b.mustCreate(t, owner.Key, map[string]any{"question": "Why do interconnectors congest in winter?", "effort": "medium"}),
				b.mustCreate(t, owner.Key, map[string]any{"question": "A run that fails [fail]", "effort": "low"}),
				a.mustCreate(t, owner.Key, map[string]any{"question": "A short answer about gas storage", "effort": "low"}),
			}
			require.NoError(t, a.Services.Start(context.Background()))
			for _, j := range created {
				b.await(t, owner.Key, j.Slug, isTerminal)
			}
			stopWorkers(a.Services)

			// B continues two jobs: its working copies start from the published revisions.
			require.NoError(t, b.Services.Start(context.Background()))
			for _, j := range created[:2] {
				r := b.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + j.Slug + "/continue", Token: owner.Key})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			}
			for _, j := range created[:2] {
				done := a.await(t, owner.Key, j.Slug, func(d gen.ResearchJobDetail) bool { return isTerminal(d) && len(d.Runs) == 2 })
				require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			}
			continued := map[string]bool{created[0].JobId.String(): true, created[1].JobId.String(): true}
			for _, j := range created {
				id := j.JobId.String()
				require.True(t, a.ranHere(id), "A ran every first run")
				require.Equal(t, continued[id], b.ranHere(id), "B ran the continuations only")
			}

			for _, j := range created {
				for _, tok := range []string{owner.Key, ""} {
					if tok == "" && !j.IsPublic {
						continue
					}
					sameFromEvery(t, []*process{a, b}, tok, j.JobId.String())
				}
				matchesGit(t, a, owner.Key, j.JobId.String())
			}

			// The continuation on B kept the input file copied on A, with the revision that added it.
			files := fileList(t, b.researchEnv, owner.Key, "/api/v2/research/"+created[0].Slug+"/files")
			first := fileList(t, a.researchEnv, owner.Key, "/api/v2/research/"+created[0].Slug+"/files?revision="+firstRunLastRevision(t, a, owner.Key, created[0].Slug))
			in := findFile(t, files, "input_files/grid-notes.txt")
			require.Equal(t, findFile(t, first, "input_files/grid-notes.txt").LastCommitSha, in.LastCommitSha)
			require.Contains(t, string(b.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + created[0].Slug + "/files/input_files/grid-notes.txt", Token: owner.Key}).Body), "gas prices")
		})
	}
}

// firstRunLastRevision is the last revision the job's first run made.
func firstRunLastRevision(t *testing.T, p *process, key, ref string) string {
	t.Helper()
	d := p.get(t, key, ref)
	sha := ""
	for _, r := range d.Revisions {
		if r.RunId == d.Runs[0].RunId {
			sha = r.CommitSha
		}
	}
	require.NotEmpty(t, sha)
	return sha
}

func fileList(t *testing.T, e *researchEnv, key, path string) gen.WorkspaceFileList {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: path, Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var l gen.WorkspaceFileList
	r.JSON(t, &l)
	return l
}

func findFile(t *testing.T, l gen.WorkspaceFileList, path string) gen.WorkspaceFile {
	t.Helper()
	for _, f := range l.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("%s is not listed at %v", path, l.RevisionSha)
	return gen.WorkspaceFile{}
}

// sameFromEvery reads the job's detail, its report at every revision, its file list at the latest
// and at every revision, and every file at every revision from each process, and requires the
// same status, Content-Type and bytes from all.
func sameFromEvery(t *testing.T, ps []*process, key, jobID string) {
	t.Helper()
	base := "/api/v2/research/" + jobID
	read := func(path string) *servertest.Resp {
		t.Helper()
		var first *servertest.Resp
		for i, p := range ps {
			r := p.Do(t, servertest.Req{Method: "GET", Path: path, Token: key})
			require.Equal(t, http.StatusOK, r.Status, "process %d: %s: %s", i, path, r.Body)
			if first == nil {
				first = r
				continue
			}
			require.Equal(t, first.Header.Get("Content-Type"), r.Header.Get("Content-Type"), path)
			require.Equal(t, string(first.Body), string(r.Body), "process %d differs: %s", i, path)
		}
		return first
	}
	var d gen.ResearchJobDetail
	read(base).JSON(t, &d)
	revs := []string{""}
	for _, rev := range d.Revisions {
		revs = append(revs, rev.CommitSha)
		read(base + "?revision=" + rev.CommitSha)
		read(base + "?revision=" + rev.CommitSha[:8])
	}
	for _, rev := range revs {
		q := ""
		if rev != "" {
			q = "?revision=" + rev
		}
		var l gen.WorkspaceFileList
		read(base+"/files"+q).JSON(t, &l)
		if rev != "" {
			require.Equal(t, rev, l.RevisionSha.MustGet())
		}
		for _, f := range l.Files {
			got := read(base + "/files/" + f.Path + q)
			require.Len(t, got.Body, f.SizeBytes, f.Path)
			require.Equal(t, f.ContentType, got.Header.Get("Content-Type"), f.Path)
		}
	}
}

// matchesGit checks each revision's published listing against the git history of the process that
// made it (what the listing was computed from before revisions were published): the same paths,
// sizes, MIME types, last commits and times, and the same bytes.
func matchesGit(t *testing.T, p *process, key, jobID string) {
	t.Helper()
	repo, err := p.svc.Workspace(jobID)
	if err != nil {
		return // no run got as far as a workspace
	}
	d := p.get(t, key, jobID)
	for _, rev := range d.Revisions {
		if _, err := repo.Resolve(rev.CommitSha); err != nil {
			continue // made by another process
		}
		want, err := repo.ListFiles(rev.CommitSha)
		require.NoError(t, err)
		got := fileList(t, p.researchEnv, key, "/api/v2/research/"+jobID+"/files?revision="+url.QueryEscape(rev.CommitSha))
		require.Len(t, got.Files, len(want), rev.CommitSha)
		for i, w := range want {
			g := got.Files[i]
			require.Equal(t, w.Path, g.Path)
			require.EqualValues(t, w.Size, g.SizeBytes, w.Path)
			require.Equal(t, w.ContentType, g.ContentType, w.Path)
			require.Equal(t, w.LastCommitSHA, g.LastCommitSha, w.Path)
			require.True(t, w.LastModified.Equal(g.LastModified), "%s: %s != %s", w.Path, w.LastModified, g.LastModified)
			data, err := repo.ReadFile(rev.CommitSha, w.Path)
			require.NoError(t, err)
			r := p.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + jobID + "/files/" + w.Path + "?revision=" + rev.CommitSha, Token: key})
			require.Equal(t, string(data), string(r.Body), w.Path)
		}
	}
}
