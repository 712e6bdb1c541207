package store

import (
	"context"
	"fmt"
)

// CountAccountJobs counts an account's jobs in the given statuses whose current run sits in queue
// (fair-share dispatch: how many runs it has in progress there, how deep its backlog is). Each queue
// has its own workers, so each is shared on its own: an account's batch rows never count against
// its API jobs. upTo > 0 stops counting there: fair share only asks whether the account has reached
// its share, and an exact count would read the whole backlog, which a busy account grows by one row
// per create (every create counts).
func (s *Store) CountAccountJobs(ctx context.Context, accountID, queue string, upTo int, statuses ...string) (int64, error) {
	q := s.with(ctx).Table("research_jobs").Select("1").Joins("JOIN river_job ON river_job.id = research_jobs.river_job_id").
		Where("research_jobs.account_id = ? AND research_jobs.status IN ? AND river_job.queue = ?", accountID, statuses, queue)
	if upTo > 0 {
		q = q.Limit(upTo)
	}
	var n int64
	if err := s.with(ctx).Table("(?) AS matching", q).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count jobs of account %s in %s: %w", accountID, queue, err)
	}
	return n, nil
}
