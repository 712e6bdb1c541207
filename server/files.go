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
	"github.com/researchd/researchd/workspace"
)

// inputDir holds copies of the owner's attachments: listed and served to the owner and
// administrators only.
const inputDir = "input_files/"

// ListResearchFiles lists the workspace files at the latest commit or at ?revision=.
func (s *Server) ListResearchFiles(ctx context.Context, req gen.ListResearchFilesRequestObject) (gen.ListResearchFilesResponseObject, error) {
	j, privileged, err := s.readableJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	out := gen.ListResearchFiles200JSONResponse{JobId: uuid.MustParse(j.ID), RevisionSha: nullable.NewNullNullable[string](), Files: []gen.WorkspaceFile{}}
	var repo *workspace.Repo
	sha := ""
	if req.Params.Revision != nil {
		if repo, sha, err = s.resolveRevision(j.ID, *req.Params.Revision); err != nil {
			return nil, err
		}
	} else {
		repo, err = s.research.Workspace(j.ID)
		if errors.Is(err, workspace.ErrNotFound) {
			return out, nil // queued for the first time: no workspace yet
		}
		if err != nil {
			return nil, err
		}
		sha, err = repo.Resolve("")
		if errors.Is(err, workspace.ErrUnknownRevision) {
			return out, nil // no commit yet
		}
		if err != nil {
			return nil, err
		}
	}
	files, err := repo.ListFiles(sha)
	if err != nil {
		return nil, err
	}
	out.RevisionSha = nullable.NewNullableWithValue(sha)
	for _, f := range files {
		if !privileged && strings.HasPrefix(f.Path, inputDir) {
			continue
		}
		out.Files = append(out.Files, gen.WorkspaceFile{
			Path: f.Path, SizeBytes: int(f.Size), ContentType: f.ContentType, LastModified: f.LastModified, LastCommitSha: f.LastCommitSHA,
		})
	}
	return out, nil
}

// GetResearchFile serves one file's bytes. file_path arrives with literal slashes through the
// wildcard route registered in New.
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
	var repo *workspace.Repo
	rev := ""
	if req.Params.Revision != nil {
		if repo, rev, err = s.resolveRevision(j.ID, *req.Params.Revision); err != nil {
			return nil, err
		}
	} else if repo, err = s.research.Workspace(j.ID); errors.Is(err, workspace.ErrNotFound) {
		return nil, errNotFound("file")
	} else if err != nil {
		return nil, err
	}
	data, err := repo.ReadFile(rev, p)
	if errors.Is(err, workspace.ErrNotFound) || errors.Is(err, workspace.ErrUnknownRevision) {
		return nil, errNotFound("file")
	}
	if err != nil {
		return nil, err
	}
	// The same rule as the listing's, so both always agree.
	return fileResponse{data: data, contentType: workspace.ContentType(p, data[:min(len(data), 512)])}, nil
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
