package attachments

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/google/uuid"
)

// File is one input file of a job: what it is called in input_files/ and how to read it.
type File struct {
	Name string // path-safe filename, what it is called in input_files/
	Size int64
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// FilesForJob resolves a job's attachment_ids for accountID into the files to copy into the job's
// input_files/, in the order given (each attachment's files in upload order; an id listed twice
// counts once). Names are made unique across attachments ("a.pdf", "a (2).pdf"). The first id that
// is unknown, another account's, deleted or still pending_upload fails the whole list with an
// UnusableError (wrapping ErrUnusable) that names its index.
func (s *Service) FilesForJob(ctx context.Context, accountID string, ids []string) ([]File, error) {
	valid := make([]string, 0, len(ids))
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil || u.String() != strings.ToLower(id) {
			return nil, UnusableError{Index: i, ID: id, Reason: "not an attachment id"}
		}
		valid = append(valid, u.String())
	}
	rows, err := s.st.AttachmentsByIDs(ctx, valid)
	if err != nil {
		return nil, fmt.Errorf("files for job: %w", err)
	}
	now := s.now()
	var files []File
	used := map[string]bool{}
	seen := map[string]bool{}
	for i, id := range valid {
		a, ok := rows[id]
		switch {
		case !ok || a.AccountID != accountID || a.Expired(now):
			return nil, UnusableError{Index: i, ID: ids[i], Reason: "no such attachment (unknown or deleted)"}
		case !a.Usable():
			return nil, UnusableError{Index: i, ID: ids[i], Reason: "its upload has not finished (status " + a.Status + ")"}
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, f := range a.Files {
			key := f.BlobKey
			files = append(files, File{
				Name: uniqueName(f.Filename, used), Size: f.SizeBytes,
				Open: func(ctx context.Context) (io.ReadCloser, error) {
					r, err := s.bucket.NewReader(ctx, key, nil)
					if err != nil {
						return nil, fmt.Errorf("open attachment file %s: %w", key, err)
					}
					return r, nil
				},
			})
		}
	}
	return files, nil
}

// uniqueName returns name, or name with " (n)" before its extension, whichever is not used yet
// (case-insensitively, for case-insensitive file systems).
func uniqueName(name string, used map[string]bool) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	candidate := name
	for n := 2; used[strings.ToLower(candidate)]; n++ {
		candidate = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	used[strings.ToLower(candidate)] = true
	return candidate
}
