package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/revision"
)

// Research jobs: thin handlers over jobs.Service (state machine, queue, reads); map_research.go
// maps its views to the API's models. /run and /run/{id} are aliases of /research and /research/{id}.

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
	v := jobs.View{Job: c.Job}
	if c.Replayed {
		if v, err = s.research.View(ctx, c.Job.ID); err != nil {
			return gen.ResearchJobDetail{}, "", err
		}
	}
	detail, err := jobDetail(v, true)
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
	page, err := s.research.List(ctx, p.AccountID, st, pr)
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
	v, err := s.research.View(ctx, ref)
	if err != nil {
		return gen.ResearchJobDetail{}, err
	}
	privileged, err := mayRead(ctx, v.Job)
	if err != nil {
		return gen.ResearchJobDetail{}, err
	}
	d, err := jobDetail(v, privileged)
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
	set := jobs.Settings{IsPublic: b.IsPublic, AnonymousCTAEnabled: b.AnonymousCtaEnabled}
	if b.AnonymousCtaVariant.IsSpecified() {
		if b.AnonymousCtaVariant.IsNull() {
			set.ClearCTAVariant = true
		} else {
			set.AnonymousCTAVariant = ptr(b.AnonymousCtaVariant.MustGet())
		}
	}
	if b.AnonymousCta.IsSpecified() {
		// The document bounds every field (validateRequests); the object is stored whole.
		set.ClearCTA = b.AnonymousCta.IsNull()
		if !set.ClearCTA {
			raw, err := json.Marshal(b.AnonymousCta.MustGet())
			if err != nil {
				return nil, fmt.Errorf("encode anonymous_cta: %w", err)
			}
			set.AnonymousCTA = ptr(string(raw))
		}
	}
	if set.Empty() {
		return nil, errValidation("send at least one field to change", gen.FieldError{Field: "body", Message: "no fields"})
	}
	v, err := s.research.Update(ctx, j.ID, set)
	if err != nil {
		return nil, err
	}
	d, err := jobDetail(v, true)
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
	return gen.CancelResearchJob200JSONResponse(cancelledOf(j)), nil
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
		ownerTier, err := s.research.AccountTier(ctx, j.AccountID)
		if err != nil {
			return nil, err
		}
		tier, key = ownerTier, ""
	}
	v, err := s.research.Continue(ctx, j.ID, tier, key)
	if err != nil {
		return nil, err
	}
	d, err := jobDetail(v, true)
	if err != nil {
		return nil, err
	}
	return gen.ContinueResearchJob202JSONResponse(d), nil
}

// readableJob loads a job for reading: the owner and administrators (privileged), anyone for a
// public job; otherwise 404. A key without the research scope reads public jobs only and is
// refused (403) on its own private ones.
func (s *Server) readableJob(ctx context.Context, ref string) (jobs.Job, bool, error) {
	j, err := s.research.Job(ctx, ref)
	if err != nil {
		return j, false, err
	}
	privileged, err := mayRead(ctx, j)
	return j, privileged, err
}

// mayRead applies the read rule to a loaded job and reports whether the caller is privileged.
func mayRead(ctx context.Context, j jobs.Job) (bool, error) {
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
func (s *Server) ownedJob(ctx context.Context, ref string) (jobs.Job, auth.Principal, error) {
	if _, err := caller(ctx); err != nil {
		return jobs.Job{}, auth.Principal{}, err
	}
	j, err := s.research.Job(ctx, ref)
	if err != nil {
		return j, auth.Principal{}, err
	}
	p, err := authorizeOwner(ctx, j.AccountID, false, "research job")
	if err != nil && j.IsPublic {
		return j, p, errForbidden("forbidden", "only the job's owner or an administrator may change it")
	}
	return j, p, err
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
func (s *Server) resolveRevision(ctx context.Context, jobID, rev string) (revision.Revision, error) {
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
