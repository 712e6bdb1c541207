package server

import (
	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
)

// Campaigns between the domain (campaign) and the API: plans both ways, views, portfolio pages
// and limits.

// planIn is the domain's plan from the document's. Whatever the body left out or sent as null is
// the domain's unset (nil or zero), as the plan's stored JSON has it.
func planIn(p gen.Plan) campaign.Plan {
	out := campaign.Plan{Stages: make([]campaign.Stage, len(p.Stages))}
	for i, st := range p.Stages {
		out.Stages[i] = campaign.Stage{
			Key: st.Key, Title: st.Title, Op: string(st.Op), Fanout: string(orZero(st.Fanout)), DependsOn: orZero(st.DependsOn),
			Instruction: valueOf(st.Instruction), QuestionField: valueOf(st.QuestionField), EntityKeyField: valueOf(st.EntityKeyField),
			RecordsField: valueOf(st.RecordsField), OutputSchema: mapOf(st.OutputSchema), Approach: valueOf(st.Approach),
			Effort: stringOf(st.Effort), Concurrency: orZero(valueOf(st.Concurrency)), ResponseLanguage: valueOf(st.ResponseLanguage),
		}
		if m := valueOf(st.MaxCredits); m != nil {
			out.Stages[i].MaxCredits = ptr(int64(*m))
		}
		if a := valueOf(st.Agent); a != nil {
			out.Stages[i].Agent = stageAgent(*a)
		}
	}
	if p.Deliverables != nil {
		out.Deliverables = mapItems(*p.Deliverables, func(d gen.Deliverable) campaign.Deliverable {
			return campaign.Deliverable{Key: d.Key, Title: d.Title, StageKey: d.StageKey, Format: string(d.Format), Filename: orZero(d.Filename)}
		})
	}
	return out
}

func stageAgent(a gen.StageAgent) *campaign.Agent {
	out := &campaign.Agent{ID: a.Id}
	if in := valueOf(a.Inputs); in != nil {
		out.Inputs = *in
	}
	return out
}

// planOut is the document's plan from the domain's normalized one: an unset optional field is
// left out, as the plan's stored JSON leaves it out.
func planOut(p campaign.Plan) gen.Plan {
	out := gen.Plan{Stages: make([]gen.AgentStage, len(p.Stages))}
	for i, st := range p.Stages {
		g := gen.AgentStage{
			Key: st.Key, Title: st.Title, Op: gen.AgentStageOp(st.Op), Fanout: ptr(gen.AgentStageFanout(st.Fanout)),
			Instruction: optionalOf(st.Instruction), QuestionField: optionalOf(st.QuestionField), EntityKeyField: optionalOf(st.EntityKeyField),
			RecordsField: optionalOf(st.RecordsField), OutputSchema: optionalMap(st.OutputSchema), Approach: optionalOf(st.Approach),
			Concurrency: nullable.NewNullableWithValue(st.Concurrency), ResponseLanguage: optionalOf(st.ResponseLanguage),
		}
		if st.DependsOn != nil {
			g.DependsOn = ptr(st.DependsOn)
		}
		if st.Effort != nil {
			g.Effort = nullable.NewNullableWithValue(gen.Effort(*st.Effort))
		}
		if st.MaxCredits != nil {
			g.MaxCredits = nullable.NewNullableWithValue(int(*st.MaxCredits))
		}
		if st.Agent != nil {
			g.Agent = nullable.NewNullableWithValue(gen.StageAgent{Id: st.Agent.ID, Inputs: optionalMap(st.Agent.Inputs)})
		}
		out.Stages[i] = g
	}
	if p.Deliverables != nil {
		out.Deliverables = ptr(mapItems(p.Deliverables, func(d campaign.Deliverable) gen.Deliverable {
			return gen.Deliverable{Key: d.Key, Title: d.Title, StageKey: d.StageKey, Format: gen.DeliverableFormat(d.Format), Filename: ptr(d.Filename)}
		}))
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

// campaignDetail is the full campaign; base prefixes the deliverables' download links.
func campaignDetail(v campaign.View, base string) gen.CampaignDetail {
	sum := campaignSummary(v)
	c := v.Campaign
	d := gen.CampaignDetail{
		CampaignId: sum.CampaignId, Name: sum.Name, Status: sum.Status, Revision: sum.Revision, Objective: sum.Objective,
		ReviewDigest: sum.ReviewDigest, Capabilities: sum.Capabilities, Deliverables: sum.Deliverables, ExpertId: sum.ExpertId,
		ExpertName: sum.ExpertName, NextStep: *sum.NextStep, Records: sum.Records, Stages: sum.Stages, Workforce: sum.Workforce,
		MaxCredits: sum.MaxCredits, CreditsSpent: sum.CreditsSpent, CreatedAt: sum.CreatedAt, Plan: planOut(v.Plan),
		ApprovedAt: nullableOf(c.ApprovedAt), StartedAt: nullableOf(c.StartedAt), FinishedAt: nullableOf(c.FinishedAt),
		StatusChangedAt: nullableOf(c.StatusChangedAt), OwnerUserId: uuid.MustParse(c.AccountID),
		Artifacts: make([]gen.CampaignArtifact, len(v.Artifacts)), DeliverableFiles: make([]gen.DeliverableFile, len(v.Artifacts)),
		Attention: nullable.NewNullNullable[gen.CampaignAttention](),
	}
	for i, a := range v.Artifacts {
		d.Artifacts[i] = gen.CampaignArtifact{DeliverableKey: a.DeliverableKey, Filename: a.Filename, MediaType: a.MediaType, ByteSize: int(a.ByteSize), Sha256: a.SHA256}
		d.DeliverableFiles[i] = gen.DeliverableFile{DeliverableKey: a.DeliverableKey, Filename: a.Filename, MediaType: a.MediaType, ByteSize: int(a.ByteSize),
			Sha256: a.SHA256, Url: base + "/api/v2/campaigns/" + c.ID + "/deliverables/" + a.DeliverableKey}
	}
	if v.NeedsAttention() && c.AttentionReason != nil {
		d.Attention = nullable.NewNullableWithValue(gen.CampaignAttention{Reason: gen.CampaignAttentionReason(*c.AttentionReason),
			StageKey: nullableOf(c.AttentionStage), Message: orZero(c.AttentionMessage), NextAction: gen.CampaignAttentionNextAction(orZero(c.AttentionAction))})
	}
	return d
}

func portfolioOf(pf campaign.Portfolio) gen.CampaignPortfolio {
	c := pf.View.Campaign
	out := gen.CampaignPortfolio{
		CampaignId: uuid.MustParse(c.ID), Revision: c.Revision, Status: gen.CampaignStatus(c.Status), StageKey: pf.Stage.Key,
		Fields: make([]gen.FieldView, len(pf.Fields)), Items: make([]gen.PortfolioItem, len(pf.Items)),
		Coverage:       gen.PortfolioCoverage{Total: pf.Total, Done: pf.Done, Failed: pf.Failed, Pending: max(pf.Total-pf.Done-pf.Failed, 0)},
		EntityKeyField: nullableOf(pf.EntityKeyField), OutputSchema: nullableMap(pf.Stage.OutputSchema),
	}
	out.NextCursor, out.HasMore = nextCursor(pf.Next)
	for i, f := range pf.Fields {
		out.Fields[i] = gen.FieldView{Name: f.Name, Label: f.Label, Type: gen.FieldViewType(f.Type), Source: gen.FieldViewSource(f.Source)}
	}
	for i, it := range pf.Items {
		// Workers run in-process, without a research job: job_id is null.
		out.Items[i] = gen.PortfolioItem{EntityKey: it.EntityKey, Status: gen.PortfolioItemStatus(it.Status), Fields: it.Fields,
			ErrorCode: nullableOf(it.ErrorCode), JobId: nullable.NewNullNullable[uuid.UUID]()}
	}
	return out
}

func limitsOf(l campaign.Limits) gen.CampaignLimits {
	return gen.CampaignLimits{MaxRecordsPerStage: l.MaxRecordsPerStage, MaxSuppliedRecords: l.MaxSuppliedRecords, MaxAssignmentChars: l.MaxAssignmentChars}
}

// optionalOf leaves an unset field out of the body rather than sending null.
func optionalOf[T any](v *T) nullable.Nullable[T] {
	if v == nil {
		return nil
	}
	return nullable.NewNullableWithValue(*v)
}

// optionalMap leaves an empty or unset object out, as omitempty does.
func optionalMap(m map[string]any) nullable.Nullable[map[string]any] {
	if len(m) == 0 {
		return nil
	}
	return nullable.NewNullableWithValue(m)
}
