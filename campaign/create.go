package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// idemPrefix keeps campaign creates apart from other creates in the shared idempotency records.
const idemPrefix = "campaign:"

// OneStage are the one-stage fields of a create; nil pointers are absent (or null).
type OneStage struct {
	Instruction, QuestionField, Approach, Effort, ResponseLanguage *string
	Agent                                                          *Agent
	Concurrency                                                    *int
	OutputSchema                                                   map[string]any
}

// present names the one-stage fields that were sent.
func (o OneStage) present() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"instruction", o.Instruction != nil}, {"question_field", o.QuestionField != nil}, {"agent", o.Agent != nil},
		{"approach", o.Approach != nil}, {"concurrency", o.Concurrency != nil}, {"effort", o.Effort != nil},
		{"output_schema", o.OutputSchema != nil}, {"response_language", o.ResponseLanguage != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// CreateInput is a POST /campaigns body (already schema-validated) plus who sent it.
type CreateInput struct {
	AccountID, Tier, KeyID string
	Plan                   *Plan // nil: the one-stage fields
	OneStage               OneStage
	Name                   *string
	// Questions and Records are nil when absent.
	Questions  []string
	Records    []map[string]any
	MaxCredits *int64
	Start      bool
	// IdempotencyKey and RequestHash (of the body) make a retried create return the original.
	IdempotencyKey, RequestHash string
}

// Created is the outcome of Create: a new campaign or, for a replayed Idempotency-Key, the one the
// key created, as it stands now.
type Created struct {
	View View
}

// Create validates a campaign and stores it (with its supplied records and the idempotency record)
// in one transaction; with Start it is approved in the same transaction. A replayed key returns
// the campaign it created without looking at the body.
func (s *Service) Create(ctx context.Context, in CreateInput) (Created, error) {
	k := idempotency.Key{AccountID: in.AccountID, Scope: idemPrefix, Key: in.IdempotencyKey, RequestHash: in.RequestHash, StatusCode: 201, Now: s.now()}
	c, _, err := idempotency.Create(ctx, s.st, k, in, s.replay, s.create)
	return c, err
}

func (s *Service) create(ctx context.Context, in CreateInput, claim idempotency.Claim) (Created, error) {
	d, err := s.prepare(ctx, in)
	if err != nil {
		return Created{}, err
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, d.c.ID); err != nil {
			return err
		}
		if err := tx.CreateCampaign(ctx, &d.c, d.stages, d.input); err != nil {
			return err
		}
		if in.Start {
			return s.enqueueAdvance(ctx, tx, d.c.ID)
		}
		return nil
	})
	if err != nil {
		return Created{}, err
	}
	// As created: the dispatcher may already have moved it on.
	v, err := decodeView(d.c, d.stages)
	return Created{View: v}, err
}

// replay answers a create whose Idempotency-Key was seen: the campaign as it stands now.
func (s *Service) replay(ctx context.Context, k store.IdempotencyKey) (Created, error) {
	c, err := s.st.CampaignByID(ctx, k.JobID)
	if err != nil {
		return Created{}, err
	}
	v, err := s.view(ctx, c, true)
	return Created{View: v}, err
}

// draft is a validated campaign ready to insert.
type draft struct {
	c      store.Campaign
	stages []store.CampaignStage
	input  []store.CampaignRecord
}

// prepare validates a create and builds its rows without writing. It reads through the service's
// own store, so it runs before any transaction (SQLite has one connection).
func (s *Service) prepare(ctx context.Context, in CreateInput) (draft, error) {
	var probs []fault.Field
	oneStage := in.OneStage.present()
	if in.Plan != nil {
		for _, f := range oneStage {
			probs = append(probs, fault.Field{Field: f, Message: "send either plan or the one-stage fields, not both"})
		}
	}
	if in.Questions != nil && in.Records != nil {
		probs = append(probs, fault.Field{Field: "records", Message: "send questions or records, not both"})
	}
	if len(probs) > 0 {
		return draft{}, refuse(probs)
	}
	recs, blanks, field := in.Records, 0, "records"
	if in.Questions != nil {
		recs, blanks = questionRecords(in.Questions)
		field = "questions"
	}
	if n := len(in.Questions) + len(in.Records); n > s.cfg.Limits.MaxSuppliedRecords {
		return draft{}, invalid(field, fmt.Sprintf("%d records; at most %d (max_supplied_records)", n, s.cfg.Limits.MaxSuppliedRecords))
	}
	plan, prefix, err := s.planOf(in, len(recs) > 0)
	if err != nil {
		return draft{}, err
	}
	id := uuid.NewString()
	now := s.now()
	c := store.Campaign{ID: id, AccountID: in.AccountID, Status: Draft, Revision: 1, MaxCredits: in.MaxCredits,
		CreatedAt: now, UpdatedAt: now, StatusChangedAt: &now}
	if in.Plan == nil && in.OneStage.Agent != nil {
		c.ExpertID = &in.OneStage.Agent.ID
	}
	res, err := s.review(ctx, &c, plan, prefix, in.Tier)
	if err != nil {
		return draft{}, err
	}
	sup, probs := readSupplied(field, recs, blanks, intake(plan), s.cfg.Limits, id, now)
	probs = append(probs, suppliedProblems(plan, prefix, field, in.Questions != nil || in.Records != nil)...)
	if len(probs) > 0 {
		return draft{}, refuse(probs)
	}
	c.RecordsSupplied, c.BlankDropped, c.DuplicatesDropped = sup.count, sup.blank, sup.duplicates
	c.RecordsAccepted = sup.count - sup.blank - sup.duplicates
	c.Name = defaultName(in.Name, plan)
	if in.Start {
		if err := s.affordable(ctx, in.AccountID, plan, res); err != nil {
			return draft{}, err
		}
		c.Status, c.ApprovedAt, c.ApprovedKeyID = Approved, &now, keyRef(in.KeyID)
	}
	return draft{c: c, stages: stageRows(id, plan), input: sup.rows}, nil
}

// planOf is the plan a create asks for (the one-stage expansion or the plan sent), normalized, and
// the prefix its problems are named under.
func (s *Service) planOf(in CreateInput, hasRecords bool) (Plan, string, error) {
	if in.Plan != nil {
		return in.Plan.Normalize(), "plan/", nil
	}
	o := in.OneStage
	if o.Instruction == nil && o.QuestionField == nil && (o.Agent == nil || len(o.Agent.Inputs) == 0) && in.Questions == nil {
		return Plan{}, "", invalid("plan", "send a plan, or an assignment for one stage (instruction, question_field, agent.inputs or questions)")
	}
	st := Stage{Key: "research", Op: "agent", Fanout: FanoutRoot, Instruction: o.Instruction, QuestionField: o.QuestionField,
		Agent: o.Agent, Approach: o.Approach, Effort: o.Effort, OutputSchema: o.OutputSchema, ResponseLanguage: o.ResponseLanguage}
	if o.Concurrency != nil {
		st.Concurrency = *o.Concurrency
	}
	if hasRecords || in.Questions != nil || in.Records != nil {
		st.Fanout = FanoutPerEntity
	}
	if in.Questions != nil && st.QuestionField == nil {
		st.QuestionField = ptr(questionField)
	}
	switch {
	case in.Name != nil:
		st.Title = *in.Name
	case o.Instruction != nil:
		st.Title = firstLine(*o.Instruction, 80)
	default:
		st.Title = "Research"
	}
	p := Plan{Stages: []Stage{st}, Deliverables: []Deliverable{{Key: "results", Title: "Results", StageKey: st.Key, Format: FormatCSV}}}
	return p.Normalize(), "", nil
}

// suppliedProblems checks that supplied records and the plan's starting stages agree: records need
// a starting stage that reads them, and a starting per_entity or aggregate stage needs records.
func suppliedProblems(p Plan, prefix, field string, sent bool) []fault.Field {
	if intake(p) == nil && sent {
		return []fault.Field{{Field: field, Message: "no starting per_entity or aggregate stage reads supplied records"}}
	}
	for i, st := range p.Stages {
		if st.Starting() && st.Fanout != FanoutRoot && !sent {
			return []fault.Field{{Field: fmt.Sprintf("%sstages/%d/fanout", prefix, i),
				Message: "a starting " + st.Fanout + " stage reads the supplied records: send questions or records, or make it a root stage"}}
		}
	}
	return nil
}

// resolved is what a plan's stages run as, for the workforce and the budget checks.
type resolved struct {
	agentID   []*string
	agentName []string
	effort    []string
	tools     []string
}

// review checks a normalized plan and fills what the campaign shows for review: the plan, its
// objective, workforce, capabilities and digest.
func (s *Service) review(ctx context.Context, c *store.Campaign, plan Plan, prefix, tier string) (resolved, error) {
	probs := plan.Check(prefix)
	res, more, err := s.resolve(ctx, c.AccountID, tier, plan, prefix)
	if err != nil {
		return res, err
	}
	probs = append(probs, more...)
	probs = append(probs, s.budgetProblems(plan, prefix, res, c.MaxCredits)...)
	if len(probs) > 0 {
		if prefix == "" { // one-stage fields: name them as sent
			for i := range probs {
				probs[i].Field = strings.TrimPrefix(probs[i].Field, "stages/0/")
			}
		}
		return res, refuse(probs)
	}
	c.Plan = plan.JSON()
	c.Objective = objective(plan)
	wf, err := json.Marshal(workforce(plan, res))
	if err != nil {
		return res, fmt.Errorf("encode workforce: %w", err)
	}
	c.Workforce = string(wf)
	caps, err := json.Marshal(s.capabilities(res))
	if err != nil {
		return res, fmt.Errorf("encode capabilities: %w", err)
	}
	c.Capabilities = string(caps)
	if c.ExpertID != nil {
		c.ExpertName = &res.agentName[0]
	}
	c.ReviewDigest, err = Digest(plan, c.Revision, c.MaxCredits)
	return res, err
}

// resolve finds each stage's agent (an unknown one is a problem) and its effort: the stage's, else
// the agent's default, else medium, clamped to the tier.
func (s *Service) resolve(ctx context.Context, accountID, tier string, plan Plan, prefix string) (resolved, []fault.Field, error) {
	var res resolved
	var probs []fault.Field
	for i, st := range plan.Stages {
		field := fmt.Sprintf("%sstages/%d/agent/id", prefix, i)
		if prefix == "" {
			field = "agent/id"
		}
		var name, requested = "Researcher", ""
		var id *string
		if st.Agent != nil {
			ex, err := s.expert(ctx, accountID, st.Agent.ID)
			switch {
			case errors.Is(err, jobs.ErrExpertNotFound):
				probs = append(probs, fault.Field{Field: field, Message: "no expert " + st.Agent.ID + " that this account may run"})
			case err != nil:
				return res, nil, err
			default:
				id, name, requested = &st.Agent.ID, ex.Name, ex.DefaultEffort
				res.tools = append(res.tools, ex.ToolNames...)
			}
		}
		if st.Effort != nil {
			requested = *st.Effort
		}
		if requested == "" {
			requested = billing.EffortMedium
		}
		res.agentID = append(res.agentID, id)
		res.agentName = append(res.agentName, name)
		res.effort = append(res.effort, s.billing.Config().Clamp(tier, requested))
	}
	return res, probs, nil
}

func (s *Service) expert(ctx context.Context, accountID, id string) (jobs.Expert, error) {
	if s.experts == nil {
		return jobs.Expert{}, jobs.ErrExpertNotFound
	}
	return s.experts.Resolve(ctx, accountID, id)
}

// agentTiers refuses approving a draft one of whose agents the account's tier may no longer run
// (the tier or the expert changed since the draft was saved): *jobs.ExpertTierError, 403 at the
// approval rather than a stage of refused workers. An agent that is gone is left to the workers, as
// before.
func (s *Service) agentTiers(ctx context.Context, accountID string, plan Plan) error {
	for _, st := range plan.Stages {
		if st.Agent == nil {
			continue
		}
		if _, err := s.expert(ctx, accountID, st.Agent.ID); err != nil && !errors.Is(err, jobs.ErrExpertNotFound) {
			return err
		}
	}
	return nil
}

// budgetProblems: every budget must cover one worker of what it pays for (a stage budget its
// stage's, the campaign budget every stage's).
func (s *Service) budgetProblems(plan Plan, prefix string, res resolved, budget *int64) []fault.Field {
	var probs []fault.Field
	prices := s.billing.Config()
	var most int64
	for i, st := range plan.Stages {
		cost := prices.Credits(res.effort[i])
		most = max(most, cost)
		if st.MaxCredits != nil && *st.MaxCredits < cost {
			probs = append(probs, fault.Field{Field: fmt.Sprintf("%sstages/%d/max_credits", prefix, i),
				Message: fmt.Sprintf("%d credits cannot cover one worker at effort %s (%d credits)", *st.MaxCredits, res.effort[i], cost)})
		}
	}
	if budget != nil && *budget < most {
		probs = append(probs, fault.Field{Field: "max_credits",
			Message: fmt.Sprintf("%d credits cannot cover one worker of every stage (the costliest costs %d credits)", *budget, most)})
	}
	return probs
}

// affordable refuses (ErrInsufficientCredits) when the balance cannot cover one worker of the
// first starting stage.
func (s *Service) affordable(ctx context.Context, accountID string, plan Plan, res resolved) error {
	for i, st := range plan.Stages {
		if !st.Starting() {
			continue
		}
		n, err := s.billing.AvailableUnits(ctx, s.st, accountID, res.effort[i])
		if err != nil {
			return err
		}
		if n == 0 {
			return noCredits(fmt.Sprintf("stage %s runs at effort %s (%d credits a worker)", st.Key, res.effort[i], s.billing.Config().Credits(res.effort[i])))
		}
		return nil
	}
	return nil
}

// capabilities are the engine's plus the tools the stages' agents are granted.
func (s *Service) capabilities(res resolved) []string {
	caps := append(slices.Clone(s.cfg.Capabilities), res.tools...)
	slices.Sort(caps)
	return slices.Compact(caps)
}

// stageRows are the progress rows of a plan's stages, all pending.
func stageRows(campaignID string, p Plan) []store.CampaignStage {
	out := make([]store.CampaignStage, len(p.Stages))
	for i, st := range p.Stages {
		out[i] = store.CampaignStage{CampaignID: campaignID, Key: st.Key, Position: i, Status: StagePending}
	}
	return out
}

func defaultName(name *string, p Plan) string {
	if name != nil {
		return *name
	}
	if o := objective(p); o != nil {
		return firstLine(*o, 80)
	}
	return p.Stages[0].Title
}

// objective is the campaign's goal for review: the first stage's instruction.
func objective(p Plan) *string {
	if in := p.Stages[0].Instruction; in != nil {
		return ptr(*in)
	}
	return nil
}

func keyRef(keyID string) *string {
	if keyID == "" {
		return nil
	}
	return &keyID
}

// enqueueAdvance asks the dispatcher to move a campaign on, in the caller's transaction.
func (s *Service) enqueueAdvance(ctx context.Context, tx *store.Store, id string) error {
	_, err := s.queue.EnqueueTx(ctx, tx, advanceArgs{CampaignID: id}, advanceOpts())
	return err
}
