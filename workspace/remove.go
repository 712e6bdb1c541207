package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveFile deletes the file at the slash-separated path from the working tree; the next Commit
// records the deletion. removed is false when there was no such file.
func (r *Repo) RemoveFile(p string) (removed bool, err error) {
	p, err = CleanPath(p)
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("workspace: stat %s: %w", p, err)
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%w: %q: not a regular file", ErrBadPath, p)
	}
	if err := os.Remove(full); err != nil {
		return false, fmt.Errorf("workspace: remove %s: %w", p, err)
	}
	r.pending[p] = struct{}{}
	return true, nil
}
