package server

// Operations described in the API document but not built yet. Each answers 501 not_implemented
// (problem+json) until it is implemented in its own file; delete its stub here when it is.

import (
	"context"

	"github.com/researchd/researchd/gen"
)

func (s *Server) GetAgentCard(context.Context, gen.GetAgentCardRequestObject) (gen.GetAgentCardResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) A2aJsonRpc(context.Context, gen.A2aJsonRpcRequestObject) (gen.A2aJsonRpcResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) ListBatches(context.Context, gen.ListBatchesRequestObject) (gen.ListBatchesResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CreateBatch(context.Context, gen.CreateBatchRequestObject) (gen.CreateBatchResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) EstimateBatchCredits(context.Context, gen.EstimateBatchCreditsRequestObject) (gen.EstimateBatchCreditsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetBatch(context.Context, gen.GetBatchRequestObject) (gen.GetBatchResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CancelBatch(context.Context, gen.CancelBatchRequestObject) (gen.CancelBatchResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetBatchResults(context.Context, gen.GetBatchResultsRequestObject) (gen.GetBatchResultsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) RetryFailedBatchRows(context.Context, gen.RetryFailedBatchRowsRequestObject) (gen.RetryFailedBatchRowsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) RetryBatchRow(context.Context, gen.RetryBatchRowRequestObject) (gen.RetryBatchRowResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) ListCampaigns(context.Context, gen.ListCampaignsRequestObject) (gen.ListCampaignsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CreateCampaign(context.Context, gen.CreateCampaignRequestObject) (gen.CreateCampaignResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetCampaignLimits(context.Context, gen.GetCampaignLimitsRequestObject) (gen.GetCampaignLimitsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetCampaign(context.Context, gen.GetCampaignRequestObject) (gen.GetCampaignResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) UpdateCampaign(context.Context, gen.UpdateCampaignRequestObject) (gen.UpdateCampaignResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) ApproveCampaign(context.Context, gen.ApproveCampaignRequestObject) (gen.ApproveCampaignResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) ListCampaignBrowserSessions(context.Context, gen.ListCampaignBrowserSessionsRequestObject) (gen.ListCampaignBrowserSessionsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CancelCampaign(context.Context, gen.CancelCampaignRequestObject) (gen.CancelCampaignResponseObject, error) {
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

func (s *Server) ListLoops(context.Context, gen.ListLoopsRequestObject) (gen.ListLoopsResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CreateLoop(context.Context, gen.CreateLoopRequestObject) (gen.CreateLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) DeleteLoop(context.Context, gen.DeleteLoopRequestObject) (gen.DeleteLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetLoop(context.Context, gen.GetLoopRequestObject) (gen.GetLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) UpdateLoop(context.Context, gen.UpdateLoopRequestObject) (gen.UpdateLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) PauseLoop(context.Context, gen.PauseLoopRequestObject) (gen.PauseLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) ResumeLoop(context.Context, gen.ResumeLoopRequestObject) (gen.ResumeLoopResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) RunLoopNow(context.Context, gen.RunLoopNowRequestObject) (gen.RunLoopNowResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) CreateV1Research(context.Context, gen.CreateV1ResearchRequestObject) (gen.CreateV1ResearchResponseObject, error) {
	return nil, errNotImplemented()
}

func (s *Server) GetV1Research(context.Context, gen.GetV1ResearchRequestObject) (gen.GetV1ResearchResponseObject, error) {
	return nil, errNotImplemented()
}
