// Package workspace keeps one git repository per research job. Every checkpoint an engine takes is
// a commit; the commit message carries the checkpoint type in a "Checkpoint-Type:" trailer so the
// revision list can be rebuilt from git alone. The repository is plain (non-bare) so engines and
// people can read the files on disk; it is written through go-git (pure Go, no git binary).
package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Checkpoint types recorded in the commit trailer.
const (
	CheckpointProgress     = "progress"
	CheckpointFinal        = "final"
	CheckpointContinuation = "continuation"
)

// TrailerKey is the commit-message trailer that records the checkpoint type.
const TrailerKey = "Checkpoint-Type"

// MinPrefix is the shortest abbreviated commit id Resolve accepts.
const MinPrefix = 7

var (
	// ErrBadPath: a path that is empty, absolute, escapes the workspace, or names git metadata.
	ErrBadPath = errors.New("workspace: bad path")
	// ErrNotFound: no such file at that revision (or the repository has no commits yet).
	ErrNotFound = errors.New("workspace: file not found")
	// ErrUnknownRevision: no commit matches the revision.
	ErrUnknownRevision = errors.New("workspace: unknown revision")
	// ErrAmbiguousRevision: an abbreviated revision matches more than one commit.
	ErrAmbiguousRevision = errors.New("workspace: ambiguous revision")
)

// author signs every commit; workspaces are written by the service, not by people.
var author = object.Signature{Name: "researchd", Email: "researchd@localhost"}

// Repo is one job's workspace. Its methods are safe for concurrent use; they are serialised because
// go-git's filesystem storage is not documented as safe for concurrent writers and readers.
type Repo struct {
	dir  string
	repo *git.Repository

	mu sync.Mutex
	// pending holds paths written since the last commit. They are staged explicitly (besides the
	// `git add -A` pass) so that an ignore file planted in the workspace cannot hide them.
	pending map[string]struct{}
}

// Revision is one commit of the workspace.
type Revision struct {
	SHA            string
	CheckpointType string
	Message        string // the message without the trailer
	Time           time.Time
}

// FileInfo describes one file of the workspace at a revision.
type FileInfo struct {
	Path          string
	Size          int64
	ContentType   string
	LastModified  time.Time
	LastCommitSHA string
}

// Init creates the repository in dir (creating dir) or opens it when it already exists.
func Init(dir string) (*Repo, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("workspace: create %s: %w", dir, err)
	}
	r, err := git.PlainInit(dir, false)
	if errors.Is(err, git.ErrRepositoryAlreadyExists) {
		return Open(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	return &Repo{dir: dir, repo: r, pending: map[string]struct{}{}}, nil
}

// Open opens an existing workspace repository.
func Open(dir string) (*Repo, error) {
	r, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		// A job that has not started yet has no workspace: that is "no files", not a failure.
		return nil, fmt.Errorf("workspace: open %s: %w", dir, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	repo := &Repo{dir: dir, repo: r, pending: map[string]struct{}{}}
	if err := repo.repairIndex(); err != nil {
		return nil, err
	}
	return repo, nil
}

// repairIndex rebuilds a staging index that does not read. A process killed while git wrote it
// (kill -9 mid-checkpoint) leaves it truncated, and every later commit would fail; the index is only
// a cache of HEAD's tree, so it is dropped and rebuilt from HEAD, working files untouched.
func (r *Repo) repairIndex() error {
	if _, err := r.repo.Storer.Index(); err == nil {
		return nil
	}
	if err := os.Remove(filepath.Join(r.dir, ".git", "index")); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("workspace: drop unreadable index: %w", err)
	}
	head, ok, err := r.head()
	if err != nil || !ok {
		return err // no commit yet: no index is the right state
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		return fmt.Errorf("workspace: worktree: %w", err)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: head.Hash, Mode: git.MixedReset}); err != nil {
		return fmt.Errorf("workspace: rebuild index from HEAD: %w", err)
	}
	return nil
}

// Dir is the directory of the working tree.
func (r *Repo) Dir() string { return r.dir }

// CleanPath checks a slash-separated workspace path and returns it unchanged when it is safe:
// relative, already clean (no ".", ".." or empty segments), no backslashes or NUL/control bytes,
// and not inside .git. Callers outside this package use it to validate paths from requests.
func CleanPath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s", ErrBadPath, p, why)
	}
	switch {
	case p == "":
		return bad("empty")
	case len(p) > 4096:
		return bad("too long")
	case strings.HasPrefix(p, "/"):
		return bad("absolute")
	case strings.ContainsRune(p, '\\'):
		return bad("backslash")
	case strings.IndexFunc(p, func(c rune) bool { return c < 0x20 || c == 0x7f }) >= 0:
		return bad("control character")
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return bad("not a clean relative path")
		case strings.EqualFold(seg, ".git"):
			return bad("git metadata")
		}
	}
	// Windows drive letters ("C:x") are not absolute on Unix but would be on Windows.
	if len(p) >= 2 && p[1] == ':' {
		return bad("drive letter")
	}
	return p, nil
}

// WriteFile writes data at the slash-separated path, creating parent folders.
func (r *Repo) WriteFile(p string, data []byte) error {
	p, err := CleanPath(p)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Refuse to follow a symlink or a file where a folder should be: the tree is ours alone, so
	// anything else means it was tampered with, and following it could write outside the workspace.
	segs := strings.Split(p, "/")
	cur := r.dir
	for _, seg := range segs[:len(segs)-1] {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o750); err != nil {
				return fmt.Errorf("workspace: mkdir %s: %w", cur, err)
			}
		case err != nil:
			return fmt.Errorf("workspace: stat %s: %w", cur, err)
		case !fi.IsDir():
			return fmt.Errorf("%w: %q: %s is not a folder", ErrBadPath, p, seg)
		}
	}
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	if fi, err := os.Lstat(full); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %q: not a regular file", ErrBadPath, p)
	}
	if err := r.replaceFile(full, data); err != nil {
		return fmt.Errorf("workspace: write %s: %w", p, err)
	}
	r.pending[p] = struct{}{}
	return nil
}

// replaceFile writes data to a temporary file under .git (never part of a commit, and on the same
// file system) and renames it over full, so a process killed mid-write leaves the old contents or
// the new, never a truncated file that the resumed run would then fail to read.
func (r *Repo) replaceFile(full string, data []byte) error {
	f, err := os.CreateTemp(filepath.Join(r.dir, ".git"), "write-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, 0o640)); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, full); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Commit stages every change in the working tree and commits it, recording checkpointType
// (progress, final or continuation) in the message trailer. A checkpoint with no changes still
// makes a commit: every checkpoint is a revision.
func (r *Repo) Commit(message, checkpointType string) (string, error) {
	switch checkpointType {
	case CheckpointProgress, CheckpointFinal, CheckpointContinuation:
	default:
		return "", fmt.Errorf("workspace: unknown checkpoint type %q", checkpointType)
	}
	message = strings.TrimSpace(message)
	if message == "" {
		message = "Checkpoint"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	wt, err := r.repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("workspace: worktree: %w", err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", fmt.Errorf("workspace: stage: %w", err)
	}
	for _, p := range slices.Sorted(maps.Keys(r.pending)) {
		if err := wt.AddWithOptions(&git.AddOptions{Path: p, SkipStatus: true}); err != nil {
			return "", fmt.Errorf("workspace: stage %s: %w", p, err)
		}
	}
	sig := author
	sig.When = time.Now()
	h, err := wt.Commit(message+"\n\n"+TrailerKey+": "+checkpointType+"\n", &git.CommitOptions{
		Author:            &sig,
		AllowEmptyCommits: true,
	})
	if err != nil {
		return "", fmt.Errorf("workspace: commit: %w", err)
	}
	clear(r.pending)
	return h.String(), nil
}

// parseMessage splits a commit message into its body and checkpoint type.
func parseMessage(msg string) (body, checkpointType string) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	// Trailers are the last paragraph; scan it from the end.
	i := len(lines) - 1
	for ; i >= 0 && lines[i] != ""; i-- {
		k, v, ok := strings.Cut(lines[i], ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), TrailerKey) {
			checkpointType = strings.TrimSpace(v)
		}
	}
	if checkpointType == "" {
		return strings.TrimSpace(msg), ""
	}
	return strings.TrimSpace(strings.Join(lines[:max(i, 0)], "\n")), checkpointType
}

func toRevision(c *object.Commit) Revision {
	body, typ := parseMessage(c.Message)
	return Revision{SHA: c.Hash.String(), CheckpointType: typ, Message: body, Time: c.Committer.When}
}

// head returns the HEAD commit, or ok=false when the repository has no commits yet.
func (r *Repo) head() (*object.Commit, bool, error) {
	ref, err := r.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("workspace: head: %w", err)
	}
	c, err := r.repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, false, fmt.Errorf("workspace: head commit: %w", err)
	}
	return c, true, nil
}

// Revisions lists the commits reachable from HEAD, oldest first.
func (r *Repo) Revisions() ([]Revision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok, err := r.head()
	if err != nil || !ok {
		return []Revision{}, err
	}
	// Workspaces are linear (one writer, no merges): follow first parents.
	var out []Revision
	for {
		out = append(out, toRevision(c))
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return nil, fmt.Errorf("workspace: parent of %s: %w", out[len(out)-1].SHA, err)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// Resolve turns a full commit id or a unique prefix of at least MinPrefix hex digits into a full
// commit id. "" and "HEAD" resolve to the latest commit.
func (r *Repo) Resolve(rev string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (r *Repo) resolve(rev string) (*object.Commit, error) {
	if rev == "" || rev == "HEAD" {
		c, ok, err := r.head()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %q: no commits yet", ErrUnknownRevision, rev)
		}
		return c, nil
	}
	rev = strings.ToLower(rev)
	if len(rev) < MinPrefix || len(rev) > 40 || !isHex(rev) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRevision, rev)
	}
	if len(rev) == 40 {
		c, err := r.repo.CommitObject(plumbing.NewHash(rev))
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: %q", ErrUnknownRevision, rev)
		}
		if err != nil {
			return nil, fmt.Errorf("workspace: commit %s: %w", rev, err)
		}
		return c, nil
	}
	iter, err := r.repo.CommitObjects()
	if err != nil {
		return nil, fmt.Errorf("workspace: list commits: %w", err)
	}
	defer iter.Close()
	var match *object.Commit
	var ambiguous bool
	err = iter.ForEach(func(c *object.Commit) error {
		if !strings.HasPrefix(c.Hash.String(), rev) {
			return nil
		}
		if match != nil && match.Hash != c.Hash {
			ambiguous = true
			return storer.ErrStop
		}
		match = c
		return nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("workspace: scan commits: %w", err)
	case ambiguous:
		return nil, fmt.Errorf("%w: %q", ErrAmbiguousRevision, rev)
	case match == nil:
		return nil, fmt.Errorf("%w: %q", ErrUnknownRevision, rev)
	}
	return match, nil
}

// ReadFile returns the content of path at rev ("" = HEAD).
func (r *Repo) ReadFile(rev, p string) ([]byte, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if errors.Is(err, ErrUnknownRevision) && rev == "" {
		return nil, fmt.Errorf("%w: %s (no commits yet)", ErrNotFound, p)
	}
	if err != nil {
		return nil, err
	}
	f, err := c.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, fmt.Errorf("%w: %s at %s", ErrNotFound, p, c.Hash)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: %s at %s: %w", p, c.Hash, err)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", p, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("workspace: read %s: %w", p, err)
	}
	return data, nil
}

// ListFiles lists the files of rev ("" = HEAD; an empty repository has none), sorted by path,
// each with the time and id of the last commit that changed it. The history is walked once,
// newest first, diffing each commit against its parent until every file is accounted for.
func (r *Repo) ListFiles(rev string) ([]FileInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if errors.Is(err, ErrUnknownRevision) && rev == "" {
		return []FileInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("workspace: tree of %s: %w", c.Hash, err)
	}
	var files []FileInfo
	index := map[string]int{}
	err = tree.Files().ForEach(func(f *object.File) error {
		ct, err := contentType(f)
		if err != nil {
			return err
		}
		index[f.Name] = len(files)
		files = append(files, FileInfo{Path: f.Name, Size: f.Size, ContentType: ct})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace: list %s: %w", c.Hash, err)
	}
	if err := r.fillLastCommits(c, tree, files, index); err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

func (r *Repo) fillLastCommits(c *object.Commit, tree *object.Tree, files []FileInfo, index map[string]int) error {
	left := len(files)
	for left > 0 {
		var parentTree *object.Tree
		var parent *object.Commit
		if c.NumParents() > 0 {
			var err error
			if parent, err = c.Parent(0); err != nil {
				return fmt.Errorf("workspace: parent of %s: %w", c.Hash, err)
			}
			if parentTree, err = parent.Tree(); err != nil {
				return fmt.Errorf("workspace: tree of %s: %w", parent.Hash, err)
			}
		}
		// A nil "from" tree diffs against nothing: the root commit introduced every file it holds.
		changes, err := object.DiffTree(parentTree, tree)
		if err != nil {
			return fmt.Errorf("workspace: diff %s: %w", c.Hash, err)
		}
		for _, ch := range changes {
			i, ok := index[ch.To.Name]
			if !ok || files[i].LastCommitSHA != "" {
				continue
			}
			files[i].LastCommitSHA = c.Hash.String()
			files[i].LastModified = c.Committer.When
			left--
		}
		if parent == nil {
			break
		}
		c, tree = parent, parentTree
	}
	return nil
}

// extraTypes covers extensions that matter for research workspaces and that mime's built-in table
// lacks; the system table (/etc/mime.types) differs between machines, so these come first.
var extraTypes = map[string]string{
	".md":       "text/markdown; charset=utf-8",
	".markdown": "text/markdown; charset=utf-8",
	".txt":      "text/plain; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
	".tsv":      "text/tab-separated-values; charset=utf-8",
	".json":     "application/json",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".html":     "text/html; charset=utf-8",
	".htm":      "text/html; charset=utf-8",
	".css":      "text/css; charset=utf-8",
	".js":       "text/javascript; charset=utf-8",
	".pdf":      "application/pdf",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".svg":      "image/svg+xml",
	".webp":     "image/webp",
	".docx":     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx":     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".zip":      "application/zip",
	".xml":      "application/xml",
}

// ContentType is a file's MIME type: by extension, else by sniffing head (its first 512 bytes).
func ContentType(name string, head []byte) string {
	if t, ok := typeByName(name); ok {
		return t
	}
	return http.DetectContentType(head)
}

// typeByName looks the extension up in a fixed table first, so every machine agrees, then in Go's.
func typeByName(name string) (string, bool) {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := extraTypes[ext]; ok {
		return t, true
	}
	if t := mime.TypeByExtension(ext); ext != "" && t != "" {
		return t, true
	}
	return "", false
}

// contentType is ContentType for a file in a commit, reading its bytes only when the name is not enough.
func contentType(f *object.File) (string, error) {
	if t, ok := typeByName(f.Name); ok {
		return t, nil
	}
	rd, err := f.Reader()
	if err != nil {
		return "", fmt.Errorf("workspace: open %s: %w", f.Name, err)
	}
	defer rd.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(rd, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("workspace: read %s: %w", f.Name, err)
	}
	return http.DetectContentType(head[:n]), nil
}
