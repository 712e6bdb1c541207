package server

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/gen"
)

// Operations whose bodies are file uploads: the global body limit skips them and
// limitAttachmentBodies applies the attachment limits instead.
const (
	opCreateAttachment      = "createAttachment"
	opUploadAttachmentBytes = "uploadAttachmentBytes"
	opBeginAttachmentUpload = "beginAttachmentUpload"
)

// uploadRequest carries what the upload handlers need from the HTTP request beyond the strict
// request object.
type uploadRequest struct {
	token         string // X-Upload-Token
	contentLength int64  // -1 when unknown
	origin        string // scheme://host the client used, when no public URL is configured
}

type uploadRequestKey struct{}

func uploadRequestOf(ctx context.Context) uploadRequest {
	u, _ := ctx.Value(uploadRequestKey{}).(uploadRequest)
	return u
}

func (s *Server) operationID(c echo.Context) string {
	if op := s.routes.lookup(c); op != nil {
		return op.route.Operation.OperationID
	}
	return ""
}

// isUploadRoute is the global body limit's skipper.
func (s *Server) isUploadRoute(c echo.Context) bool { return isUploadOp(s.operationID(c)) }

// isUploadOp: the operation streams its body (multipart or raw bytes).
func isUploadOp(id string) bool {
	return id == opCreateAttachment || id == opUploadAttachmentBytes || id == opUploadExpertContextFile
}

// limitAttachmentBodies bounds upload bodies by the attachment limits (streamed by the handlers,
// never buffered) and hands the handlers the token header, declared length and request origin.
func (s *Server) limitAttachmentBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := s.operationID(c)
		if !isUploadOp(id) && id != opBeginAttachmentUpload {
			return next(c)
		}
		req := c.Request()
		mt, params, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
		switch id {
		case opCreateAttachment, opUploadExpertContextFile:
			// Refused before any of the body is read.
			if mt != echo.MIMEMultipartForm {
				return errUnsupportedMedia(req.Header.Get(echo.HeaderContentType), []string{echo.MIMEMultipartForm})
			}
			if params["boundary"] == "" {
				return errValidation("multipart/form-data needs a boundary parameter",
					gen.FieldError{Field: "header.Content-Type", Message: "missing boundary"})
			}
			limit := s.attachments.MaxRequestBytes()
			if id == opUploadExpertContextFile {
				limit = s.experts.MaxFileBytes() + 1<<20 // one file plus multipart framing
			}
			if req.ContentLength > limit {
				return newProblem(http.StatusRequestEntityTooLarge, "payload_too_large",
					fmt.Sprintf("the request body is over %d bytes", limit))
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		case opUploadAttachmentBytes:
			// Any Content-Type: the body is the file's raw bytes, and clients send the file's own type.
			// The length checks wait for the token check (401 before 413); the reader enforces the limit.
			req.Body = http.MaxBytesReader(c.Response(), req.Body, s.attachments.MaxBytes())
		}
		u := uploadRequest{
			token:         strings.TrimSpace(req.Header.Get(attachments.UploadTokenHeader)),
			contentLength: req.ContentLength,
			origin:        c.Scheme() + "://" + req.Host,
		}
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), uploadRequestKey{}, u)))
		return next(c)
	}
}

// CreateAttachment stores the multipart `files` as a ready attachment.
func (s *Server) CreateAttachment(ctx context.Context, req gen.CreateAttachmentRequestObject) (gen.CreateAttachmentResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.attachments.CreateFromMultipart(ctx, p.AccountID, req.Body)
	if err != nil {
		return nil, err
	}
	return gen.CreateAttachment201JSONResponse(attachmentOf(a)), nil
}

// ImportAttachment fetches a public URL into a ready attachment.
func (s *Server) ImportAttachment(ctx context.Context, req gen.ImportAttachmentRequestObject) (gen.ImportAttachmentResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.attachments.Import(ctx, p.AccountID, req.Body.SourceUrl, valueOf(req.Body.Filename))
	if err != nil {
		return nil, err
	}
	return gen.ImportAttachment201JSONResponse(attachmentOf(a)), nil
}

// BeginAttachmentUpload reserves a direct upload and returns its one-time token.
func (s *Server) BeginAttachmentUpload(ctx context.Context, req gen.BeginAttachmentUploadRequestObject) (gen.BeginAttachmentUploadResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	base := s.publicURL
	if base == "" {
		base = uploadRequestOf(ctx).origin
	}
	r, err := s.attachments.BeginUpload(ctx, p.AccountID, req.Body.Filename, int64(req.Body.SizeBytes), valueOf(req.Body.ContentType), base)
	if err != nil {
		return nil, err
	}
	return gen.BeginAttachmentUpload201JSONResponse(reservationOf(r)), nil
}

// UploadAttachmentBytes receives the bytes of a reservation; the upload token authenticates it.
func (s *Server) UploadAttachmentBytes(ctx context.Context, req gen.UploadAttachmentBytesRequestObject) (gen.UploadAttachmentBytesResponseObject, error) {
	u := uploadRequestOf(ctx)
	a, err := s.attachments.Upload(ctx, req.AttachmentId.String(), u.token, req.Body, u.contentLength)
	if err != nil {
		return nil, err
	}
	return gen.UploadAttachmentBytes200JSONResponse(attachmentOf(a)), nil
}

// ListAttachments lists the caller's own attachments, newest first.
func (s *Server) ListAttachments(ctx context.Context, req gen.ListAttachmentsRequestObject) (gen.ListAttachmentsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.attachments.List(ctx, p.AccountID, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListAttachments200JSONResponse{Items: mapItems(page.Items, attachmentOf), NextCursor: next, HasMore: more}, nil
}

// GetAttachment returns an attachment's metadata to its owner.
func (s *Server) GetAttachment(ctx context.Context, req gen.GetAttachmentRequestObject) (gen.GetAttachmentResponseObject, error) {
	a, err := s.ownedAttachment(ctx, req.AttachmentId.String())
	if err != nil {
		return nil, err
	}
	return gen.GetAttachment200JSONResponse(attachmentOf(a)), nil
}

// DeleteAttachment deletes an attachment and its bytes; jobs can no longer use it.
func (s *Server) DeleteAttachment(ctx context.Context, req gen.DeleteAttachmentRequestObject) (gen.DeleteAttachmentResponseObject, error) {
	a, err := s.ownedAttachment(ctx, req.AttachmentId.String())
	if err != nil {
		return nil, err
	}
	if err := s.attachments.Delete(ctx, a.ID); err != nil {
		return nil, err
	}
	return gen.DeleteAttachment204Response{}, nil
}

func (s *Server) ownedAttachment(ctx context.Context, id string) (attachments.Attachment, error) {
	a, err := s.attachments.Get(ctx, id)
	if err != nil {
		return attachments.Attachment{}, err
	}
	if _, err := authorizeOwner(ctx, a.AccountID, false, "attachment"); err != nil {
		return attachments.Attachment{}, err
	}
	return a, nil
}
