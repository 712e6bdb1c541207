package jobs

import (
	"context"
	"errors"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// What the API reads of research jobs. The rows are the views: the server maps them to the API's
// models and never queries the store for them itself.
type (
	// Job is a research job as last written.
	Job = store.ResearchJob
	// View is a job with its runs and revisions, read from one snapshot.
	View = store.JobView
	// Event is one entry of a job's timeline, as stored (sanitized again when shown: SanitizeEvent).
	Event = store.ResearchEvent
	// Delivery is one webhook delivery attempt.
	Delivery = store.WebhookDelivery
	// Message is one webhook a run sent, with its latest round (what a redelivery queues).
	Message = store.WebhookMessage
	// Settings are the owner's settings of a job (PATCH): a nil field is left as it is.
	Settings = store.JobSettings
)

// APIv1 is the surface of jobs created through the v1 API.
const APIv1 = store.APIv1

// errJobNotFound is the refusal of a job that does not exist.
var errJobNotFound = fault.Missing("research job")

// View reads a job (by UUID or slug) with its runs and revisions.
func (s *Service) View(ctx context.Context, ref string) (View, error) {
	v, err := s.st.ResearchJobView(ctx, ref)
	return v, missingJob(err)
}

// Job reads a job by UUID or slug.
func (s *Service) Job(ctx context.Context, ref string) (Job, error) {
	j, err := s.st.ResearchJobByRef(ctx, ref)
	return j, missingJob(err)
}

// JobByID reads a job by UUID only (v1 knows no slugs).
func (s *Service) JobByID(ctx context.Context, id string) (Job, error) {
	j, err := s.st.ResearchJobByID(ctx, id)
	return j, missingJob(err)
}

func missingJob(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errJobNotFound
	}
	return err
}

// List pages an account's jobs, newest first, optionally of one status.
func (s *Service) List(ctx context.Context, accountID string, status *string, req store.PageRequest) (store.Page[Job], error) {
	return s.st.ListResearchJobs(ctx, accountID, status, req)
}

// Events pages a job's timeline, newest first.
func (s *Service) Events(ctx context.Context, jobID string, req store.PageRequest) (store.Page[Event], error) {
	return s.st.ListEvents(ctx, jobID, req)
}

// Deliveries pages a job's webhook delivery attempts, newest first.
func (s *Service) Deliveries(ctx context.Context, jobID string, req store.PageRequest) (store.Page[Delivery], error) {
	return s.st.ListDeliveries(ctx, jobID, req)
}

// AccountTier is an account's tier: the one whose clamps and credits apply when an administrator
// acts on the account's job.
func (s *Service) AccountTier(ctx context.Context, accountID string) (string, error) {
	a, err := s.st.AccountByID(ctx, accountID)
	return a.Tier, err
}
