package server

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
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
	page, err := s.store.ListEvents(ctx, j.ID, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.GetResearchTimeline200JSONResponse{Items: mapItems(page.Items, timelineEvent), NextCursor: next, HasMore: more}, nil
}

func timelineEvent(e store.ResearchEvent) gen.TimelineEvent {
	var data map[string]any
	if e.Data != nil {
		_ = json.Unmarshal([]byte(*e.Data), &data)
	}
	title, content, data := jobs.SanitizeEvent(e.Kind, e.Title, e.Content, data)
	out := gen.TimelineEvent{
		EventId: uuid.MustParse(e.ID), Seq: int(e.Seq), CreatedAt: e.CreatedAt, Kind: gen.TimelineEventKind(e.Kind),
		Title: title, Content: content, Data: nullable.NewNullNullable[map[string]any](),
	}
	if data != nil {
		out.Data = nullable.NewNullableWithValue(data)
	}
	return out
}
