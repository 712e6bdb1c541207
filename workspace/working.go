package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadWorking reads a file of the working tree (not a commit): what a run wrote so far. Only
// regular files inside the workspace are read.
func (r *Repo) ReadWorking(p string) ([]byte, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(r.Dir(), filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return os.ReadFile(full)
}
