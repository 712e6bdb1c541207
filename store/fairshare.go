package store

import (
	"context"
	"fmt"
)

// CountAccountJobs counts an account's jobs in the given statuses (fair-share dispatch: how many
// runs it has in progress, how deep its backlog is).
func (s *Store) CountAccountJobs(ctx context.Context, accountID string, statuses ...string) (int64, error) {
	var n int64
	err := s.with(ctx).Model(&ResearchJob{}).Where("account_id = ? AND status IN ?", accountID, statuses).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count jobs of account %s: %w", accountID, err)
	}
	return n, nil
}
