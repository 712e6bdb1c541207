package store

import (
	"context"
	"fmt"
)

// CountAccountJobs counts an account's jobs in the given statuses whose current run sits in queue
// (fair-share dispatch: how many runs it has in progress there, how deep its backlog is). Each queue
// has its own workers, so each is shared on its own: an account's batch rows never count against
// its API jobs.
func (s *Store) CountAccountJobs(ctx context.Context, accountID, queue string, statuses ...string) (int64, error) {
	var n int64
	err := s.with(ctx).Table("research_jobs").Joins("JOIN river_job ON river_job.id = research_jobs.river_job_id").
		Where("research_jobs.account_id = ? AND research_jobs.status IN ? AND river_job.queue = ?", accountID, statuses, queue).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count jobs of account %s in %s: %w", accountID, queue, err)
	}
	return n, nil
}
