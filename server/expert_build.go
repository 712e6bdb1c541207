package server

import (
	"context"

	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/gen"
)

// Expert builds: POST /experts/build queues a build; GET /experts/build/{job_id} reads
// it. The work happens on the queue (package expertbuild).

// BuildExpert starts an asynchronous build of a draft expert.
func (s *Server) BuildExpert(ctx context.Context, req gen.BuildExpertRequestObject) (gen.BuildExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := expertbuild.Request{DomainDescription: req.Body.DomainDescription, Name: valueOf(req.Body.Name)}
	key, hash, err := idempotencyOf(req.Params.IdempotencyKey, req.Body)
	if err != nil {
		return nil, err
	}
	b, _, err := s.builds.Start(ctx, c, in, key, hash)
	if err != nil {
		return nil, err
	}
	out, err := buildJobOf(b)
	if err != nil {
		return nil, err
	}
	return gen.BuildExpert202JSONResponse(out), nil
}

// GetExpertBuild reads a build the caller started.
func (s *Server) GetExpertBuild(ctx context.Context, req gen.GetExpertBuildRequestObject) (gen.GetExpertBuildResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.builds.Get(ctx, c, req.JobId.String())
	if err != nil {
		return nil, err
	}
	out, err := buildJobOf(b)
	if err != nil {
		return nil, err
	}
	return gen.GetExpertBuild200JSONResponse(out), nil
}
