package attachments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/store"
)

// FormField is the multipart part name that carries files.
const FormField = "files"

// CreateFromMultipart stores every `files` part of a multipart body as one ready attachment. Each
// part is streamed to blob storage and checked on the way; refused files are all reported together
// (*RefusedError, fields "files/<index>"), a file over the size limit refuses the request at once
// (ErrTooLarge), and a refused request keeps nothing.
func (s *Service) CreateFromMultipart(ctx context.Context, accountID string, mr *multipart.Reader) (store.Attachment, error) {
	id := uuid.NewString()
	now := s.now()
	a := store.Attachment{ID: id, AccountID: accountID, Status: store.AttachmentReady, CreatedAt: now, UpdatedAt: now}
	var refused []*FieldError
	seen := map[string]string{}
	kept := false
	defer func() {
		if !kept {
			for _, f := range a.Files {
				s.removeBlob(ctx, f.BlobKey)
			}
		}
	}()
	for index := 0; ; {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return store.Attachment{}, bodyError(FormField, err)
		}
		if part.FormName() != FormField {
			refused = append(refused, refuse(part.FormName(), ErrInvalid, "unknown form field %q; send each file as a %q part", part.FormName(), FormField))
			continue
		}
		field := fmt.Sprintf("%s/%d", FormField, index)
		index++
		if index > s.cfg.MaxFiles {
			return store.Attachment{}, &RefusedError{Errors: []*FieldError{refuse(FormField, ErrInvalid, "at most %d files per attachment", s.cfg.MaxFiles)}}
		}
		f, err := s.storePart(ctx, id, field, part, seen)
		var fe *FieldError
		switch {
		case errors.As(err, &fe):
			refused = append(refused, fe)
			continue
		case err != nil:
			return store.Attachment{}, err
		}
		f.Position = len(a.Files)
		f.CreatedAt = now
		a.Files = append(a.Files, f)
	}
	if len(refused) > 0 {
		return store.Attachment{}, &RefusedError{Errors: refused}
	}
	if len(a.Files) == 0 {
		return store.Attachment{}, &RefusedError{Errors: []*FieldError{refuse(FormField, ErrInvalid, "send at least one file as a %q part", FormField)}}
	}
	if err := s.st.CreateAttachment(ctx, &a); err != nil {
		return store.Attachment{}, err
	}
	kept = true
	return a, nil
}

// storePart admits one file part: its name and extension, then its bytes.
func (s *Service) storePart(ctx context.Context, attachmentID, field string, part *multipart.Part, seen map[string]string) (store.AttachmentFile, error) {
	raw := part.FileName()
	if raw == "" {
		return store.AttachmentFile{}, refuse(field, ErrInvalid, "part has no filename; send files, not plain form values")
	}
	name, err := safeName(field, raw)
	if err != nil {
		return store.AttachmentFile{}, err
	}
	if prev, dup := seen[name]; dup {
		return store.AttachmentFile{}, refuse(field, ErrInvalid, "%q is already %s; file names must be unique within an attachment", name, prev)
	}
	k, err := kindOf(field, name)
	if err != nil {
		return store.AttachmentFile{}, err
	}
	key := blobKey(attachmentID)
	size, err := s.ingest(ctx, field, name, k, key, part, s.cfg.MaxBytes)
	switch {
	case errors.Is(err, errEmpty):
		return store.AttachmentFile{}, refuse(field, ErrInvalid, "%q is empty", name)
	case errors.Is(err, errOverLimit):
		return store.AttachmentFile{}, fmt.Errorf("%s: %q is larger than %d bytes: %w", field, name, s.cfg.MaxBytes, ErrTooLarge)
	case err != nil:
		var fe *FieldError
		if errors.As(err, &fe) {
			return store.AttachmentFile{}, fe
		}
		return store.AttachmentFile{}, bodyError(field, err)
	}
	seen[name] = field
	return store.AttachmentFile{
		ID: uuid.NewString(), AttachmentID: attachmentID, Filename: name,
		ContentType: reportedType(part.Header.Get("Content-Type")), SizeBytes: size, BlobKey: key,
	}, nil
}

// bodyError classifies a failure to read the request body: over the request limit is ErrTooLarge, a
// malformed or cut-short body is a refusal, and anything else (a storage failure) passes through.
func bodyError(field string, err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("request body over %d bytes: %w", mbe.Limit, ErrTooLarge)
	}
	var se *SourceError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || isMultipartSyntax(err) {
		return &RefusedError{Errors: []*FieldError{refuse(field, ErrInvalid, "malformed multipart body: %v", err)}}
	}
	return err
}

// isMultipartSyntax recognises mime/multipart's parse errors, which have no exported type.
func isMultipartSyntax(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "multipart:") || strings.Contains(msg, "malformed MIME header")
}
