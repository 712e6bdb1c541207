package server

import (
	"context"

	"github.com/researchd/researchd/gen"
)

// GetResearchTimeline pages a job's events newest first. Events are sanitized when stored and
// again here, before the response is built.
func (s *Server) GetResearchTimeline(ctx context.Context, req gen.GetResearchTimelineRequestObject) (gen.GetResearchTimelineResponseObject, error) {
	j, _, err := s.readableJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.research.Events(ctx, j.ID, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.GetResearchTimeline200JSONResponse{Items: mapItems(page.Items, timelineEvent), NextCursor: next, HasMore: more}, nil
}
