package workspace

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Entry is one file of a commit's tree, as the service publishes it: the path, the size, the MIME
// type (ContentType's rule) and the git blob id of the content.
type Entry struct {
	Path        string
	Size        int64
	ContentType string
	BlobID      string
}

// Manifest lists the files of the commit sha (a full id), sorted by path, with the commit's time.
// Unlike ListFiles it walks no history: what changed since an earlier commit is the caller's to
// work out by comparing blob ids.
func (r *Repo) Manifest(sha string) (time.Time, []Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(sha)
	if err != nil {
		return time.Time{}, nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("workspace: tree of %s: %w", c.Hash, err)
	}
	var out []Entry
	err = tree.Files().ForEach(func(f *object.File) error {
		ct, err := contentType(f)
		if err != nil {
			return err
		}
		out = append(out, Entry{Path: f.Name, Size: f.Size, ContentType: ct, BlobID: f.Hash.String()})
		return nil
	})
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("workspace: list %s: %w", c.Hash, err)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return c.Committer.When, out, nil
}

// ReadBlob returns the content of the blob with the given git id.
func (r *Repo) ReadBlob(id string) ([]byte, error) {
	if len(id) != 40 || !isHex(id) {
		return nil, fmt.Errorf("%w: blob %q", ErrNotFound, id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.repo.BlobObject(plumbing.NewHash(id))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: blob %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: blob %s: %w", id, err)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("workspace: open blob %s: %w", id, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("workspace: read blob %s: %w", id, err)
	}
	return data, nil
}
