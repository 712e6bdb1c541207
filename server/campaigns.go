package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
)

// Campaigns: thin handlers over campaign.Service (plan rules, digest, state
// machine, executor); this file maps its views to the API's models.

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
		plan, err := planIn(*pl)
		if err != nil {
			return nil, err
		}
		in.Plan = &plan
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
	d, err := s.campaignDetail(ctx, c.View)
	if err != nil {
		return nil, err
	}
	loc := s.linkBase(ctx) + "/api/v2/campaigns/" + c.View.Campaign.ID
	return gen.CreateCampaign201JSONResponse{Body: d, Headers: gen.CreateCampaign201ResponseHeaders{Location: &loc}}, nil
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
	out := gen.ListCampaigns200JSONResponse{Items: make([]gen.CampaignSummary, len(views)), NextCursor: nullable.NewNullNullable[string]()}
	for i, v := range views {
		out.Items[i] = campaignSummary(v)
	}
	if next != nil {
		out.NextCursor, out.HasMore = nullable.NewNullableWithValue(next.Encode()), true
	}
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
	d, err := s.campaignDetail(ctx, v)
	if err != nil {
		return nil, err
	}
	return gen.GetCampaign200JSONResponse(d), nil
}

// GetCampaignLimits answers the limits in force.
func (s *Server) GetCampaignLimits(ctx context.Context, _ gen.GetCampaignLimitsRequestObject) (gen.GetCampaignLimitsResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	l := s.campaigns.Limits()
	return gen.GetCampaignLimits200JSONResponse{MaxRecordsPerStage: l.MaxRecordsPerStage, MaxSuppliedRecords: l.MaxSuppliedRecords,
		MaxAssignmentChars: l.MaxAssignmentChars}, nil
}

// planIn converts the document's plan to the domain's (same JSON).
func planIn(p gen.Plan) (campaign.Plan, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return campaign.Plan{}, fmt.Errorf("encode plan: %w", err)
	}
	return campaign.ParsePlan(b)
}

// planOut converts the domain's plan to the document's.
func planOut(p campaign.Plan) (gen.Plan, error) {
	var out gen.Plan
	if err := json.Unmarshal([]byte(p.JSON()), &out); err != nil {
		return out, fmt.Errorf("decode plan: %w", err)
	}
	return out, nil
}

func stageAgent(a gen.StageAgent) *campaign.Agent {
	out := &campaign.Agent{ID: a.Id}
	if in := valueOf(a.Inputs); in != nil {
		out.Inputs = *in
	}
	return out
}

func campaignSummary(v campaign.View) gen.CampaignSummary {
	c := v.Campaign
	out := gen.CampaignSummary{
		CampaignId: uuid.MustParse(c.ID), Name: c.Name, Status: gen.CampaignStatus(c.Status), Revision: c.Revision,
		Objective: nullableOf(c.Objective), ReviewDigest: c.ReviewDigest, Capabilities: v.Capabilities,
		Deliverables: make([]gen.Deliverable, len(v.Plan.Deliverables)), ExpertId: nullableOf(c.ExpertID), ExpertName: nullableOf(c.ExpertName),
		NextStep: ptr(v.NextStep()), MaxCredits: nullable.NewNullNullable[int](), CreditsSpent: int(c.CreditsSpent), CreatedAt: c.CreatedAt,
		Records: gen.RecordsReport{Supplied: c.RecordsSupplied, Accepted: c.RecordsAccepted, BlankDropped: c.BlankDropped, DuplicatesDropped: c.DuplicatesDropped},
		Stages:  make([]gen.StageDetail, len(v.Stages)),
		Workforce: gen.CampaignWorkforce{Members: make([]gen.WorkforceMember, len(v.Workforce.Members)),
			Totals: gen.WorkforceTotals{Members: v.Workforce.Totals.Members, MaxConcurrency: v.Workforce.Totals.MaxConcurrency}},
	}
	if c.MaxCredits != nil {
		out.MaxCredits = nullable.NewNullableWithValue(int(*c.MaxCredits))
	}
	for i, d := range v.Plan.Deliverables {
		out.Deliverables[i] = gen.Deliverable{Key: d.Key, Title: d.Title, StageKey: d.StageKey, Format: gen.DeliverableFormat(d.Format), Filename: ptr(d.Filename)}
	}
	for i, m := range v.Workforce.Members {
		out.Workforce.Members[i] = gen.WorkforceMember{StageKey: m.StageKey, AgentId: nullableOf(m.AgentID), AgentName: m.AgentName,
			Effort: gen.Effort(m.Effort), Concurrency: m.Concurrency}
	}
	for i, st := range v.Stages {
		ps, _ := v.Plan.Stage(st.Key)
		out.Stages[i] = gen.StageDetail{Key: st.Key, Title: ps.Title, Status: gen.StageDetailStatus(v.StageStatus(st)),
			Fanout: gen.StageDetailFanout(ps.Fanout), DependsOn: ps.DependsOn, RecordsTotal: st.RecordsTotal,
			RecordsDone: st.RecordsDone, RecordsFailed: st.RecordsFailed, CreditsSpent: int(st.CreditsSpent)}
	}
	return out
}

func (s *Server) campaignDetail(ctx context.Context, v campaign.View) (gen.CampaignDetail, error) {
	sum := campaignSummary(v)
	c := v.Campaign
	plan, err := planOut(v.Plan)
	if err != nil {
		return gen.CampaignDetail{}, err
	}
	d := gen.CampaignDetail{
		CampaignId: sum.CampaignId, Name: sum.Name, Status: sum.Status, Revision: sum.Revision, Objective: sum.Objective,
		ReviewDigest: sum.ReviewDigest, Capabilities: sum.Capabilities, Deliverables: sum.Deliverables, ExpertId: sum.ExpertId,
		ExpertName: sum.ExpertName, NextStep: *sum.NextStep, Records: sum.Records, Stages: sum.Stages, Workforce: sum.Workforce,
		MaxCredits: sum.MaxCredits, CreditsSpent: sum.CreditsSpent, CreatedAt: sum.CreatedAt, Plan: plan,
		ApprovedAt: nullableOf(c.ApprovedAt), StartedAt: nullableOf(c.StartedAt), FinishedAt: nullableOf(c.FinishedAt),
		StatusChangedAt: nullableOf(c.StatusChangedAt), OwnerUserId: uuid.MustParse(c.AccountID),
		Artifacts: make([]gen.CampaignArtifact, len(v.Artifacts)), DeliverableFiles: make([]gen.DeliverableFile, len(v.Artifacts)),
		Attention: nullable.NewNullNullable[gen.CampaignAttention](),
	}
	base := s.linkBase(ctx)
	for i, a := range v.Artifacts {
		d.Artifacts[i] = gen.CampaignArtifact{DeliverableKey: a.DeliverableKey, Filename: a.Filename, MediaType: a.MediaType, ByteSize: int(a.ByteSize), Sha256: a.SHA256}
		d.DeliverableFiles[i] = gen.DeliverableFile{DeliverableKey: a.DeliverableKey, Filename: a.Filename, MediaType: a.MediaType, ByteSize: int(a.ByteSize),
			Sha256: a.SHA256, Url: base + "/api/v2/campaigns/" + c.ID + "/deliverables/" + a.DeliverableKey}
	}
	if c.Status == campaign.NeedsAttention && c.AttentionReason != nil {
		d.Attention = nullable.NewNullableWithValue(gen.CampaignAttention{Reason: gen.CampaignAttentionReason(*c.AttentionReason),
			StageKey: nullableOf(c.AttentionStage), Message: deref(c.AttentionMessage), NextAction: gen.CampaignAttentionNextAction(deref(c.AttentionAction))})
	}
	return d, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
		plan, err := planIn(*b.Plan)
		if err != nil {
			return nil, err
		}
		in.Plan = &plan
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
	d, err := s.campaignDetail(ctx, v)
	if err != nil {
		return nil, err
	}
	return gen.UpdateCampaign200JSONResponse(d), nil
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
	c := pf.View.Campaign
	out := gen.GetCampaignPortfolio200JSONResponse{
		CampaignId: uuid.MustParse(c.ID), Revision: c.Revision, Status: gen.CampaignStatus(c.Status), StageKey: pf.Stage.Key,
		Fields: make([]gen.FieldView, len(pf.Fields)), Items: make([]gen.PortfolioItem, len(pf.Items)),
		Coverage:       gen.PortfolioCoverage{Total: pf.Total, Done: pf.Done, Failed: pf.Failed, Pending: max(pf.Total-pf.Done-pf.Failed, 0)},
		EntityKeyField: nullableOf(pf.EntityKeyField), OutputSchema: nullable.NewNullNullable[map[string]any](), NextCursor: nullable.NewNullNullable[string](),
	}
	if pf.Stage.OutputSchema != nil {
		out.OutputSchema = nullable.NewNullableWithValue(pf.Stage.OutputSchema)
	}
	for i, f := range pf.Fields {
		out.Fields[i] = gen.FieldView{Name: f.Name, Label: f.Label, Type: gen.FieldViewType(f.Type), Source: gen.FieldViewSource(f.Source)}
	}
	for i, it := range pf.Items {
		// Workers run in-process, without a research job: job_id is null.
		out.Items[i] = gen.PortfolioItem{EntityKey: it.EntityKey, Status: gen.PortfolioItemStatus(it.Status), Fields: it.Fields,
			ErrorCode: nullableOf(it.ErrorCode), JobId: nullable.NewNullNullable[uuid.UUID]()}
	}
	if pf.Next != nil {
		out.NextCursor, out.HasMore = nullable.NewNullableWithValue(pf.Next.Encode()), true
	}
	return out, nil
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
