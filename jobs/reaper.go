package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/researchd/researchd/store"
)

// staleWebhookAge is how long a webhook round may stay pending (its queue entry retrying after
// crashes) before the reaper fails it and deletes its sealed key; far beyond the 30 s budget.
const staleWebhookAge = time.Hour

// reapArgs is the periodic maintenance job (it runs on the leader only, so once per cluster).
type reapArgs struct{}

func (reapArgs) Kind() string { return "research_reap" }

type reapWorker struct {
	river.WorkerDefaults[reapArgs]
	svc *Service
}

func (w *reapWorker) Timeout(*river.Job[reapArgs]) time.Duration { return time.Minute }

// Work fails jobs whose queue entry can no longer run them (discarded after its last attempt,
// cancelled or deleted outside the API), so that no job stays queued or in_progress forever,
// forgets idempotency keys older than 24 hours, and deletes sealed API keys no webhook can need.
func (w *reapWorker) Work(ctx context.Context, _ *river.Job[reapArgs]) error {
	s := w.svc
	if _, err := s.st.DeleteExpiredIdempotencyKeys(ctx, s.now()); err != nil {
		return err
	}
	if _, err := s.st.ForgetWebhookKeys(ctx, statuses, s.now().Add(-staleWebhookAge)); err != nil {
		return err
	}
	// Jobs untouched for a while: a live run writes events and checkpoints, a queued job waits in a
	// live entry; only orphans are failed.
	stale, err := s.st.ActiveJobsUpdatedBefore(ctx, statuses, s.now().Add(-s.cfg.ReaperInterval), 200)
	if err != nil {
		return err
	}
	live, err := s.liveEntries(ctx, stale)
	if err != nil {
		return err
	}
	for _, j := range stale {
		if j.RiverJobID != nil && live[*j.RiverJobID] {
			continue
		}
		runID := ""
		if j.CurrentRunID != nil {
			runID = *j.CurrentRunID
		}
		s.log.Warn("failing an orphaned job: its queue entry is gone", "job_id", j.ID, "status", j.Status)
		if err := s.fail(ctx, j, runArgs{JobID: j.ID, RunID: runID, Effort: j.Effort}, "internal_error",
			"the job could not be run to completion"); err != nil {
			return err
		}
	}
	return nil
}

// liveEntries looks up the queue entries of jobs in one query and reports which of them can still
// run (an entry that is gone or final is absent).
func (s *Service) liveEntries(ctx context.Context, jobs []store.ResearchJob) (map[int64]bool, error) {
	var ids []int64
	for _, j := range jobs {
		if j.RiverJobID != nil {
			ids = append(ids, *j.RiverJobID)
		}
	}
	live := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return live, nil
	}
	rows, err := s.queue.Jobs(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("reaper: look up queue entries: %w", err)
	}
	for _, row := range rows {
		live[row.ID] = !finalState(row.State)
	}
	return live, nil
}

func finalState(st rivertype.JobState) bool {
	switch st {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return true
	}
	return false
}
