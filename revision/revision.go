// Package revision publishes each checkpoint of a research job so that any process can serve it: the
// manifest of the revision (path, size, MIME type, git blob id, the revision that last changed each
// file) goes to the database, and the file contents go to the blob store (RESEARCH_BLOB_URL) under
// their SHA-256, so identical contents are stored once. Reads of reports at a revision, of file
// lists and of file bytes come from there; the runner's git repository is only its working copy.
//
// Revisions recorded before manifests existed are backfilled lazily from the job's local git
// repository when a process that holds it reads them (or when a continuation checkpoints).
package revision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"gocloud.dev/blob"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/workspace"
)

var (
	// ErrUnknown: no revision of the job matches (or the job has none yet). 404.
	ErrUnknown = errors.New("revision: unknown revision")
	// ErrAmbiguous: an abbreviated revision matches more than one. 422.
	ErrAmbiguous = errors.New("revision: ambiguous revision")
	// ErrNoFile: the revision has no file at that path. 404.
	ErrNoFile = errors.New("revision: no such file")
	// ErrUnavailable: the revision was recorded before manifests existed and this process does not
	// hold the job's git repository to backfill it from.
	ErrUnavailable = errors.New("revision: files not published")
)

// MinPrefix is the shortest abbreviated commit id Resolve accepts.
const MinPrefix = workspace.MinPrefix

// Workspaces opens a job's local git repository (workspace.ErrNotFound when this process has none).
type Workspaces func(jobID string) (*workspace.Repo, error)

// Service publishes and reads revisions.
type Service struct {
	st     *store.Store
	bucket *blob.Bucket
	local  Workspaces
	log    *slog.Logger
}

// New builds the service over the database, the blob store and this process's local workspaces
// (used only to backfill revisions recorded before manifests existed).
func New(st *store.Store, bucket *blob.Bucket, local Workspaces, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{st: st, bucket: bucket, local: local, log: log}
}

// blobKey is where a content lives in the blob store: by SHA-256, fanned out on its first byte.
func blobKey(sum string) string { return "research-files/sha256/" + sum[:2] + "/" + sum }

// Resolve turns a full commit id, a unique prefix of at least MinPrefix hex digits, or ""/"HEAD"
// (the latest) into one of the job's recorded revisions.
func (s *Service) Resolve(ctx context.Context, jobID, rev string) (store.ResearchRevision, error) {
	if rev == "" || rev == "HEAD" {
		r, err := s.st.LatestRevision(ctx, jobID)
		if errors.Is(err, store.ErrNotFound) {
			return r, fmt.Errorf("%w: %q: none yet", ErrUnknown, rev)
		}
		return r, err
	}
	rev = strings.ToLower(rev)
	if len(rev) < MinPrefix || len(rev) > 40 || strings.Trim(rev, "0123456789abcdef") != "" {
		return store.ResearchRevision{}, fmt.Errorf("%w: %q", ErrUnknown, rev)
	}
	revs, err := s.st.RevisionsWithPrefix(ctx, jobID, rev, 2)
	switch {
	case err != nil:
		return store.ResearchRevision{}, err
	case len(revs) == 0:
		return store.ResearchRevision{}, fmt.Errorf("%w: %q", ErrUnknown, rev)
	case len(revs) > 1:
		return store.ResearchRevision{}, fmt.Errorf("%w: %q", ErrAmbiguous, rev)
	}
	return revs[0], nil
}

// Files lists the files of a revision in path order.
func (s *Service) Files(ctx context.Context, rev store.ResearchRevision) ([]store.ResearchRevisionFile, error) {
	if !rev.FilesStored {
		if err := s.backfillLocal(ctx, rev.JobID); err != nil {
			return nil, err
		}
	}
	return s.st.RevisionFiles(ctx, rev.JobID, rev.SHA)
}

// ReadFile returns a file of a revision with its manifest entry.
func (s *Service) ReadFile(ctx context.Context, rev store.ResearchRevision, path string) ([]byte, store.ResearchRevisionFile, error) {
	if !rev.FilesStored {
		if err := s.backfillLocal(ctx, rev.JobID); err != nil {
			return nil, store.ResearchRevisionFile{}, err
		}
	}
	f, err := s.st.RevisionFile(ctx, rev.JobID, rev.SHA, path)
	if errors.Is(err, store.ErrNotFound) {
		return nil, f, fmt.Errorf("%w: %s at %s", ErrNoFile, path, rev.SHA)
	}
	if err != nil {
		return nil, f, err
	}
	data, err := s.bucket.ReadAll(ctx, blobKey(f.SHA256))
	if err != nil {
		return nil, f, fmt.Errorf("read %s at %s from the blob store: %w", path, rev.SHA, err)
	}
	return data, f, nil
}

// Publish uploads the contents of commit sha of the job's working copy that the blob store lacks,
// and returns the revision's manifest for the caller to record with the revision, in its
// transaction. Earlier revisions of the job still without a manifest are backfilled first, so each
// file's last change is known.
func (s *Service) Publish(ctx context.Context, repo *workspace.Repo, jobID, sha string) ([]store.ResearchRevisionFile, error) {
	prev, err := s.backfill(ctx, repo, jobID)
	if err != nil {
		return nil, err
	}
	return s.manifest(ctx, repo, jobID, sha, prev)
}

// backfillLocal backfills the job's revisions from this process's working copy; ErrUnavailable
// when it has none.
func (s *Service) backfillLocal(ctx context.Context, jobID string) error {
	if s.local == nil {
		return fmt.Errorf("%w: job %s", ErrUnavailable, jobID)
	}
	repo, err := s.local(jobID)
	if errors.Is(err, workspace.ErrNotFound) {
		s.log.WarnContext(ctx, "a revision recorded before manifests existed cannot be served by this process: its workspace is elsewhere", "job_id", jobID)
		return fmt.Errorf("%w: job %s", ErrUnavailable, jobID)
	}
	if err != nil {
		return err
	}
	_, err = s.backfill(ctx, repo, jobID)
	return err
}

// backfill publishes, oldest first, the job's recorded revisions that have no manifest yet, and
// returns the manifest of its newest revision (nil when it has none).
func (s *Service) backfill(ctx context.Context, repo *workspace.Repo, jobID string) ([]store.ResearchRevisionFile, error) {
	revs, err := s.st.RevisionsForJob(ctx, jobID)
	if err != nil {
		return nil, err
	}
	var prev []store.ResearchRevisionFile
	loaded := false
	for i, r := range revs {
		if r.FilesStored {
			loaded = false
			continue
		}
		if i > 0 && !loaded {
			if prev, err = s.st.RevisionFiles(ctx, jobID, revs[i-1].SHA); err != nil {
				return nil, err
			}
		}
		files, err := s.manifest(ctx, repo, jobID, r.SHA, prev)
		if errors.Is(err, workspace.ErrUnknownRevision) {
			// Recorded, but not in this repository (set aside after a crash): nothing to publish.
			s.log.WarnContext(ctx, "a recorded revision is missing from the workspace; it keeps no files", "job_id", jobID, "sha", r.SHA)
			files = nil
		} else if err != nil {
			return nil, err
		}
		if err := s.st.StoreRevisionFiles(ctx, jobID, r.SHA, files); err != nil {
			return nil, err
		}
		s.log.InfoContext(ctx, "backfilled a revision's files from the local workspace", "job_id", jobID, "sha", r.SHA, "files", len(files))
		prev, loaded = files, true
	}
	if len(revs) > 0 && !loaded {
		return s.st.RevisionFiles(ctx, jobID, revs[len(revs)-1].SHA)
	}
	return prev, nil
}

// manifest builds the manifest of commit sha, uploading contents the blob store lacks. A file whose
// path and blob are as in prev (the previous revision's manifest) keeps its last change; any other
// was last changed by this commit.
func (s *Service) manifest(ctx context.Context, repo *workspace.Repo, jobID, sha string, prev []store.ResearchRevisionFile) ([]store.ResearchRevisionFile, error) {
	when, entries, err := repo.Manifest(sha)
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]store.ResearchRevisionFile, len(prev))
	sums := make(map[string]string, len(prev)) // git blob id → SHA-256, for contents already uploaded
	for _, f := range prev {
		byPath[f.Path] = f
		sums[f.BlobID] = f.SHA256
	}
	out := make([]store.ResearchRevisionFile, 0, len(entries))
	for i, e := range entries {
		f := store.ResearchRevisionFile{JobID: jobID, CommitSHA: sha, Seq: i, Path: e.Path, Size: e.Size, ContentType: e.ContentType,
			BlobID: e.BlobID, LastCommitSHA: sha, LastModified: when.UTC()}
		if p, ok := byPath[e.Path]; ok && p.BlobID == e.BlobID {
			f.LastCommitSHA, f.LastModified = p.LastCommitSHA, p.LastModified
		}
		sum, ok := sums[e.BlobID]
		if !ok {
			if sum, err = s.upload(ctx, repo, e.BlobID); err != nil {
				return nil, err
			}
			sums[e.BlobID] = sum
		}
		f.SHA256 = sum
		out = append(out, f)
	}
	return out, nil
}

// upload copies one git blob to the blob store unless its content is there already.
func (s *Service) upload(ctx context.Context, repo *workspace.Repo, blobID string) (string, error) {
	data, err := repo.ReadBlob(blobID)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	key := blobKey(sum)
	switch ok, err := s.bucket.Exists(ctx, key); {
	case err != nil:
		return "", fmt.Errorf("look up %s in the blob store: %w", key, err)
	case ok:
		return sum, nil
	}
	if err := s.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return "", fmt.Errorf("write %s to the blob store: %w", key, err)
	}
	return sum, nil
}

// Restore brings a working copy to the job's latest published revision when it does not hold that
// revision: a run on another process made it, or this process's data directory is new. Files of
// the latest revision are written, files committed locally but absent from it are removed; the next
// checkpoint commits the result. restored is false when there was nothing to do.
func (s *Service) Restore(ctx context.Context, repo *workspace.Repo, jobID string) (restored bool, err error) {
	latest, err := s.st.LatestRevision(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := repo.Resolve(latest.SHA); err == nil {
		return false, nil
	} else if !errors.Is(err, workspace.ErrUnknownRevision) {
		return false, err
	}
	if !latest.FilesStored {
		// Recorded before manifests existed, on another process: as before, the run starts from
		// what this working copy holds.
		s.log.WarnContext(ctx, "the job's latest revision is neither in this workspace nor published; the run starts without its files", "job_id", jobID, "sha", latest.SHA)
		return false, nil
	}
	files, err := s.st.RevisionFiles(ctx, jobID, latest.SHA)
	if err != nil {
		return false, err
	}
	keep := make(map[string]bool, len(files))
	for _, f := range files {
		keep[f.Path] = true
	}
	_, local, err := repo.Manifest("")
	if err != nil && !errors.Is(err, workspace.ErrUnknownRevision) {
		return false, err
	}
	for _, e := range local {
		if !keep[e.Path] {
			if _, err := repo.RemoveFile(e.Path); err != nil {
				return false, err
			}
		}
	}
	for _, f := range files {
		data, err := s.bucket.ReadAll(ctx, blobKey(f.SHA256))
		if err != nil {
			return false, fmt.Errorf("restore %s of revision %s: %w", f.Path, latest.SHA, err)
		}
		if err := repo.WriteFile(f.Path, data); err != nil {
			return false, err
		}
	}
	s.log.InfoContext(ctx, "restored the working copy from the published revision", "job_id", jobID, "sha", latest.SHA, "files", len(files))
	return true, nil
}
