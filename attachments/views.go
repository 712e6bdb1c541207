package attachments

import (
	"context"

	"github.com/researchd/researchd/store"
)

// Attachment is an upload or import as its owner reads it: status, files and expiry.
type Attachment = store.Attachment

// StatusPending is a reserved direct upload whose bytes have not arrived yet.
const StatusPending = store.AttachmentPending

// List pages an account's live attachments (expired ones are not listed), newest first.
func (s *Service) List(ctx context.Context, accountID string, req store.PageRequest) (store.Page[Attachment], error) {
	return s.st.ListAttachments(ctx, accountID, s.now(), req)
}
