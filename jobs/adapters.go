package jobs

import (
	"context"
	"errors"

	"github.com/researchd/researchd/attachments"
)

// AttachmentsFrom adapts the attachment service to what jobs needs: the files of a job's
// attachment ids, and *UnusableAttachmentError naming the first id that cannot be used.
func AttachmentsFrom(s *attachments.Service) Attachments {
	if s == nil {
		return nil
	}
	return attachmentSource{s}
}

type attachmentSource struct{ s *attachments.Service }

func (a attachmentSource) FilesForJob(ctx context.Context, accountID string, ids []string) ([]InputFile, error) {
	files, err := a.s.FilesForJob(ctx, accountID, ids)
	var ue *attachments.UnusableError
	if errors.As(err, &ue) {
		return nil, &UnusableAttachmentError{Index: ue.Index, ID: ue.ID, Reason: ue.Reason}
	}
	if err != nil {
		return nil, err
	}
	out := make([]InputFile, len(files))
	for i, f := range files {
		out[i] = InputFile{Name: f.Name, Open: f.Open}
	}
	return out, nil
}
