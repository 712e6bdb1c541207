package expert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// ContextSource is one context file as a run reads it: Name is its file name (runs see it as
// context/<Name>), Data its bytes, and Text its mirrored text — the file itself for text formats,
// the extracted text of a PDF or Office document, empty for images and anything not mirrored.
type ContextSource struct {
	Name string
	Text string
	Data []byte
}

// ContextSources returns the context files of a custom expert by its UUID, by name, for a run.
// Access is the caller's business: resolve the expert first (Runner.Resolve). Built-in experts and
// unknown ids have none.
func (s *Service) ContextSources(ctx context.Context, expertID string) ([]ContextSource, error) {
	if _, err := uuid.Parse(expertID); err != nil {
		return nil, nil
	}
	rows, err := s.st.ExpertContextFilesWithContent(ctx, expertID)
	if err != nil {
		return nil, fmt.Errorf("context sources of expert %s: %w", expertID, err)
	}
	out := make([]ContextSource, 0, len(rows))
	for _, f := range rows {
		src := ContextSource{Name: f.Name, Data: f.Content}
		switch {
		case !f.TextMirrored:
		case f.MirrorText != nil:
			src.Text = *f.MirrorText
		default:
			src.Text = string(f.Content)
		}
		out = append(out, src)
	}
	return out, nil
}

// MaterializeContext writes the expert's context files into dir (created when missing) as
// <dir>/<name>, read-only, for an engine that reads a folder of sources (engine.Input.ContextDirs);
// it returns how many files it wrote. Names were made path-safe at admission; anything else is
// refused rather than written outside dir.
func (s *Service) MaterializeContext(ctx context.Context, expertID, dir string) (int, error) {
	srcs, err := s.ContextSources(ctx, expertID)
	if err != nil || len(srcs) == 0 {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return 0, fmt.Errorf("context folder: %w", err)
	}
	for _, src := range srcs {
		if src.Name != filepath.Base(src.Name) || src.Name == "." || src.Name == ".." || strings.ContainsAny(src.Name, `/\`) {
			return 0, fmt.Errorf("context file %q: not a plain file name", src.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, src.Name), src.Data, 0o440); err != nil {
			return 0, fmt.Errorf("write context file %s: %w", src.Name, err)
		}
	}
	return len(srcs), nil
}
