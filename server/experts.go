package server

import (
	"context"

	"github.com/google/uuid"

	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/gen"
)

// Experts: thin handlers over expert.Service; map_experts.go maps between its types and the API's.

func (s *Server) expertCaller(ctx context.Context) (expert.Caller, error) {
	p, err := caller(ctx)
	if err != nil {
		return expert.Caller{}, err
	}
	return expert.Caller{AccountID: p.AccountID, Email: p.Email, IsAdmin: p.IsAdmin}, nil
}

// ListExperts is the public catalogue: registry experts and public custom experts.
func (s *Server) ListExperts(ctx context.Context, req gen.ListExpertsRequestObject) (gen.ListExpertsResponseObject, error) {
	list, err := s.publicExperts(ctx, req.Params.Query)
	if err != nil {
		return nil, err
	}
	return gen.ListExperts200JSONResponse(list), nil
}

// ListAgents is GET /agents, the alias of GET /experts.
func (s *Server) ListAgents(ctx context.Context, req gen.ListAgentsRequestObject) (gen.ListAgentsResponseObject, error) {
	list, err := s.publicExperts(ctx, req.Params.Query)
	if err != nil {
		return nil, err
	}
	return gen.ListAgents200JSONResponse(list), nil
}

func (s *Server) publicExperts(ctx context.Context, query *string) (gen.ExpertList, error) {
	q := ""
	if query != nil {
		q = *query
	}
	items, err := s.experts.ListPublic(ctx, q)
	if err != nil {
		return gen.ExpertList{}, err
	}
	return gen.ExpertList{Items: mapItems(items, expertSummaryOf), Count: len(items)}, nil
}

// CreateExpert creates a custom expert (version 1).
func (s *Server) CreateExpert(ctx context.Context, req gen.CreateExpertRequestObject) (gen.CreateExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := createInputOf(*req.Body)
	if in.IdempotencyKey, in.RequestHash, err = idempotencyOf(req.Params.IdempotencyKey, req.Body); err != nil {
		return nil, err
	}
	e, err := s.experts.Create(ctx, c, in)
	if err != nil {
		return nil, err
	}
	out, err := expertOf(e)
	if err != nil {
		return nil, err
	}
	return gen.CreateExpert201JSONResponse(out), nil
}

// ListCustomExperts pages the experts the caller owns or is granted.
func (s *Server) ListCustomExperts(ctx context.Context, req gen.ListCustomExpertsRequestObject) (gen.ListCustomExpertsResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.experts.ListCustom(ctx, c, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListCustomExperts200JSONResponse{Items: mapItems(page.Items, expertSummaryOf), NextCursor: next, HasMore: more}, nil
}

// GetExpert reads an expert by registry id, UUID, slug or handle.
func (s *Server) GetExpert(ctx context.Context, req gen.GetExpertRequestObject) (gen.GetExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.experts.Get(ctx, c, req.ExpertId)
	if err != nil {
		return nil, err
	}
	out, err := expertOf(e)
	if err != nil {
		return nil, err
	}
	return gen.GetExpert200JSONResponse(out), nil
}

// UpdateExpert applies a partial update.
func (s *Server) UpdateExpert(ctx context.Context, req gen.UpdateExpertRequestObject) (gen.UpdateExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.experts.Update(ctx, c, req.ExpertId, patchOf(*req.Body))
	if err != nil {
		return nil, err
	}
	out, err := expertOf(e)
	if err != nil {
		return nil, err
	}
	return gen.UpdateExpert200JSONResponse(out), nil
}

// DeleteExpert archives an expert (idempotent).
func (s *Server) DeleteExpert(ctx context.Context, req gen.DeleteExpertRequestObject) (gen.DeleteExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.experts.Archive(ctx, c, req.ExpertId); err != nil {
		return nil, err
	}
	return gen.DeleteExpert204Response{}, nil
}

// ListExpertShares lists the grants on an expert.
func (s *Server) ListExpertShares(ctx context.Context, req gen.ListExpertSharesRequestObject) (gen.ListExpertSharesResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.experts.Shares(ctx, c, req.ExpertId)
	if err != nil {
		return nil, err
	}
	items := mapItems(l.Items, shareOf)
	return gen.ListExpertShares200JSONResponse{ExpertId: l.ExpertID, Count: len(items), Items: items}, nil
}

// ShareExpert grants a user, domain or team a role (201 new, 200 role changed).
func (s *Server) ShareExpert(ctx context.Context, req gen.ShareExpertRequestObject) (gen.ShareExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	sh, created, err := s.experts.Grant(ctx, c, req.ExpertId, string(b.PrincipalType), b.Principal, string(b.Role))
	if err != nil {
		return nil, err
	}
	if created {
		return gen.ShareExpert201JSONResponse(shareOf(sh)), nil
	}
	return gen.ShareExpert200JSONResponse(shareOf(sh)), nil
}

// UnshareExpert revokes a grant (idempotent).
func (s *Server) UnshareExpert(ctx context.Context, req gen.UnshareExpertRequestObject) (gen.UnshareExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.experts.Revoke(ctx, c, req.ExpertId, string(req.Params.PrincipalType), req.Params.Principal); err != nil {
		return nil, err
	}
	return gen.UnshareExpert204Response{}, nil
}

// ListExpertVersions pages the version history (editors only).
func (s *Server) ListExpertVersions(ctx context.Context, req gen.ListExpertVersionsRequestObject) (gen.ListExpertVersionsResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.experts.Versions(ctx, c, req.ExpertId, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListExpertVersions200JSONResponse{Items: mapItems(page.Items, versionSummaryOf), NextCursor: next, HasMore: more}, nil
}

// GetExpertVersion reads one version with its snapshot.
func (s *Server) GetExpertVersion(ctx context.Context, req gen.GetExpertVersionRequestObject) (gen.GetExpertVersionResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	v, snap, err := s.experts.Version(ctx, c, req.ExpertId, req.VersionNum)
	if err != nil {
		return nil, err
	}
	return gen.GetExpertVersion200JSONResponse(versionOf(v, snap)), nil
}

// RestoreExpertVersion rolls the configuration back to a version, recorded as a new one.
func (s *Server) RestoreExpertVersion(ctx context.Context, req gen.RestoreExpertVersionRequestObject) (gen.RestoreExpertVersionResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.experts.Restore(ctx, c, req.ExpertId, req.VersionNum)
	if err != nil {
		return nil, err
	}
	return gen.RestoreExpertVersion200JSONResponse{ExpertId: uuid.MustParse(r.ExpertID), RestoredFrom: r.RestoredFrom, NewVersionNum: r.NewVersionNum}, nil
}

// SetExpertVisibility makes an expert public (administrators) or private.
func (s *Server) SetExpertVisibility(ctx context.Context, req gen.SetExpertVisibilityRequestObject) (gen.SetExpertVisibilityResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.experts.SetVisibility(ctx, c, req.ExpertId, req.Body.Visibility == gen.Public)
	if err != nil {
		return nil, err
	}
	out, err := expertOf(e)
	if err != nil {
		return nil, err
	}
	return gen.SetExpertVisibility200JSONResponse(out), nil
}
