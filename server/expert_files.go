package server

import (
	"bytes"
	"context"
	"mime"

	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/gen"
)

// Expert context files: thin handlers over expert.Service.

// opUploadExpertContextFile streams its multipart body under the context file size limit
// (limitAttachmentBodies) instead of the global body limit.
const opUploadExpertContextFile = "uploadExpertContextFile"

// ListExpertContextFiles lists the files of an expert the caller can read.
func (s *Server) ListExpertContextFiles(ctx context.Context, req gen.ListExpertContextFilesRequestObject) (gen.ListExpertContextFilesResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	id, files, err := s.experts.ListFiles(ctx, c, req.ExpertId)
	if err != nil {
		return nil, err
	}
	return gen.ListExpertContextFiles200JSONResponse{ExpertId: id, Count: len(files), Files: mapItems(files, contextFileOf)}, nil
}

// UploadExpertContextFile attaches the multipart `file`, replacing a file of the same name.
func (s *Server) UploadExpertContextFile(ctx context.Context, req gen.UploadExpertContextFileRequestObject) (gen.UploadExpertContextFileResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	f, err := s.experts.Upload(ctx, c, req.ExpertId, req.Body)
	if err != nil {
		return nil, err
	}
	return gen.UploadExpertContextFile201JSONResponse(storedFileOf(f)), nil
}

// ImportExpertContextFile attaches a file fetched from a public URL or copied from an attachment.
func (s *Server) ImportExpertContextFile(ctx context.Context, req gen.ImportExpertContextFileRequestObject) (gen.ImportExpertContextFileResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := expert.ImportInput{SourceURL: valueOf(req.Body.SourceUrl), Filename: valueOf(req.Body.Filename)}
	if id, err := req.Body.AttachmentId.Get(); err == nil {
		v := id.String()
		in.AttachmentID = &v
	}
	f, err := s.experts.Import(ctx, c, req.ExpertId, in)
	if err != nil {
		return nil, err
	}
	return gen.ImportExpertContextFile201JSONResponse(storedFileOf(f)), nil
}

// GetExpertContextFile downloads a context file's bytes.
func (s *Server) GetExpertContextFile(ctx context.Context, req gen.GetExpertContextFileRequestObject) (gen.GetExpertContextFileResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.experts.File(ctx, c, req.ExpertId, req.Name)
	if err != nil {
		return nil, err
	}
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": d.Name})
	return gen.GetExpertContextFile200AsteriskResponse{
		Body: bytes.NewReader(d.Data), ContentType: d.ContentType, ContentLength: int64(len(d.Data)),
		Headers: gen.GetExpertContextFile200ResponseHeaders{ContentDisposition: &disp},
	}, nil
}

// DeleteExpertContextFile detaches a context file.
func (s *Server) DeleteExpertContextFile(ctx context.Context, req gen.DeleteExpertContextFileRequestObject) (gen.DeleteExpertContextFileResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.experts.DeleteFile(ctx, c, req.ExpertId, req.Name)
	if err != nil {
		return nil, err
	}
	return gen.DeleteExpertContextFile200JSONResponse{
		Name: d.Name, RemovedFromMirror: d.RemovedFromMirror, RemovedFromRepository: d.RemovedFromRepository, Success: true,
	}, nil
}
