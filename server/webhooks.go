package server

import (
	"context"
	"errors"
	"time"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
)

// Webhooks beyond the specification (docs/api.md: Webhooks): the account's Standard Webhooks secret, a
// job's delivery log and redelivery. The rules live in jobs (webhook*.go).

// RotateWebhookSecret creates or rotates the caller's account webhook secret (201, shown once).
func (s *Server) RotateWebhookSecret(ctx context.Context, req gen.RotateWebhookSecretRequestObject) (gen.RotateWebhookSecretResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	grace := s.research.Config().WebhookSecretGrace
	if req.Body != nil && req.Body.GracePeriodSeconds != nil {
		grace = time.Duration(*req.Body.GracePeriodSeconds) * time.Second
	}
	r, err := s.research.RotateWebhookSecret(ctx, p.AccountID, grace)
	if err != nil {
		return nil, err
	}
	return gen.RotateWebhookSecret201JSONResponse(webhookSecretOf(r)), nil
}

// ListResearchWebhookDeliveries pages a job's delivery attempts, newest first.
func (s *Server) ListResearchWebhookDeliveries(ctx context.Context, req gen.ListResearchWebhookDeliveriesRequestObject) (gen.ListResearchWebhookDeliveriesResponseObject, error) {
	j, _, err := s.webhookJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.research.Deliveries(ctx, j.ID, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListResearchWebhookDeliveries200JSONResponse{Items: mapItems(page.Items, deliveryView), NextCursor: next, HasMore: more}, nil
}

// RedeliverResearchWebhook queues a new round of the job's latest webhook (202). The owner's key of
// this request signs X-Signature-SHA256; an administrator's does not (the receiver knows only the
// owner's keys).
func (s *Server) RedeliverResearchWebhook(ctx context.Context, req gen.RedeliverResearchWebhookRequestObject) (gen.RedeliverResearchWebhookResponseObject, error) {
	j, p, err := s.webhookJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	key := ""
	if p.AccountID == j.AccountID {
		key = p.Secret
	}
	m, err := s.research.Redeliver(ctx, j.ID, key)
	switch {
	case errors.Is(err, jobs.ErrNoWebhook):
		return nil, errConflict("no_webhook", err.Error())
	case errors.Is(err, jobs.ErrWebhookPending):
		return nil, errConflict("webhook_delivery_in_progress", err.Error())
	case err != nil:
		return nil, err
	}
	return gen.RedeliverResearchWebhook202JSONResponse(redeliveryOf(m)), nil
}

// webhookJob loads a job for its webhook operations: the owner or an administrator; for anyone
// else 404, public job or not, since the log shows the owner's webhook target.
func (s *Server) webhookJob(ctx context.Context, ref string) (jobs.Job, auth.Principal, error) {
	if _, err := caller(ctx); err != nil {
		return jobs.Job{}, auth.Principal{}, err
	}
	j, err := s.research.Job(ctx, ref)
	if err != nil {
		return j, auth.Principal{}, err
	}
	p, err := authorizeOwner(ctx, j.AccountID, false, "research job")
	return j, p, err
}
