package expert

import (
	"context"
	"errors"
	"fmt"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// depthEfforts maps a custom expert's default_depth to the effort its runs default to.
var depthEfforts = map[string]string{"quick": "low", "thorough": "medium", "ultra_deep": "high"}

// DefaultEffort is the effort a run of an expert uses when the caller names none: a registry
// expert's default_effort, or a custom expert's default_depth (quick low, thorough medium,
// ultra_deep high); "" when it has none. The expert must be one the account may run
// (jobs.ErrExpertNotFound otherwise).
func (r Runner) DefaultEffort(ctx context.Context, accountID, id string) (string, error) {
	s := r.svc
	if b, ok := s.registry.Get(id); ok {
		return b.DefaultEffort, nil
	}
	a, err := s.st.AccountByID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return "", err
	}
	t, err := s.find(ctx, Caller{AccountID: a.ID, Email: a.Email, IsAdmin: a.IsAdmin}, id)
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return "", err
	}
	cfg, err := decodeConfig(t.row.Config)
	if err != nil {
		return "", err
	}
	if cfg.DefaultDepth == nil {
		return "", nil
	}
	return depthEfforts[*cfg.DefaultDepth], nil
}
