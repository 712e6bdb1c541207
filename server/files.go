package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/revision"
	"github.com/researchd/researchd/workspace"
)

// inputDir holds copies of the owner's attachments: listed and served to the owner and
// administrators only.
const inputDir = "input_files/"

// ListResearchFiles lists the files of the latest revision or of ?revision=, from the published
// manifest (database), so every process answers the same.
func (s *Server) ListResearchFiles(ctx context.Context, req gen.ListResearchFilesRequestObject) (gen.ListResearchFilesResponseObject, error) {
	j, privileged, err := s.readableJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	out := gen.ListResearchFiles200JSONResponse{JobId: uuid.MustParse(j.ID), RevisionSha: nullable.NewNullNullable[string](), Files: []gen.WorkspaceFile{}}
	rev, err := s.fileRevision(ctx, j.ID, req.Params.Revision)
	if errors.Is(err, revision.ErrUnknown) {
		return out, nil // no checkpoint yet
	}
	if err != nil {
		return nil, err
	}
	files, err := s.research.Revisions().Files(ctx, rev)
	if errors.Is(err, revision.ErrUnavailable) {
		if req.Params.Revision != nil {
			return nil, errNotFound("revision")
		}
		return out, nil // an old revision whose files only another process's workspace holds
	}
	if err != nil {
		return nil, err
	}
	out.RevisionSha = nullable.NewNullableWithValue(rev.SHA)
	for _, f := range files {
		if !privileged && strings.HasPrefix(f.Path, inputDir) {
			continue
		}
		out.Files = append(out.Files, workspaceFileOf(f))
	}
	return out, nil
}

// fileRevision resolves ?revision= (problems for unknown and ambiguous), or the latest revision
// (revision.ErrUnknown when the job has none yet).
func (s *Server) fileRevision(ctx context.Context, jobID string, at *string) (revision.Revision, error) {
	if at != nil {
		return s.resolveRevision(ctx, jobID, *at)
	}
	return s.research.Revisions().Resolve(ctx, jobID, "")
}

// GetResearchFile serves one file's bytes from the blob store. file_path arrives with literal
// slashes through the wildcard route registered in New.
func (s *Server) GetResearchFile(ctx context.Context, req gen.GetResearchFileRequestObject) (gen.GetResearchFileResponseObject, error) {
	p, err := workspace.CleanPath(req.FilePath)
	if err != nil {
		return nil, errValidation("file_path must be a relative path without '.', '..' or empty segments",
			gen.FieldError{Field: "path.file_path", Message: err.Error()})
	}
	j, privileged, err := s.readableJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	if !privileged && strings.HasPrefix(p, inputDir) {
		return nil, errNotFound("file")
	}
	rev, err := s.fileRevision(ctx, j.ID, req.Params.Revision)
	if errors.Is(err, revision.ErrUnknown) {
		return nil, errNotFound("file")
	}
	if err != nil {
		return nil, err
	}
	data, f, err := s.research.Revisions().ReadFile(ctx, rev, p)
	switch {
	case errors.Is(err, revision.ErrNoFile):
		return nil, errNotFound("file")
	case errors.Is(err, revision.ErrUnavailable):
		if req.Params.Revision != nil {
			return nil, errNotFound("revision")
		}
		return nil, errNotFound("file")
	case err != nil:
		return nil, err
	}
	// The listing's type, so both always agree.
	return fileResponse{data: data, contentType: f.ContentType}, nil
}

// fileResponse writes raw file bytes with headers that keep active content inert on this origin.
type fileResponse struct {
	data        []byte
	contentType string
}

func (r fileResponse) VisitGetResearchFileResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", r.contentType)
	h.Set("Content-Length", strconv.Itoa(len(r.data)))
	h.Set("X-Content-Type-Options", "nosniff")
	ct := strings.ToLower(r.contentType)
	if strings.Contains(ct, "html") || strings.Contains(ct, "svg") || strings.Contains(ct, "xml") || strings.Contains(ct, "javascript") {
		h.Set("Content-Security-Policy", "sandbox")
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r.data)
	return err
}
