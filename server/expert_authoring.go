package server

import (
	"context"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/ratelimit"
)

// Expert authoring: extract, generate-workflow and plan-preview work from the text
// given (package authoring); nothing is saved.

// defaultAuthoringRate bounds plan-preview and generate-workflow per caller (each operation has
// its own bucket).
var defaultAuthoringRate = ratelimit.Rate{N: 30, Per: time.Minute}

// ExtractExpert proposes a system prompt, SOP and output schema from pasted text.
func (s *Server) ExtractExpert(ctx context.Context, req gen.ExtractExpertRequestObject) (gen.ExtractExpertResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	x := s.author.Extract(ctx, req.Body.Text)
	return gen.ExtractExpert200JSONResponse{SystemPrompt: x.SystemPrompt,
		OutputSop: nullableMap(x.OutputSOP), OutputSchema: nullableMap(x.OutputSchema)}, nil
}

// GenerateExpertWorkflow authors and validates a workflow from an SOP.
func (s *Server) GenerateExpertWorkflow(ctx context.Context, req gen.GenerateExpertWorkflowRequestObject) (gen.GenerateExpertWorkflowResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if s.workflowAuthoringOff {
		return nil, newProblem(http.StatusNotFound, "not_found", "workflow authoring is disabled on this server")
	}
	if err := s.rateLimit(ctx, "generate-workflow:"+p.AccountID); err != nil {
		return nil, err
	}
	wf, errs := s.author.GenerateWorkflow(ctx, req.Body.Sop, mapOf(req.Body.SampleInput), mapOf(req.Body.OutputSchema))
	out := gen.GeneratedExpertWorkflow{Valid: len(errs) == 0 && wf != nil, Errors: fieldErrors(errs), Workflow: nullableMap(wf)}
	return gen.GenerateExpertWorkflow200JSONResponse(out), nil
}

// PreviewExpertPlan runs the planning phase of an expert the caller may run.
func (s *Server) PreviewExpertPlan(ctx context.Context, req gen.PreviewExpertPlanRequestObject) (gen.PreviewExpertPlanResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.experts.Get(ctx, c, req.ExpertId)
	if err != nil {
		return nil, err
	}
	if e.ArchivedAt != nil {
		return nil, expert.ErrArchived
	}
	if err := s.rateLimit(ctx, "plan-preview:"+c.AccountID); err != nil {
		return nil, err
	}
	in := authoring.PlanInput{Question: req.Body.Question, SystemPrompt: e.SystemPrompt, SOP: e.OutputSOP,
		Workflow: e.PinnedWorkflow, OutputSchema: e.OutputSchema}
	if c := valueOf(req.Body.Context); c != nil {
		in.Context = *c
	}
	steps, subs := s.author.Plan(ctx, in)
	plan := gen.PlanPreview{Steps: make([]gen.PlanPreviewStep, 0, len(steps))}
	for _, st := range steps {
		plan.Steps = append(plan.Steps, gen.PlanPreviewStep{Title: st.Title, Detail: st.Detail})
	}
	return gen.PreviewExpertPlan200JSONResponse{ExpertId: e.ID, Question: req.Body.Question, Plan: plan, SubQuestions: subs}, nil
}

// rateLimit takes a token from the caller's bucket for an operation, or answers 429 rate_limited
// with Retry-After.
func (s *Server) rateLimit(ctx context.Context, key string) error {
	d, err := s.limiter.Allow(ctx, key, s.authoringRate)
	if err != nil {
		return err
	}
	if d.Allowed {
		return nil
	}
	return rateLimited(d, "at most "+s.authoringRate.String())
}

func nullableMap(m map[string]any) nullable.Nullable[map[string]any] {
	if m == nil {
		return nullable.NewNullNullable[map[string]any]()
	}
	return nullable.NewNullableWithValue(m)
}

func fieldErrors(errs []authoring.FieldError) []gen.FieldError {
	out := make([]gen.FieldError, 0, len(errs))
	for _, e := range errs {
		out = append(out, gen.FieldError{Field: e.Field, Message: e.Message})
	}
	return out
}

func mapOf(n nullable.Nullable[map[string]any]) map[string]any {
	if v := valueOf(n); v != nil {
		return *v
	}
	return nil
}

// ValidateExpert runs the document's checks and every persistence-side check of a create (or, with
// expert_id, of an update against the merged state) and reports them all; nothing is saved.
func (s *Server) ValidateExpert(ctx context.Context, req gen.ValidateExpertRequestObject) (gen.ValidateExpertResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	ref := valueOf(req.Body.ExpertId)
	schemaName := "CreateExpertV2Request"
	if ref != nil {
		schemaName = "UpdateExpertRequest"
	}
	fields := []gen.FieldError{}
	if err := s.doc.Components.Schemas[schemaName].Value.VisitJSON(req.Body.Expert, openapi3.MultiErrors()); err != nil {
		collectSchemaErrors("body", err, &fields)
		for i := range fields {
			if fields[i].Field == "body" {
				fields[i].Field = "expert"
			}
		}
	}
	var errs, warns []fault.Field
	if ref != nil && len(fields) > 0 {
		// The target's access rules apply whatever the body: a stranger learns nothing.
		if _, _, err := s.experts.CheckUpdate(ctx, c, *ref, expert.Patch{}); err != nil {
			return nil, err
		}
	}
	if len(fields) == 0 {
		if ref != nil {
			p, err := decodeBody[expert.Patch](req.Body.Expert)
			if err != nil {
				return nil, err
			}
			errs, warns, err = s.experts.CheckUpdate(ctx, c, *ref, p)
			if err != nil {
				return nil, err
			}
		} else {
			in, err := decodeBody[expert.CreateInput](req.Body.Expert)
			if err != nil {
				return nil, err
			}
			if errs, warns, err = s.experts.CheckCreate(ctx, c, in); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range errs {
		fields = append(fields, gen.FieldError{Field: e.Field, Message: e.Message})
	}
	out := gen.ExpertValidateResponse{Ok: len(fields) == 0, Errors: fields, Warnings: make([]gen.FieldError, 0, len(warns))}
	for _, w := range warns {
		out.Warnings = append(out.Warnings, gen.FieldError{Field: w.Field, Message: w.Message})
	}
	return gen.ValidateExpert200JSONResponse(out), nil
}

// ApplyExpertManifest converges one expert to a declarative manifest (create, update or noop);
// with dry_run it only says what it would do.
func (s *Server) ApplyExpertManifest(ctx context.Context, req gen.ApplyExpertManifestRequestObject) (gen.ApplyExpertManifestResponseObject, error) {
	c, err := s.expertCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := expert.ApplyInput{ExpertRef: valueOf(req.Body.ExpertId), Manifest: createInputOf(req.Body.Manifest),
		DryRun: req.Body.DryRun != nil && *req.Body.DryRun, Prune: req.Body.PruneContextFiles == nil || *req.Body.PruneContextFiles}
	a, err := s.experts.Apply(ctx, c, in)
	if f := fault.Of(err); f != nil && f.Kind == fault.Invalid {
		// The domain names fields of the manifest; the body nests it.
		fields := make([]fault.Field, len(f.Fields))
		for i, x := range f.Fields {
			fields[i] = fault.Field{Field: "manifest/" + x.Field, Message: x.Message}
		}
		return nil, expert.Invalid(fields...)
	}
	if err != nil {
		return nil, err
	}
	out, err := appliedOf(a)
	if err != nil {
		return nil, err
	}
	return gen.ApplyExpertManifest200JSONResponse(out), nil
}
