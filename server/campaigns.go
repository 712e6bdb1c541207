package server

import (
	"context"
	"fmt"

	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
)

// Campaigns: thin handlers over campaign.Service (plan rules, digest, state
// machine, executor); map_campaigns.go maps its views to the API's models.

// CreateCampaign stores a campaign (201) or replays an Idempotency-Key.
func (s *Server) CreateCampaign(ctx context.Context, req gen.CreateCampaignRequestObject) (gen.CreateCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	hash, err := requestHash(b)
	if err != nil {
		return nil, err
	}
	in := campaign.CreateInput{
		AccountID: p.AccountID, Tier: p.Tier, KeyID: p.KeyID, Name: valueOf(b.Name), RequestHash: hash,
		Start: b.Start != nil && *b.Start,
		OneStage: campaign.OneStage{
			Instruction: valueOf(b.Instruction), QuestionField: valueOf(b.QuestionField), Approach: valueOf(b.Approach),
			ResponseLanguage: valueOf(b.ResponseLanguage), Concurrency: valueOf(b.Concurrency),
		},
	}
	if e := valueOf(b.Effort); e != nil {
		in.OneStage.Effort = ptr(string(*e))
	}
	if a := valueOf(b.Agent); a != nil {
		in.OneStage.Agent = stageAgent(*a)
	}
	if o := valueOf(b.OutputSchema); o != nil {
		in.OneStage.OutputSchema = *o
	}
	if pl := valueOf(b.Plan); pl != nil {
		in.Plan = ptr(planIn(*pl))
	}
	if q := valueOf(b.Questions); q != nil {
		in.Questions = *q
		if in.Questions == nil {
			in.Questions = []string{}
		}
	}
	if r := valueOf(b.Records); r != nil {
		in.Records = *r
		if in.Records == nil {
			in.Records = []map[string]any{}
		}
	}
	if m := valueOf(b.MaxCredits); m != nil {
		in.MaxCredits = ptr(int64(*m))
	}
	if req.Params.IdempotencyKey != nil {
		in.IdempotencyKey = *req.Params.IdempotencyKey
	}
	c, err := s.campaigns.Create(ctx, in)
	if err != nil {
		return nil, err
	}
	base := s.linkBase(ctx)
	loc := base + "/api/v2/campaigns/" + c.View.Campaign.ID
	return gen.CreateCampaign201JSONResponse{Body: campaignDetail(c.View, base), Headers: gen.CreateCampaign201ResponseHeaders{Location: &loc}}, nil
}

// ListCampaigns pages the caller's campaigns, newest first, without plans.
func (s *Server) ListCampaigns(ctx context.Context, req gen.ListCampaignsRequestObject) (gen.ListCampaignsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var status *string
	if req.Params.Status != nil {
		status = ptr(string(*req.Params.Status))
	}
	views, next, err := s.campaigns.List(ctx, p.AccountID, status, pr)
	if err != nil {
		return nil, err
	}
	out := gen.ListCampaigns200JSONResponse{Items: mapItems(views, campaignSummary)}
	out.NextCursor, out.HasMore = nextCursor(next)
	return out, nil
}

// GetCampaign reads a campaign in full.
func (s *Server) GetCampaign(ctx context.Context, req gen.GetCampaignRequestObject) (gen.GetCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.campaigns.Get(ctx, p.AccountID, req.CampaignId.String())
	if err != nil {
		return nil, err
	}
	return gen.GetCampaign200JSONResponse(campaignDetail(v, s.linkBase(ctx))), nil
}

// GetCampaignLimits answers the limits in force.
func (s *Server) GetCampaignLimits(ctx context.Context, _ gen.GetCampaignLimitsRequestObject) (gen.GetCampaignLimitsResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	return gen.GetCampaignLimits200JSONResponse(limitsOf(s.campaigns.Limits())), nil
}

// UpdateCampaign edits a draft.
func (s *Server) UpdateCampaign(ctx context.Context, req gen.UpdateCampaignRequestObject) (gen.UpdateCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	in := campaign.UpdateInput{AccountID: p.AccountID, Tier: p.Tier, ID: req.CampaignId.String(), Name: b.Name, Revision: b.Revision}
	if b.Plan != nil {
		in.Plan = ptr(planIn(*b.Plan))
	}
	if b.MaxCredits.IsSpecified() {
		in.MaxCreditsSet = true
		if m := valueOf(b.MaxCredits); m != nil {
			in.MaxCredits = ptr(int64(*m))
		}
	}
	v, err := s.campaigns.Update(ctx, in)
	if err != nil {
		return nil, err
	}
	return gen.UpdateCampaign200JSONResponse(campaignDetail(v, s.linkBase(ctx))), nil
}

// ApproveCampaign approves a draft with its current review digest.
func (s *Server) ApproveCampaign(ctx context.Context, req gen.ApproveCampaignRequestObject) (gen.ApproveCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.campaigns.Approve(ctx, p.AccountID, p.KeyID, req.CampaignId.String(), req.Body.ReviewDigest)
	if err != nil {
		return nil, err
	}
	return gen.ApproveCampaign200JSONResponse(campaignSummary(v)), nil
}

// CancelCampaign cancels a campaign; a finished one is returned unchanged.
func (s *Server) CancelCampaign(ctx context.Context, req gen.CancelCampaignRequestObject) (gen.CancelCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.campaigns.Cancel(ctx, p.AccountID, req.CampaignId.String())
	if err != nil {
		return nil, err
	}
	return gen.CancelCampaign200JSONResponse(campaignSummary(v)), nil
}

// RetryCampaign resumes a campaign that needs attention.
func (s *Server) RetryCampaign(ctx context.Context, req gen.RetryCampaignRequestObject) (gen.RetryCampaignResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.campaigns.Retry(ctx, p.AccountID, p.KeyID, req.CampaignId.String())
	if err != nil {
		return nil, err
	}
	return gen.RetryCampaign200JSONResponse(campaignSummary(v)), nil
}

// GetCampaignPortfolio pages a stage's records.
func (s *Server) GetCampaignPortfolio(ctx context.Context, req gen.GetCampaignPortfolioRequestObject) (gen.GetCampaignPortfolioResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	pf, err := s.campaigns.Portfolio(ctx, p.AccountID, req.CampaignId.String(), req.StageKey, pr.Limit, pr.Cursor)
	if err != nil {
		return nil, err
	}
	return gen.GetCampaignPortfolio200JSONResponse(portfolioOf(pf)), nil
}

// GetCampaignDeliverable streams a built deliverable file.
func (s *Server) GetCampaignDeliverable(ctx context.Context, req gen.GetCampaignDeliverableRequestObject) (gen.GetCampaignDeliverableResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	a, rc, err := s.campaigns.Download(ctx, p.AccountID, req.CampaignId.String(), req.DeliverableKey)
	if err != nil {
		return nil, err
	}
	disp := fmt.Sprintf("attachment; filename=%q", a.Filename)
	etag := `"` + a.SHA256 + `"`
	return gen.GetCampaignDeliverable200AsteriskResponse{Body: rc, ContentType: a.MediaType, ContentLength: a.ByteSize,
		Headers: gen.GetCampaignDeliverable200ResponseHeaders{ContentDisposition: &disp, ETag: &etag}}, nil
}

// ListCampaignBrowserSessions lists the browser sessions of a campaign's workers. This server's
// engines do not drive a browser, so the list is honestly empty, with zero counts.
func (s *Server) ListCampaignBrowserSessions(ctx context.Context, req gen.ListCampaignBrowserSessionsRequestObject) (gen.ListCampaignBrowserSessionsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := pageRequest(req.Params.Limit, req.Params.Cursor); err != nil {
		return nil, err
	}
	v, err := s.campaigns.Overview(ctx, p.AccountID, req.CampaignId.String())
	if err != nil {
		return nil, err
	}
	if k := req.Params.StageKey; k != nil {
		if _, ok := v.Plan.Stage(*k); !ok {
			return nil, errValidation("stage_key is not a stage of the campaign's plan", gen.FieldError{Field: "query.stage_key", Message: "no stage " + *k + " in the plan"})
		}
	}
	return gen.ListCampaignBrowserSessions200JSONResponse{CampaignId: req.CampaignId, CampaignStatus: gen.CampaignStatus(v.Campaign.Status),
		Items: []gen.CampaignBrowserSession{}, NextCursor: nullable.NewNullNullable[string]()}, nil
}
