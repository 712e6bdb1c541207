package server

import (
	"context"
	"strconv"

	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
)

// Loops: thin handlers over loop.Service, which owns schedules, firing and the run
// diff; map_loops.go maps its views to the API's models.

// LoopRunBatch renders a run's batch for run-now's 202 (the batch service's BatchDetail).
type LoopRunBatch func(ctx context.Context, accountID, batchID string) (gen.BatchDetail, error)

func (s *Server) loopCaller(ctx context.Context) (string, error) {
	p, err := caller(ctx)
	if err != nil {
		return "", err
	}
	return p.AccountID, nil
}

// ListLoops pages the caller's loops, newest first.
func (s *Server) ListLoops(ctx context.Context, req gen.ListLoopsRequestObject) (gen.ListLoopsResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.loops.List(ctx, acct, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListLoops200JSONResponse{Items: mapItems(page.Items, loopSummary), NextCursor: next, HasMore: more}, nil
}

// CreateLoop creates an active loop (no run starts until next_run_at).
func (s *Server) CreateLoop(ctx context.Context, req gen.CreateLoopRequestObject) (gen.CreateLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	in := loop.CreateInput{AccountID: acct, Name: b.BatchName, Schedule: scheduleInput(b.Schedule)}
	in.Config = loop.Config{
		Questions: b.Questions, Effort: effortOf(b.Effort), ExpertID: valueOf(b.ExpertId), Approach: valueOf(b.Approach),
		CustomJSONSchema: *orNil(valueOf(b.CustomJsonSchema)), Inputs: inputsOf(b.Inputs), Rows: *orNil(valueOf(b.Rows)),
	}
	if b.ResponseLanguage != nil {
		in.Config.ResponseLanguage = *b.ResponseLanguage
	}
	if v := valueOf(b.MaxConcurrent); v != nil {
		in.Config.MaxConcurrent = *v
	}
	if v := valueOf(b.MaxCredits); v != nil {
		in.Config.MaxCredits = ptr(int64(*v))
	}
	if in.IdempotencyKey, in.RequestHash, err = idempotencyOf(req.Params.IdempotencyKey, b); err != nil {
		return nil, err
	}
	l, _, err := s.loops.Create(ctx, in)
	if err != nil {
		return nil, err
	}
	d, err := s.loops.Get(ctx, acct, l.ID)
	if err != nil {
		return nil, err
	}
	return gen.CreateLoop201JSONResponse(loopDetail(d)), nil
}

// GetLoop reads a loop (deleted ones too) with its 50 latest runs.
func (s *Server) GetLoop(ctx context.Context, req gen.GetLoopRequestObject) (gen.GetLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.loops.Get(ctx, acct, req.ScheduleId.String())
	if err != nil {
		return nil, err
	}
	return gen.GetLoop200JSONResponse(loopDetail(d)), nil
}

// UpdateLoop changes a loop's name, configuration or schedule.
func (s *Server) UpdateLoop(ctx context.Context, req gen.UpdateLoopRequestObject) (gen.UpdateLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	b := *req.Body
	in := loop.UpdateInput{Name: b.BatchName}
	if b.Schedule != nil {
		in.Schedule = ptr(scheduleInput(*b.Schedule))
	}
	if b.Questions != nil || b.Effort.IsSpecified() || b.ExpertId.IsSpecified() || b.Approach.IsSpecified() ||
		b.ResponseLanguage != nil || b.MaxConcurrent.IsSpecified() || b.MaxCredits.IsSpecified() ||
		b.CustomJsonSchema.IsSpecified() || b.Inputs.IsSpecified() || b.Rows.IsSpecified() {
		in.Merge = func(c *loop.Config) { mergeLoopConfig(c, b) }
	}
	d, err := s.loops.Update(ctx, acct, req.ScheduleId.String(), in)
	if err != nil {
		return nil, err
	}
	return gen.UpdateLoop200JSONResponse(loopDetail(d)), nil
}

// mergeLoopConfig applies a PATCH: omitted fields stay, explicit null restores the default,
// arrays replace.
func mergeLoopConfig(c *loop.Config, b gen.UpdateLoopRequest) {
	if b.Questions != nil {
		c.Questions = *b.Questions
	}
	if b.Effort.IsSpecified() {
		c.Effort = effortOf(b.Effort)
	}
	if b.ExpertId.IsSpecified() {
		c.ExpertID = valueOf(b.ExpertId)
	}
	if b.Approach.IsSpecified() {
		c.Approach = valueOf(b.Approach)
	}
	if b.ResponseLanguage != nil {
		c.ResponseLanguage = *b.ResponseLanguage
	}
	if b.MaxConcurrent.IsSpecified() {
		c.MaxConcurrent = 0 // the default, unless a value follows
		if v := valueOf(b.MaxConcurrent); v != nil {
			c.MaxConcurrent = *v
		}
	}
	if b.MaxCredits.IsSpecified() {
		c.MaxCredits = nil
		if v := valueOf(b.MaxCredits); v != nil {
			c.MaxCredits = ptr(int64(*v))
		}
	}
	if b.CustomJsonSchema.IsSpecified() {
		c.CustomJSONSchema = *orNil(valueOf(b.CustomJsonSchema))
	}
	if b.Inputs.IsSpecified() {
		c.Inputs = inputsOf(b.Inputs)
	}
	if b.Rows.IsSpecified() {
		c.Rows = *orNil(valueOf(b.Rows))
	}
}

// DeleteLoop soft-deletes a loop.
func (s *Server) DeleteLoop(ctx context.Context, req gen.DeleteLoopRequestObject) (gen.DeleteLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.loops.Delete(ctx, acct, req.ScheduleId.String()); err != nil {
		return nil, err
	}
	return gen.DeleteLoop204Response{}, nil
}

// PauseLoop stops a loop firing.
func (s *Server) PauseLoop(ctx context.Context, req gen.PauseLoopRequestObject) (gen.PauseLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.loops.Pause(ctx, acct, req.ScheduleId.String())
	if err != nil {
		return nil, err
	}
	return gen.PauseLoop200JSONResponse(loopSummary(l)), nil
}

// ResumeLoop re-activates a loop from now.
func (s *Server) ResumeLoop(ctx context.Context, req gen.ResumeLoopRequestObject) (gen.ResumeLoopResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.loops.Resume(ctx, acct, req.ScheduleId.String())
	if err != nil {
		return nil, err
	}
	return gen.ResumeLoop200JSONResponse(loopSummary(l)), nil
}

// RunLoopNow starts a run at once (409 loop_run_active while one runs, 402 without credits).
func (s *Server) RunLoopNow(ctx context.Context, req gen.RunLoopNowRequestObject) (gen.RunLoopNowResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	batchID, _, err := s.loops.RunNow(ctx, acct, req.ScheduleId.String())
	if err != nil {
		return nil, err
	}
	b, err := s.loopRunBatch(ctx, acct, batchID)
	if err != nil {
		return nil, err
	}
	return gen.RunLoopNow202JSONResponse(b), nil
}

// GetLoopRunDiff compares a run with the previous one, question by question.
func (s *Server) GetLoopRunDiff(ctx context.Context, req gen.GetLoopRunDiffRequestObject) (gen.GetLoopRunDiffResponseObject, error) {
	acct, err := s.loopCaller(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.loops.Diff(ctx, acct, req.ScheduleId.String(), req.RunNumber)
	if err != nil {
		return nil, err
	}
	return gen.GetLoopRunDiff200JSONResponse(runDiffOf(d)), nil
}

func scheduleInput(in gen.BatchScheduleInput) loop.ScheduleInput {
	out := loop.ScheduleInput{Frequency: string(in.Frequency), Timezone: valueOf(in.Timezone)}
	if c := in.ScheduleConfig; c != nil {
		out.Hour, out.Minute, out.DayOfMonth = c.Hour, c.Minute, c.DayOfMonth
		if c.DayOfWeek != nil {
			if n, err := c.DayOfWeek.AsScheduleConfigDayOfWeek0(); err == nil {
				out.DayOfWeek = ptr(strconv.Itoa(n))
			} else if name, err := c.DayOfWeek.AsDayName(); err == nil {
				out.DayOfWeek = ptr(string(name))
			} else {
				out.DayOfWeek = ptr("") // refused by ParseSchedule, naming the field
			}
		}
	}
	return out
}

func effortOf(e nullable.Nullable[gen.Effort]) *string {
	if v := valueOf(e); v != nil {
		return ptr(string(*v))
	}
	return nil
}

func inputsOf(in nullable.Nullable[[]nullable.Nullable[map[string]any]]) []map[string]any {
	v := valueOf(in)
	if v == nil {
		return nil
	}
	out := make([]map[string]any, len(*v))
	for i, x := range *v {
		if m := valueOf(x); m != nil {
			out[i] = *m
		}
	}
	return out
}

// orNil turns a nil pointer into a pointer to the zero value (a nil map or slice).
func orNil[T any](v *T) *T {
	if v == nil {
		return new(T)
	}
	return v
}
