package server

// Operations described in the API document but not built yet. Each answers 501 not_implemented
// (problem+json) until it is implemented in its own file; delete its stub here when it is.

import (
	"context"

	"github.com/researchd/researchd/gen"
)

func (s *Server) ListCampaignBrowserSessions(context.Context, gen.ListCampaignBrowserSessionsRequestObject) (gen.ListCampaignBrowserSessionsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetCampaignDeliverable(context.Context, gen.GetCampaignDeliverableRequestObject) (gen.GetCampaignDeliverableResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) RetryCampaign(context.Context, gen.RetryCampaignRequestObject) (gen.RetryCampaignResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetCampaignPortfolio(context.Context, gen.GetCampaignPortfolioRequestObject) (gen.GetCampaignPortfolioResponseObject, error) {
	return nil, errNotImplemented()
}
