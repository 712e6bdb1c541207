package expert

import (
	"context"
	"errors"
	"fmt"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// Runner adapts the service to jobs.Experts: it resolves an expert_id of POST /research.
type Runner struct{ svc *Service }

var _ jobs.Experts = Runner{}

// Runner returns the jobs seam of the service.
func (s *Service) Runner() Runner { return Runner{svc: s} }

// Resolve finds the expert accountID may run by registry id, UUID, slug or handle: built-in
// experts, and active, unarchived custom experts it owns, is granted, or that are public.
// Drafts (building) and archived experts are not runnable: jobs.ErrExpertNotFound.
func (r Runner) Resolve(ctx context.Context, accountID, id string) (jobs.Expert, error) {
	s := r.svc
	if b, ok := s.registry.Get(id); ok {
		return jobs.Expert{OutputSchema: b.OutputSchema}, nil
	}
	a, err := s.st.AccountByID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return jobs.Expert{}, fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return jobs.Expert{}, err
	}
	t, err := s.find(ctx, Caller{AccountID: a.ID, Email: a.Email, IsAdmin: a.IsAdmin}, id)
	if errors.Is(err, ErrNotFound) {
		return jobs.Expert{}, fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return jobs.Expert{}, err
	}
	if t.row.ArchivedAt != nil || t.row.Status != store.ExpertActive {
		return jobs.Expert{}, fmt.Errorf("expert %q is archived or a draft: %w", id, jobs.ErrExpertNotFound)
	}
	cfg, err := decodeConfig(t.row.Config)
	if err != nil {
		return jobs.Expert{}, err
	}
	return jobs.Expert{OutputSchema: cfg.OutputSchema}, nil
}
