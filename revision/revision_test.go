package revision_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/researchd/researchd/revision"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
	"github.com/researchd/researchd/workspace"
)

type bundle struct {
	st     *store.Store
	bucket *blob.Bucket
	svc    *revision.Service
	jobID  string
	repo   *workspace.Repo
	n      int
}

// setup builds a service over st and an in-memory bucket, and one job whose working copy is repo;
// the service finds that working copy the way a job service does (ErrNotFound for other jobs).
func setup(t *testing.T, st *store.Store) *bundle {
	t.Helper()
	repo, err := workspace.Init(filepath.Join(t.TempDir(), "job"))
	require.NoError(t, err)
	b := &bundle{st: st, bucket: memblob.OpenBucket(nil), jobID: uuid.NewString(), repo: repo}
	t.Cleanup(func() { _ = b.bucket.Close() })
	b.svc = revision.New(st, b.bucket, b.local, nil)
	return b
}

func (b *bundle) local(jobID string) (*workspace.Repo, error) {
	if jobID != b.jobID {
		return nil, fmt.Errorf("job %s: %w", jobID, workspace.ErrNotFound)
	}
	return b.repo, nil
}

// checkpoint writes files ("" content removes), commits, and records the revision; published says
// whether its files are published the way the runner does, or left for a backfill (a revision
// recorded before manifests existed).
func (b *bundle) checkpoint(t *testing.T, files map[string]string, published bool) store.ResearchRevision {
	t.Helper()
	ctx := context.Background()
	for p, c := range files {
		if c == "" {
			_, err := b.repo.RemoveFile(p)
			require.NoError(t, err)
			continue
		}
		require.NoError(t, b.repo.WriteFile(p, []byte(c)))
	}
	sha, err := b.repo.Commit("step", workspace.CheckpointProgress)
	require.NoError(t, err)
	b.n++
	rev := store.ResearchRevision{JobID: b.jobID, SHA: sha, RunID: uuid.NewString(), CheckpointType: workspace.CheckpointProgress,
		Message: "step", CreatedAt: time.Now().UTC(), FilesStored: published}
	var manifest []store.ResearchRevisionFile
	if published {
		manifest, err = b.svc.Publish(ctx, b.repo, b.jobID, sha)
		require.NoError(t, err)
	}
	require.NoError(t, b.st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.AddRevision(ctx, &rev); err != nil {
			return err
		}
		return tx.AddRevisionFiles(ctx, manifest)
	}))
	return rev
}

// sameAsGit requires the published files of rev to be what the git history says, bytes included.
func (b *bundle) sameAsGit(t *testing.T, rev store.ResearchRevision) []store.ResearchRevisionFile {
	t.Helper()
	ctx := context.Background()
	got, err := b.svc.Files(ctx, rev)
	require.NoError(t, err)
	want, err := b.repo.ListFiles(rev.SHA)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		require.Equal(t, w.Path, g.Path)
		require.Equal(t, w.Size, g.Size, w.Path)
		require.Equal(t, w.ContentType, g.ContentType, w.Path)
		require.Equal(t, w.LastCommitSHA, g.LastCommitSHA, w.Path)
		require.True(t, w.LastModified.Equal(g.LastModified), w.Path)
		data, f, err := b.svc.ReadFile(ctx, rev, w.Path)
		require.NoError(t, err)
		require.Equal(t, g, f)
		raw, err := b.repo.ReadFile(rev.SHA, w.Path)
		require.NoError(t, err)
		require.Equal(t, string(raw), string(data), w.Path)
	}
	return got
}

func blobCount(t *testing.T, bucket *blob.Bucket) int {
	t.Helper()
	n := 0
	it := bucket.List(nil)
	for {
		_, err := it.Next(context.Background())
		if err != nil {
			break
		}
		n++
	}
	return n
}

// history is three checkpoints: files added, one changed and one copied, one removed.
var history = []map[string]string{
	{"report.md": "# Draft\n", "notes/a.txt": "alpha\n", "data.bin": "\x00\x01binary"},
	{"report.md": "# Final\n", "notes/copy.txt": "alpha\n"},
	{"notes/a.txt": ""},
}

func TestPublishedRevisionsMatchGit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st)
		var revs []store.ResearchRevision
		for _, step := range history {
			revs = append(revs, b.checkpoint(t, step, true))
		}
		for _, rev := range revs {
			b.sameAsGit(t, rev)
		}
		// Content-addressed: "alpha" is stored once although two paths and three revisions hold it.
		require.Equal(t, 4, blobCount(t, b.bucket), "# Draft, # Final, alpha, binary")
		files, err := b.svc.Files(ctx, revs[1])
		require.NoError(t, err)
		last := map[string]string{}
		for _, f := range files {
			last[f.Path] = f.LastCommitSHA
		}
		require.Equal(t, map[string]string{"data.bin": revs[0].SHA, "notes/a.txt": revs[0].SHA, "notes/copy.txt": revs[1].SHA, "report.md": revs[1].SHA}, last)
		_, _, err = b.svc.ReadFile(ctx, revs[2], "notes/a.txt")
		require.ErrorIs(t, err, revision.ErrNoFile)
		_, _, err = b.svc.ReadFile(ctx, revs[2], "notes")
		require.ErrorIs(t, err, revision.ErrNoFile, "a folder is not a file")
	})
}

func TestResolve(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := revision.New(st, memblob.OpenBucket(nil), nil, nil)
		job, empty := uuid.NewString(), uuid.NewString()
		shas := []string{"abcdef1" + strings.Repeat("0", 33), "abcdef1" + strings.Repeat("1", 33), "1234567" + strings.Repeat("2", 33)}
		for _, sha := range shas {
			require.NoError(t, st.AddRevision(ctx, &store.ResearchRevision{JobID: job, SHA: sha, RunID: uuid.NewString(), CheckpointType: "progress", CreatedAt: time.Now()}))
		}
		cases := []struct {
			job, rev, want string
			err            error
		}{
			{job, "", shas[2], nil},
			{job, "HEAD", shas[2], nil},
			{job, shas[0], shas[0], nil},
			{job, strings.ToUpper(shas[1]), shas[1], nil},
			{job, "abcdef11", shas[1], nil},
			{job, "1234567", shas[2], nil},
			{job, "abcdef1", "", revision.ErrAmbiguous},
			{job, "123456", "", revision.ErrUnknown},      // shorter than MinPrefix
			{job, "1234567%", "", revision.ErrUnknown},    // not hex: no LIKE wildcard gets through
			{job, "_234567", "", revision.ErrUnknown},     // likewise
			{job, shas[0] + "0", "", revision.ErrUnknown}, // longer than a commit id
			{job, strings.Repeat("f", 40), "", revision.ErrUnknown},
			{empty, "", "", revision.ErrUnknown},
			{empty, "HEAD", "", revision.ErrUnknown},
			{empty, shas[0], "", revision.ErrUnknown}, // another job's revision
		}
		for _, c := range cases {
			got, err := svc.Resolve(ctx, c.job, c.rev)
			if c.err != nil {
				require.ErrorIs(t, err, c.err, c.rev)
				continue
			}
			require.NoError(t, err, c.rev)
			require.Equal(t, c.want, got.SHA, c.rev)
		}
	})
}

// TestBackfill: revisions recorded before manifests existed are published on first read by the
// process holding the working copy; another process answers ErrUnavailable until then, and a
// checkpoint after them backfills them first.
func TestBackfill(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st)
		old := []store.ResearchRevision{b.checkpoint(t, history[0], false), b.checkpoint(t, history[1], false)}

		elsewhere := revision.New(st, b.bucket, func(id string) (*workspace.Repo, error) {
			return nil, fmt.Errorf("job %s: %w", id, workspace.ErrNotFound)
		}, nil)
		_, err := elsewhere.Files(ctx, old[1])
		require.ErrorIs(t, err, revision.ErrUnavailable)
		_, _, err = elsewhere.ReadFile(ctx, old[1], "report.md")
		require.ErrorIs(t, err, revision.ErrUnavailable)

		// Reading the newest revision backfills both, oldest first, so last changes carry over.
		b.sameAsGit(t, old[1])
		revs, err := st.RevisionsForJob(ctx, b.jobID)
		require.NoError(t, err)
		for _, r := range revs {
			require.True(t, r.FilesStored, r.SHA)
		}
		files, err := elsewhere.Files(ctx, revs[0])
		require.NoError(t, err, "published now: any process serves it")
		require.Len(t, files, 3)

		// A checkpoint after an unpublished revision publishes that one first.
		c := setup(t, st)
		c.checkpoint(t, history[0], false)
		third := c.checkpoint(t, history[1], true)
		revs, err = st.RevisionsForJob(ctx, c.jobID)
		require.NoError(t, err)
		require.True(t, revs[0].FilesStored)
		c.sameAsGit(t, third)
	})
}

// TestRestore: a working copy without the job's latest revision (another process ran it) is
// brought to it; the next checkpoint there keeps each unchanged file's last change.
func TestRestore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st)
		var revs []store.ResearchRevision
		for _, step := range history {
			revs = append(revs, b.checkpoint(t, step, true))
		}
		restored, err := b.svc.Restore(ctx, b.repo, b.jobID)
		require.NoError(t, err)
		require.False(t, restored, "the working copy holds the latest revision")

		// Another process's working copy: empty, or with a stale file the latest revision lacks.
		for _, stale := range []bool{false, true} {
			other, err := workspace.Init(filepath.Join(t.TempDir(), "other"))
			require.NoError(t, err)
			if stale {
				require.NoError(t, other.WriteFile("notes/a.txt", []byte("old\n")))
				_, err := other.Commit("old", workspace.CheckpointProgress)
				require.NoError(t, err)
			}
			restored, err := b.svc.Restore(ctx, other, b.jobID)
			require.NoError(t, err)
			require.True(t, restored)
			require.NoError(t, other.WriteFile("extra.md", []byte("continued\n")))
			sha, err := other.Commit("continued", workspace.CheckpointContinuation)
			require.NoError(t, err)
			files, err := b.svc.Publish(ctx, other, b.jobID, sha)
			require.NoError(t, err)
			got := map[string]string{}
			for _, f := range files {
				got[f.Path] = f.LastCommitSHA
			}
			require.Equal(t, map[string]string{"data.bin": revs[0].SHA, "notes/copy.txt": revs[1].SHA, "report.md": revs[1].SHA, "extra.md": sha}, got)
		}
	})
}
