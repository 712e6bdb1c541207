package server

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

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

func buildJobOf(b expertbuild.Build) (gen.ExpertBuildJob, error) {
	id, err := uuid.Parse(b.ID)
	if err != nil {
		return gen.ExpertBuildJob{}, fmt.Errorf("build id %q: %w", b.ID, err)
	}
	out := gen.ExpertBuildJob{JobId: id, Status: gen.ExpertBuildJobStatus(b.Status), CreatedAt: b.CreatedAt,
		FinishedAt: nullable.NewNullNullable[time.Time]()}
	if b.FinishedAt != nil {
		out.FinishedAt = nullable.NewNullableWithValue(*b.FinishedAt)
	}
	if b.Expert != nil {
		e, err := convert[gen.Expert](*b.Expert)
		if err != nil {
			return out, err
		}
		out.Expert = nullable.NewNullableWithValue(e)
	}
	if b.ErrorCode != "" {
		out.Error = nullable.NewNullableWithValue(gen.ExpertBuildError{Code: b.ErrorCode, Message: b.ErrorMsg})
	}
	return out, nil
}
