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
	// One fixed text, written out: every create and every dispatch runs it, and GORM's building of
	// the same statement from a subquery cost more CPU than SQLite's running of it.
	q := `SELECT count(*) FROM (SELECT 1 FROM research_jobs JOIN river_job ON river_job.id = research_jobs.river_job_id
		WHERE research_jobs.account_id = ? AND research_jobs.status IN ? AND river_job.queue = ?`
	args := []any{accountID, statuses, queue}
	if upTo > 0 {
		q += " LIMIT ?"
		args = append(args, upTo)
	}
	var n int64
	if err := s.with(ctx).Raw(q+") AS matching", args...).Row().Scan(&n); err != nil {
		return 0, fmt.Errorf("count jobs of account %s in %s: %w", accountID, queue, err)
	}
	return n, nil
}
