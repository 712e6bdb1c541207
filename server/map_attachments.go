package server

import (
	"github.com/google/uuid"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/gen"
)

// Attachments between the domain (attachments) and the API: metadata and upload reservations.

func attachmentOf(a attachments.Attachment) gen.Attachment {
	files := make([]gen.AttachedFile, 0, len(a.Files))
	for _, f := range a.Files {
		files = append(files, gen.AttachedFile{Filename: f.Filename, SizeBytes: int(f.SizeBytes), ContentType: f.ContentType})
	}
	return gen.Attachment{
		AttachmentId: uuid.MustParse(a.ID), Status: gen.AttachmentStatus(a.Status), Files: files,
		CreatedAt: a.CreatedAt, ExpiresAt: nullableOf(a.ExpiresAt),
	}
}

func reservationOf(r attachments.Reservation) gen.AttachmentUploadBeginResponse {
	return gen.AttachmentUploadBeginResponse{
		AttachmentId:      uuid.MustParse(r.Attachment.ID),
		Status:            gen.AttachmentUploadBeginResponseStatus(attachments.StatusPending),
		UploadUrl:         r.UploadURL,
		UploadToken:       r.Token,
		UploadTokenHeader: attachments.UploadTokenHeader,
		MaxBytes:          int(r.MaxBytes),
		ExpiresAt:         *r.Attachment.ExpiresAt,
		Curl:              r.Curl,
	}
}
