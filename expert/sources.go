package expert

import (
	"context"
	"fmt"

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
