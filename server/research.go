package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/revision"
	"github.com/researchd/researchd/store"
)

// Research jobs: thin handlers over jobs.Service (state machine, queue) and the store
// (reads). /run and /run/{id} are aliases of /research and /research/{id}.

// CreateResearchJob accepts a job (202) or replays an Idempotency-Key.
func (s *Server) CreateResearchJob(ctx context.Context, req gen.CreateResearchJobRequestObject) (gen.CreateResearchJobResponseObject, error) {
	body, loc, err := s.createJob(ctx, req.Body, req.Params.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	return gen.CreateResearchJob202JSONResponse{Body: body, Headers: gen.CreateResearchJob202ResponseHeaders{Location: &loc}}, nil
}

// CreateRun is POST /run, the alias of POST /research.
func (s *Server) CreateRun(ctx context.Context, req gen.CreateRunRequestObject) (gen.CreateRunResponseObject, error) {
	body, loc, err := s.createJob(ctx, req.Body, req.Params.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	return gen.CreateRun202JSONResponse{Body: body, Headers: gen.CreateRun202ResponseHeaders{Location: &loc}}, nil
}

func (s *Server) createJob(ctx context.Context, b *gen.CreateResearchRequest, idemKey *string) (gen.ResearchJobDetail, string, error) {
	p, err := caller(ctx)
	if err != nil {
		return gen.ResearchJobDetail{}, "", err
	}
	hash, err := requestHash(b)
	if err != nil {
		return gen.ResearchJobDetail{}, "", err
	}
	r := jobs.CreateRequest{
		AccountID: p.AccountID, Tier: p.Tier, APIKey: p.Secret, Question: b.Question,
		RequestHash: hash, RequestID: requestID(ctx),
	}
	if b.Effort != nil {
		r.Effort = string(*b.Effort)
	}
	if v := valueOf(b.JsonSchema); v != nil {
		r.JSONSchema = *v
	}
	r.WebhookURL, r.ExpertID = valueOf(b.WebhookUrl), valueOf(b.ExpertId)
	if b.AttachmentIds != nil {
		for _, id := range *b.AttachmentIds {
			r.AttachmentIDs = append(r.AttachmentIDs, id.String())
		}
	}
	if b.IsPublic != nil {
		r.IsPublic = *b.IsPublic
	}
	if idemKey != nil {
		r.IdempotencyKey = *idemKey
	}
	c, err := s.research.Create(ctx, r)
	if err != nil {
		return gen.ResearchJobDetail{}, "", err
	}
	// A new job is answered as accepted (no runs, no revisions yet), even if a worker already took
	// it; a replay answers the job as it stands now.
	v := store.JobView{Job: c.Job}
	if c.Replayed {
		if v, err = s.store.ResearchJobView(ctx, c.Job.ID); err != nil {
			return gen.ResearchJobDetail{}, "", err
		}
	}
	detail, err := s.jobDetail(v, true)
	if err != nil {
		return gen.ResearchJobDetail{}, "", err
	}
	return detail, "/api/v2/research/" + c.Job.ID, nil
}

// ListResearchJobs pages the caller's jobs.
func (s *Server) ListResearchJobs(ctx context.Context, req gen.ListResearchJobsRequestObject) (gen.ListResearchJobsResponseObject, error) {
	page, err := s.listJobs(ctx, req.Params.Limit, req.Params.Cursor, req.Params.Status)
	if err != nil {
		return nil, err
	}
	return gen.ListResearchJobs200JSONResponse(page), nil
}

// ListRuns is GET /run, the alias of GET /research.
func (s *Server) ListRuns(ctx context.Context, req gen.ListRunsRequestObject) (gen.ListRunsResponseObject, error) {
	page, err := s.listJobs(ctx, req.Params.Limit, req.Params.Cursor, req.Params.Status)
	if err != nil {
		return nil, err
	}
	return gen.ListRuns200JSONResponse(page), nil
}

func (s *Server) listJobs(ctx context.Context, limit *int, cursor *string, status *gen.JobStatus) (gen.ResearchJobSummaryPage, error) {
	p, err := caller(ctx)
	if err != nil {
		return gen.ResearchJobSummaryPage{}, err
	}
	pr, err := pageRequest(limit, cursor)
	if err != nil {
		return gen.ResearchJobSummaryPage{}, err
	}
	var st *string
	if status != nil {
		st = ptr(string(*status))
	}
	page, err := s.store.ListResearchJobs(ctx, p.AccountID, st, pr)
	if err != nil {
		return gen.ResearchJobSummaryPage{}, err
	}
	next, more := pageEnvelope(page)
	return gen.ResearchJobSummaryPage{Items: mapItems(page.Items, jobSummary), NextCursor: next, HasMore: more}, nil
}

// GetResearchJob reads a job (public jobs without authentication).
func (s *Server) GetResearchJob(ctx context.Context, req gen.GetResearchJobRequestObject) (gen.GetResearchJobResponseObject, error) {
	d, err := s.readJob(ctx, req.JobIdOrSlug, req.Params.Revision)
	if err != nil {
		return nil, err
	}
	return gen.GetResearchJob200JSONResponse(d), nil
}

// GetRun is GET /run/{job_id_or_slug}, the alias of GET /research/{job_id_or_slug}.
func (s *Server) GetRun(ctx context.Context, req gen.GetRunRequestObject) (gen.GetRunResponseObject, error) {
	d, err := s.readJob(ctx, req.JobIdOrSlug, req.Params.Revision)
	if err != nil {
		return nil, err
	}
	return gen.GetRun200JSONResponse(d), nil
}

func (s *Server) readJob(ctx context.Context, ref string, at *string) (gen.ResearchJobDetail, error) {
	v, err := s.store.ResearchJobView(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return gen.ResearchJobDetail{}, errNotFound("research job")
	}
	if err != nil {
		return gen.ResearchJobDetail{}, err
	}
	privileged, err := mayRead(ctx, v.Job)
	if err != nil {
		return gen.ResearchJobDetail{}, err
	}
	d, err := s.jobDetail(v, privileged)
	if err != nil || at == nil {
		return d, err
	}
	return d, s.reportAt(ctx, &d, v.Job.ID, *at)
}

// UpdateResearchJob changes is_public and the call-to-action settings (owner or admin).
func (s *Server) UpdateResearchJob(ctx context.Context, req gen.UpdateResearchJobRequestObject) (gen.UpdateResearchJobResponseObject, error) {
	j, _, err := s.ownedJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	set := map[string]any{}
	if b.IsPublic != nil {
		set["is_public"] = *b.IsPublic
	}
	if b.AnonymousCtaEnabled != nil {
		set["anonymous_cta_enabled"] = *b.AnonymousCtaEnabled
	}
	if b.AnonymousCtaVariant.IsSpecified() {
		if b.AnonymousCtaVariant.IsNull() {
			set["anonymous_cta_variant"] = nil
		} else {
			set["anonymous_cta_variant"] = b.AnonymousCtaVariant.MustGet()
		}
	}
	if b.AnonymousCta.IsSpecified() {
		// The document bounds every field (validateRequests); the object is stored whole.
		set["anonymous_cta"] = nil
		if !b.AnonymousCta.IsNull() {
			raw, err := json.Marshal(b.AnonymousCta.MustGet())
			if err != nil {
				return nil, fmt.Errorf("encode anonymous_cta: %w", err)
			}
			set["anonymous_cta"] = string(raw)
		}
	}
	if len(set) == 0 {
		return nil, errValidation("send at least one field to change", gen.FieldError{Field: "body", Message: "no fields"})
	}
	v, err := s.research.Update(ctx, j.ID, set)
	if err != nil {
		return nil, err
	}
	d, err := s.jobDetail(v, true)
	if err != nil {
		return nil, err
	}
	return gen.UpdateResearchJob200JSONResponse(d), nil
}

// CancelResearchJob cancels an active job; a terminal job is returned unchanged.
func (s *Server) CancelResearchJob(ctx context.Context, req gen.CancelResearchJobRequestObject) (gen.CancelResearchJobResponseObject, error) {
	j, _, err := s.ownedJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	j, err = s.research.Cancel(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	return gen.CancelResearchJob200JSONResponse{JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status)}, nil
}

// ContinueResearchJob continues a completed job in place (202).
func (s *Server) ContinueResearchJob(ctx context.Context, req gen.ContinueResearchJobRequestObject) (gen.ContinueResearchJobResponseObject, error) {
	j, p, err := s.ownedJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	// The owner's key re-signs the webhooks. An administrator continuing someone else's job passes
	// none (the owner's key was deleted once the last webhook was final, so that run's webhook
	// carries no X-Signature-SHA256, only the Standard Webhooks signature), and the owner's tier
	// and credits apply.
	tier, key := p.Tier, p.Secret
	if p.AccountID != j.AccountID {
		owner, err := s.store.AccountByID(ctx, j.AccountID)
		if err != nil {
			return nil, err
		}
		tier, key = owner.Tier, ""
	}
	v, err := s.research.Continue(ctx, j.ID, tier, key)
	if err != nil {
		return nil, err
	}
	d, err := s.jobDetail(v, true)
	if err != nil {
		return nil, err
	}
	return gen.ContinueResearchJob202JSONResponse(d), nil
}

// jobByRef loads a job by UUID or slug; a missing one is the 404 problem.
func (s *Server) jobByRef(ctx context.Context, ref string) (store.ResearchJob, error) {
	j, err := s.store.ResearchJobByRef(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return j, errNotFound("research job")
	}
	return j, err
}

// readableJob loads a job for reading: the owner and administrators (privileged), anyone for a
// public job; otherwise 404. A key without the research scope reads public jobs only and is
// refused (403) on its own private ones.
func (s *Server) readableJob(ctx context.Context, ref string) (store.ResearchJob, bool, error) {
	j, err := s.jobByRef(ctx, ref)
	if err != nil {
		return j, false, err
	}
	privileged, err := mayRead(ctx, j)
	return j, privileged, err
}

// mayRead applies the read rule to a loaded job and reports whether the caller is privileged.
func mayRead(ctx context.Context, j store.ResearchJob) (bool, error) {
	if lp, ok := scopelessCaller(ctx); ok && !j.IsPublic && (lp.AccountID == j.AccountID || lp.IsAdmin) {
		return false, errForbidden("forbidden", "this API key lacks the research scope")
	}
	p, err := authorizeOwner(ctx, j.AccountID, j.IsPublic, "research job")
	if err != nil {
		return false, err
	}
	return p.AccountID == j.AccountID || p.IsAdmin, nil
}

// ownedJob loads a job for a change: owner or administrator (authorizeOwner, never public for a
// change); another account's public job is 403, since it can be seen anyway, a private one 404.
func (s *Server) ownedJob(ctx context.Context, ref string) (store.ResearchJob, auth.Principal, error) {
	if _, err := caller(ctx); err != nil {
		return store.ResearchJob{}, auth.Principal{}, err
	}
	j, err := s.jobByRef(ctx, ref)
	if err != nil {
		return j, auth.Principal{}, err
	}
	p, err := authorizeOwner(ctx, j.AccountID, false, "research job")
	if err != nil && j.IsPublic {
		return j, p, errForbidden("forbidden", "only the job's owner or an administrator may change it")
	}
	return j, p, err
}

// jobDetail assembles the detail of a job from one snapshot, with its latest report. privileged
// readers (owner, administrators) see the webhook URL.
func (s *Server) jobDetail(v store.JobView, privileged bool) (gen.ResearchJobDetail, error) {
	j, runs, revs := v.Job, v.Runs, v.Revisions
	var echo jobs.RequestEcho
	if err := json.Unmarshal([]byte(j.Request), &echo); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	var attIDs []string
	if err := json.Unmarshal([]byte(j.AttachmentIDs), &attIDs); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	d := gen.ResearchJobDetail{
		JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status), Question: j.Question,
		Effort: gen.Effort(j.Effort), RequestedEffort: gen.Effort(j.RequestedEffort), IsPublic: j.IsPublic,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, StartedAt: nullableOf(j.StartedAt), CompletedAt: nullableOf(j.CompletedAt),
		StructuredOutput: nullable.NewNullNullable[map[string]any](),
		Revisions:        make([]gen.Revision, 0, len(revs)), Runs: make([]gen.CheckResult, 0, len(runs)),
		Locked: j.Locked, ExpertId: nullableOf(j.ExpertID), WebhookUrl: nullable.NewNullNullable[string](),
		AttachmentIds: uuids(attIDs), AnonymousCtaEnabled: j.AnonymousCTAEnabled, AnonymousCtaVariant: nullableOf(j.AnonymousCTAVariant),
		Request: gen.ResearchRequestEcho{
			Question: echo.Question, Effort: gen.Effort(echo.Effort), JsonSchema: nullable.NewNullNullable[map[string]any](),
			WebhookUrl: nullable.NewNullNullable[string](), ExpertId: nullableOf(echo.ExpertID),
			AttachmentIds: uuids(echo.AttachmentIDs), IsPublic: echo.IsPublic,
		},
	}
	if j.AnonymousCTA != nil {
		var cta gen.AnonymousCta
		if err := json.Unmarshal([]byte(*j.AnonymousCTA), &cta); err != nil {
			return gen.ResearchJobDetail{}, fmt.Errorf("decode anonymous_cta of job %s: %w", j.ID, err)
		}
		d.AnonymousCta = nullable.NewNullableWithValue(cta)
	} else {
		d.AnonymousCta = nullable.NewNullNullable[gen.AnonymousCta]()
	}
	if echo.JSONSchema != nil {
		d.Request.JsonSchema = nullable.NewNullableWithValue(echo.JSONSchema)
	}
	if privileged && j.WebhookURL != nil {
		d.WebhookUrl = nullable.NewNullableWithValue(*j.WebhookURL)
		d.Request.WebhookUrl = nullableOf(echo.WebhookURL)
	}
	if j.StructuredOutput != nil {
		var so map[string]any
		if err := json.Unmarshal([]byte(*j.StructuredOutput), &so); err != nil {
			return gen.ResearchJobDetail{}, err
		}
		d.StructuredOutput = nullable.NewNullableWithValue(so)
	}
	if j.ErrorCode != nil {
		msg := ""
		if j.ErrorMessage != nil {
			msg = *j.ErrorMessage
		}
		d.Error = nullable.NewNullableWithValue(gen.JobError{Code: *j.ErrorCode, Message: msg})
	}
	if err := expertOfJob(&d, j); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	if err := citationsOfJob(&d, j); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	var credits int64
	for _, r := range runs {
		credits += r.CreditsCharged
		d.Runs = append(d.Runs, gen.CheckResult{
			RunId: uuid.MustParse(r.ID), Kind: gen.CheckResultKind(r.Kind), Status: gen.CheckResultStatus(r.Status),
			Effort: gen.Effort(r.Effort), StartedAt: r.StartedAt, FinishedAt: nullableOf(r.FinishedAt), CreditsCharged: int(r.CreditsCharged),
		})
	}
	d.CreditsCharged = int(credits)
	for _, r := range revs {
		d.Revisions = append(d.Revisions, gen.Revision{
			CommitSha: r.SHA, CheckpointType: gen.RevisionCheckpointType(r.CheckpointType), CreatedAt: r.CreatedAt,
			RunId: uuid.MustParse(r.RunID), Message: r.Message,
		})
	}
	if j.ReportSHA != nil && j.ReportMarkdown != nil {
		d.Report = &gen.Report{Markdown: *j.ReportMarkdown, RevisionSha: *j.ReportSHA}
	}
	return d, nil
}

// reportAt replaces the detail's report with report.md as it was at the revision (none when that
// revision has no report.md), read from the published revision: any process can answer it.
func (s *Server) reportAt(ctx context.Context, d *gen.ResearchJobDetail, jobID, at string) error {
	rev, err := s.resolveRevision(ctx, jobID, at)
	if err != nil {
		return err
	}
	d.Report = nil
	md, _, err := s.research.Revisions().ReadFile(ctx, rev, engine.ReportPath)
	switch {
	case errors.Is(err, revision.ErrNoFile):
		return nil
	case errors.Is(err, revision.ErrUnavailable):
		return errNotFound("revision")
	case err != nil:
		return err
	}
	d.Report = &gen.Report{Markdown: string(md), RevisionSha: rev.SHA}
	return nil
}

// resolveRevision finds one of the job's published revisions: unknown is 404, ambiguous 422.
func (s *Server) resolveRevision(ctx context.Context, jobID, rev string) (store.ResearchRevision, error) {
	r, err := s.research.Revisions().Resolve(ctx, jobID, rev)
	switch {
	case errors.Is(err, revision.ErrUnknown):
		return r, errNotFound("revision")
	case errors.Is(err, revision.ErrAmbiguous):
		return r, errValidation("revision "+rev+" matches more than one commit; give more characters",
			gen.FieldError{Field: "query.revision", Message: "ambiguous revision"})
	}
	return r, err
}

func jobSummary(j store.ResearchJob) gen.ResearchJobSummary {
	return gen.ResearchJobSummary{
		JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status), Question: j.Question,
		Effort: gen.Effort(j.Effort), RequestedEffort: gen.Effort(j.RequestedEffort), IsPublic: j.IsPublic,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, StartedAt: nullableOf(j.StartedAt), CompletedAt: nullableOf(j.CompletedAt),
	}
}

func uuids(ids []string) []openapi_types.UUID {
	out := make([]openapi_types.UUID, 0, len(ids))
	for _, id := range ids {
		if u, err := uuid.Parse(id); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// expertOfJob fills the detail's expert (canonical id and the version that ran) and the last run's
// required-tool outcome; both null when the job has none.
func expertOfJob(d *gen.ResearchJobDetail, j store.ResearchJob) error {
	d.Expert = nullable.NewNullNullable[gen.JobExpert]()
	if j.ExpertRef != nil {
		e := gen.JobExpert{Id: *j.ExpertRef, Version: nullableOf(j.ExpertVersion)}
		d.Expert = nullable.NewNullableWithValue(e)
	}
	d.RequiredToolCalls = nullable.NewNullNullable[gen.RequiredToolCallsOutcome]()
	if j.RequiredToolCalls != nil {
		var o jobs.RequiredToolCalls
		if err := json.Unmarshal([]byte(*j.RequiredToolCalls), &o); err != nil {
			return fmt.Errorf("decode required tool calls of job %s: %w", j.ID, err)
		}
		d.RequiredToolCalls = nullable.NewNullableWithValue(gen.RequiredToolCallsOutcome{Required: o.Required, Succeeded: o.Succeeded, Missing: o.Missing})
	}
	return nil
}
