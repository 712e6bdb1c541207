package sources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
)

// Limits on what a run reads in all.
const (
	maxSources    = 2000
	maxTotalBytes = 256 << 20
)

// Skipped is a source that could not be read as text.
type Skipped struct{ Path, Reason string }

// Folder is a folder of sources and the prefix its files are cited under.
type Folder struct{ Label, Dir string }

// Folders lists where a run looks, in a fixed order: the job's input files, the context
// folders, then the corpus. Labels never contain server paths.
func Folders(in engine.Input, corpus string) []Folder {
	dirs := []Folder{{Label: engine.InputDir, Dir: filepath.Join(in.Workspace.Dir(), engine.InputDir)}}
	for i, d := range in.ContextDirs {
		label := "context"
		if i > 0 {
			label = fmt.Sprintf("context%d", i+1)
		}
		dirs = append(dirs, Folder{Label: label, Dir: d})
	}
	if corpus != "" {
		dirs = append(dirs, Folder{Label: "corpus", Dir: corpus})
	}
	return dirs
}

// Load reads every regular file under dirs (lexical order, hidden entries and symlinks
// skipped) and extracts its text.
func Load(ctx context.Context, dirs []Folder) ([]extract.Document, []Skipped, error) {
	var docs []extract.Document
	var skipped []Skipped
	var total int64
	for _, sd := range dirs {
		err := filepath.WalkDir(sd.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == sd.Dir {
					return fs.SkipDir // a job without attachments has no input_files/
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel, _ := filepath.Rel(sd.Dir, p)
			cite := path.Join(sd.Label, filepath.ToSlash(rel))
			if p != sd.Dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				skipped = append(skipped, Skipped{cite, "not a regular file"})
				return nil
			}
			if len(docs)+len(skipped) >= maxSources {
				skipped = append(skipped, Skipped{cite, fmt.Sprintf("over the limit of %d files", maxSources)})
				return fs.SkipAll
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() > extract.MaxFileBytes || total+info.Size() > maxTotalBytes {
				skipped = append(skipped, Skipped{cite, fmt.Sprintf("too large (%d bytes)", info.Size())})
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			total += int64(len(data))
			doc, reason := extract.File(cite, data)
			if reason != "" {
				skipped = append(skipped, Skipped{cite, reason})
				return nil
			}
			docs = append(docs, doc)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("engine: read %s: %w", sd.Label, err)
		}
	}
	return docs, skipped, nil
}
