package workspace_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/workspace"
)

func newRepo(t *testing.T) *workspace.Repo {
	t.Helper()
	r, err := workspace.Init(filepath.Join(t.TempDir(), "job"))
	require.NoError(t, err)
	return r
}

func write(t *testing.T, r *workspace.Repo, p, s string) {
	t.Helper()
	require.NoError(t, r.WriteFile(p, []byte(s)))
}

func commit(t *testing.T, r *workspace.Repo, msg, typ string) string {
	t.Helper()
	sha, err := r.Commit(msg, typ)
	require.NoError(t, err)
	require.Len(t, sha, 40)
	return sha
}

func TestInitOpen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	r, err := workspace.Init(dir)
	require.NoError(t, err)
	require.Equal(t, dir, r.Dir())
	write(t, r, "report.md", "# hi\n")
	sha := commit(t, r, "first", workspace.CheckpointProgress)

	// Init on an existing repository opens it.
	r2, err := workspace.Init(dir)
	require.NoError(t, err)
	got, err := r2.Resolve("")
	require.NoError(t, err)
	require.Equal(t, sha, got)

	r3, err := workspace.Open(dir)
	require.NoError(t, err)
	data, err := r3.ReadFile(sha, "report.md")
	require.NoError(t, err)
	require.Equal(t, "# hi\n", string(data))

	_, err = workspace.Open(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	revs, err := r.Revisions()
	require.NoError(t, err)
	require.Empty(t, revs)
	files, err := r.ListFiles("")
	require.NoError(t, err)
	require.Empty(t, files)
	_, err = r.ReadFile("", "report.md")
	require.ErrorIs(t, err, workspace.ErrNotFound)
	_, err = r.Resolve("")
	require.ErrorIs(t, err, workspace.ErrUnknownRevision)
}

func TestCommitsAndRevisions(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	write(t, r, "input_files/notes.txt", "alpha\n")
	write(t, r, "report.md", "v1\n")
	s1 := commit(t, r, "Draft report", workspace.CheckpointProgress)
	write(t, r, "report.md", "v2\n")
	s2 := commit(t, r, "Final report\n\nWith a body.", workspace.CheckpointFinal)
	// An empty checkpoint is still a revision.
	s3 := commit(t, r, "Nothing new", workspace.CheckpointContinuation)

	revs, err := r.Revisions()
	require.NoError(t, err)
	require.Len(t, revs, 3)
	want := []struct{ sha, typ, msg string }{
		{s1, "progress", "Draft report"},
		{s2, "final", "Final report\n\nWith a body."},
		{s3, "continuation", "Nothing new"},
	}
	for i, w := range want {
		require.Equal(t, w.sha, revs[i].SHA)
		require.Equal(t, w.typ, revs[i].CheckpointType)
		require.Equal(t, w.msg, revs[i].Message)
		require.False(t, revs[i].Time.IsZero())
	}

	_, err = r.Commit("x", "bogus")
	require.Error(t, err)
}

func TestReadOldRevisions(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	var shas []string
	for i := range 4 {
		write(t, r, "report.md", fmt.Sprintf("version %d\n", i))
		if i == 2 {
			write(t, r, "charts/q1.png", "\x89PNG\r\n\x1a\nfake")
		}
		shas = append(shas, commit(t, r, fmt.Sprintf("v%d", i), workspace.CheckpointProgress))
	}
	for i, sha := range shas {
		data, err := r.ReadFile(sha, "report.md")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("version %d\n", i), string(data))
		// Abbreviated ids work too.
		data, err = r.ReadFile(sha[:7], "report.md")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("version %d\n", i), string(data))
	}
	head, err := r.ReadFile("", "report.md")
	require.NoError(t, err)
	require.Equal(t, "version 3\n", string(head))

	// The chart did not exist before the third commit.
	_, err = r.ReadFile(shas[1], "charts/q1.png")
	require.ErrorIs(t, err, workspace.ErrNotFound)
	data, err := r.ReadFile(shas[2], "charts/q1.png")
	require.NoError(t, err)
	require.Equal(t, "\x89PNG\r\n\x1a\nfake", string(data))
	// A folder is not a file.
	_, err = r.ReadFile("", "charts")
	require.ErrorIs(t, err, workspace.ErrNotFound)
	_, err = r.ReadFile("", "nope.md")
	require.ErrorIs(t, err, workspace.ErrNotFound)
}

func TestResolve(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// Enough commits that two share a 1-hex-digit prefix; we look for a genuinely ambiguous
	// short prefix below using MinPrefix only where we know the answer.
	var shas []string
	for i := range 20 {
		write(t, r, "f.txt", fmt.Sprint(i))
		shas = append(shas, commit(t, r, fmt.Sprint(i), workspace.CheckpointProgress))
	}
	for _, sha := range shas {
		got, err := r.Resolve(sha)
		require.NoError(t, err)
		require.Equal(t, sha, got)
		got, err = r.Resolve(strings.ToUpper(sha[:10]))
		require.NoError(t, err)
		require.Equal(t, sha, got)
	}
	head, err := r.Resolve("HEAD")
	require.NoError(t, err)
	require.Equal(t, shas[len(shas)-1], head)

	tests := []struct {
		name, rev string
	}{
		{"too short", shas[0][:6]},
		{"not hex", "zzzzzzzz"},
		{"unknown full", strings.Repeat("0", 40)},
		{"unknown prefix", unknownPrefix(shas)},
		{"too long", shas[0] + "0"},
		{"branch name", "master"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(tt.rev)
			require.ErrorIs(t, err, workspace.ErrUnknownRevision)
			_, err = r.ReadFile(tt.rev, "f.txt")
			require.ErrorIs(t, err, workspace.ErrUnknownRevision)
			_, err = r.ListFiles(tt.rev)
			require.ErrorIs(t, err, workspace.ErrUnknownRevision)
		})
	}
}

// unknownPrefix returns a 7-digit prefix that no sha starts with.
func unknownPrefix(shas []string) string {
	for i := 0; ; i++ {
		p := fmt.Sprintf("%07x", i)
		ok := true
		for _, s := range shas {
			if strings.HasPrefix(s, p) {
				ok = false
			}
		}
		if ok {
			return p
		}
	}
}

func TestResolveAmbiguous(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	write(t, r, "f.txt", "x")
	commit(t, r, "base", workspace.CheckpointProgress)

	// Two commits whose ids share MinPrefix hex digits: hashing candidates in memory takes about
	// 2^14 tries (birthday bound on 28 bits), then only the pair is stored.
	g, err := git.PlainOpen(r.Dir())
	require.NoError(t, err)
	encode := func(i int) plumbing.EncodedObject {
		when := time.Unix(1700000000, 0).UTC()
		c := &object.Commit{
			Author:    object.Signature{Name: "t", Email: "t@example.com", When: when},
			Committer: object.Signature{Name: "t", Email: "t@example.com", When: when},
			Message:   fmt.Sprintf("candidate %d\n\nCheckpoint-Type: progress\n", i),
			TreeHash:  plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
		}
		obj := g.Storer.NewEncodedObject()
		require.NoError(t, c.Encode(obj))
		return obj
	}
	seen := map[string]int{}
	var a, b plumbing.EncodedObject
	for i := 0; a == nil; i++ {
		obj := encode(i)
		p := obj.Hash().String()[:workspace.MinPrefix]
		if j, ok := seen[p]; ok {
			a, b = encode(j), obj
		}
		seen[p] = i
	}
	for _, o := range []plumbing.EncodedObject{a, b} {
		_, err := g.Storer.SetEncodedObject(o)
		require.NoError(t, err)
	}
	sa, sb := a.Hash().String(), b.Hash().String()
	_, err = r.Resolve(sa[:workspace.MinPrefix])
	require.ErrorIs(t, err, workspace.ErrAmbiguousRevision)
	_, err = r.ReadFile(sa[:workspace.MinPrefix], "f.txt")
	require.ErrorIs(t, err, workspace.ErrAmbiguousRevision)
	// A longer prefix (or the full id) picks one.
	n := workspace.MinPrefix
	for sa[:n] == sb[:n] {
		n++
	}
	got, err := r.Resolve(sa[:n])
	require.NoError(t, err)
	require.Equal(t, sa, got)
	got, err = r.Resolve(sb)
	require.NoError(t, err)
	require.Equal(t, sb, got)
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	write(t, r, "input_files/data.csv", "a,b\n1,2\n")
	write(t, r, "report.md", "# v1\n")
	write(t, r, "charts/q1.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write(t, r, "notes/README", "plain words\n")
	write(t, r, "blob.unknownext", "\x00\x01\x02")
	s1 := commit(t, r, "one", workspace.CheckpointProgress)
	write(t, r, "report.md", "# v2 longer\n")
	s2 := commit(t, r, "two", workspace.CheckpointProgress)
	write(t, r, "site/index.html", "<!doctype html><p>x</p>")
	s3 := commit(t, r, "three", workspace.CheckpointFinal)

	files, err := r.ListFiles("")
	require.NoError(t, err)
	got := map[string]workspace.FileInfo{}
	var paths []string
	for _, f := range files {
		got[f.Path] = f
		paths = append(paths, f.Path)
	}
	require.Equal(t, []string{"blob.unknownext", "charts/q1.png", "input_files/data.csv", "notes/README", "report.md", "site/index.html"}, paths)

	revs, err := r.Revisions()
	require.NoError(t, err)
	when := map[string]workspace.Revision{}
	for _, rv := range revs {
		when[rv.SHA] = rv
	}
	tests := []struct {
		path, ct, sha string
		size          int64
	}{
		{"input_files/data.csv", "text/csv; charset=utf-8", s1, 8},
		{"report.md", "text/markdown; charset=utf-8", s2, 12},
		{"charts/q1.png", "image/png", s1, 16},
		{"notes/README", "text/plain; charset=utf-8", s1, 12},
		{"blob.unknownext", "application/octet-stream", s1, 3},
		{"site/index.html", "text/html; charset=utf-8", s3, 23},
	}
	for _, tt := range tests {
		f := got[tt.path]
		require.Equal(t, tt.ct, f.ContentType, tt.path)
		require.Equal(t, tt.size, f.Size, tt.path)
		require.Equal(t, tt.sha, f.LastCommitSHA, tt.path)
		require.True(t, f.LastModified.Equal(when[tt.sha].Time), tt.path)
	}

	// At an older revision, only what existed then, with that revision's history.
	old, err := r.ListFiles(s1[:8])
	require.NoError(t, err)
	require.Len(t, old, 5)
	for _, f := range old {
		require.Equal(t, s1, f.LastCommitSHA, f.Path)
	}
}

func TestTraversalRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	r, err := workspace.Init(filepath.Join(outside, "job"))
	require.NoError(t, err)
	write(t, r, "ok.txt", "fine")
	commit(t, r, "base", workspace.CheckpointProgress)

	bad := []string{
		"", "../x", "/etc/passwd", "a/../../x", "a/../b", "./a", "a//b", "a/", "a/.",
		`..\x`, `a\b`, "a\x00b", "\x00", ".git/config", ".GIT/HEAD", "x/.git/y", "..", ".",
		"C:/windows", "a\nb",
	}
	for _, p := range bad {
		t.Run(fmt.Sprintf("%q", p), func(t *testing.T) {
			require.ErrorIs(t, r.WriteFile(p, []byte("pwned")), workspace.ErrBadPath)
			_, err := r.ReadFile("", p)
			require.ErrorIs(t, err, workspace.ErrBadPath)
		})
	}
	_, err = os.Stat(filepath.Join(outside, "x"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// A symlink planted in the tree is not followed.
	require.NoError(t, os.Symlink(outside, filepath.Join(r.Dir(), "link")))
	require.ErrorIs(t, r.WriteFile("link/escape.txt", []byte("pwned")), workspace.ErrBadPath)
	require.NoError(t, os.Symlink(filepath.Join(outside, "target"), filepath.Join(r.Dir(), "file-link")))
	require.ErrorIs(t, r.WriteFile("file-link", []byte("pwned")), workspace.ErrBadPath)
	_, err = os.Stat(filepath.Join(outside, "escape.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(outside, "target"))
	require.ErrorIs(t, err, os.ErrNotExist)
	// A file where a folder is expected.
	require.ErrorIs(t, r.WriteFile("ok.txt/inner", []byte("x")), workspace.ErrBadPath)
}

func TestNestedAndIgnoredPaths(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// An ignore file in the workspace must not hide files written through WriteFile.
	write(t, r, "input_files/.gitignore", "*\n")
	write(t, r, "input_files/deep/er/still.txt", "here")
	write(t, r, "charts/q1.png", "png")
	sha := commit(t, r, "nested", workspace.CheckpointFinal)
	data, err := r.ReadFile(sha, "input_files/deep/er/still.txt")
	require.NoError(t, err)
	require.Equal(t, "here", string(data))
	data, err = r.ReadFile(sha, "charts/q1.png")
	require.NoError(t, err)
	require.Equal(t, "png", string(data))
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	write(t, r, "report.md", "x")
	commit(t, r, "base", workspace.CheckpointProgress)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_ = r.WriteFile(fmt.Sprintf("f%d.txt", i), []byte("x"))
				_, _ = r.Commit("c", workspace.CheckpointProgress)
			} else {
				_, _ = r.ListFiles("")
				_, _ = r.Revisions()
			}
		}()
	}
	wg.Wait()
	revs, err := r.Revisions()
	require.NoError(t, err)
	require.Len(t, revs, 5)
}

func TestOpenMissingIsNotFound(t *testing.T) {
	t.Parallel()
	_, err := workspace.Open(filepath.Join(t.TempDir(), "never-created"))
	if !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("open of a missing workspace: %v, want ErrNotFound", err)
	}
}

// A kill -9 while git writes the index leaves it truncated; opening the workspace rebuilds it from
// HEAD so checkpoints work again and no history or file is lost.
func TestOpenRepairsATruncatedIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := workspace.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.WriteFile("report.md", []byte("# Draft\n")); err != nil {
		t.Fatal(err)
	}
	first, err := repo.Commit("Draft", workspace.CheckpointProgress)
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index, b[:len(b)/3], 0o600); err != nil {
		t.Fatal(err)
	}

	repo, err = workspace.Open(dir)
	if err != nil {
		t.Fatalf("open with a truncated index: %v", err)
	}
	if err := repo.WriteFile("notes.txt", []byte("more\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit("Final", workspace.CheckpointFinal); err != nil {
		t.Fatalf("commit after repair: %v", err)
	}
	revs, err := repo.Revisions()
	if err != nil || len(revs) != 2 || revs[0].SHA != first {
		t.Fatalf("history after repair: %v %v", revs, err)
	}
	files, err := repo.ListFiles("")
	if err != nil || len(files) != 2 {
		t.Fatalf("files after repair: %v %v", files, err)
	}
}

// TestWriteFileReplacesWhole: a write replaces the file by a rename (a killed process leaves the old
// contents or the new), and leaves no temporary file behind, in the tree or under .git.
func TestWriteFileReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "job")
	r, err := workspace.Init(dir)
	require.NoError(t, err)
	require.NoError(t, r.WriteFile("sources/index.json", []byte(`{"old":true}`)))
	before, err := os.Stat(filepath.Join(dir, "sources", "index.json"))
	require.NoError(t, err)
	require.NoError(t, r.WriteFile("sources/index.json", []byte(`{"new":true}`)))
	after, err := os.Stat(filepath.Join(dir, "sources", "index.json"))
	require.NoError(t, err)
	require.False(t, os.SameFile(before, after), "a new file renamed into place, not the old one rewritten")
	got, err := os.ReadFile(filepath.Join(dir, "sources", "index.json"))
	require.NoError(t, err)
	require.Equal(t, `{"new":true}`, string(got))
	require.Equal(t, os.FileMode(0o640), after.Mode().Perm())
	left, err := filepath.Glob(filepath.Join(dir, ".git", "write-*"))
	require.NoError(t, err)
	require.Empty(t, left)
}
