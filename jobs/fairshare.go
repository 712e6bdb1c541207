package jobs

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/store"
)

// errOverShare ends a dispatch whose account already has its share of runs in progress.
var errOverShare = errors.New("account has its share of runs in progress")

// Queue priorities (River: 1 runs first). An account's jobs within its share go first, so a deep
// backlog of one account never stands in front of another account's first jobs.
const (
	priorityWithinShare = river.PriorityDefault
	priorityBeyondShare = priorityWithinShare + 1
)

// priority is the queue priority of a new run of the account: lower once the account has its share
// of jobs queued or in progress.
func (s *Service) priority(ctx context.Context, tx *store.Store, accountID, queue string) (int, error) {
	if s.cfg.AccountShare == 0 {
		return priorityWithinShare, nil
	}
	n, err := tx.CountAccountJobs(ctx, accountID, queue, s.cfg.AccountShare, Queued, InProgress)
	if err != nil {
		return 0, err
	}
	if n >= int64(s.cfg.AccountShare) {
		return priorityBeyondShare, nil
	}
	return priorityWithinShare, nil
}

// checkShare refuses to start a queued job whose account already has AccountShare runs in progress
// in the same queue anywhere in the cluster. The account lock makes concurrent dispatches of one account count one
// after the other; a run resumed after a crash (already in progress) is never held back.
func (s *Service) checkShare(ctx context.Context, tx *store.Store, j store.ResearchJob, queue string) error {
	if s.cfg.AccountShare == 0 || j.Status != Queued {
		return nil
	}
	if err := tx.LockAccount(ctx, j.AccountID); err != nil {
		return err
	}
	n, err := tx.CountAccountJobs(ctx, j.AccountID, queue, s.cfg.AccountShare, InProgress)
	if err != nil {
		return err
	}
	if n >= int64(s.cfg.AccountShare) {
		return errOverShare
	}
	return nil
}
