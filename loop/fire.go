package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// dueBatch is how many due loops one FireDue pass reads at a time.
const dueBatch = 100

// FireDue fires every active loop whose next_run_at is at or before now, each at most once, and
// returns how many runs it started. Safe to call from several processes at once: each firing is
// claimed by a conditional update, so exactly one process starts (or skips) each period.
func (s *Service) FireDue(ctx context.Context, now time.Time) (int, error) {
	now = now.UTC()
	fired := 0
	var errs []error
	seen := map[string]bool{}
	for {
		due, err := s.st.DueSchedules(ctx, now, dueBatch)
		if err != nil {
			return fired, err
		}
		progress := false
		for _, l := range due {
			if seen[l.ID] {
				continue // failed this pass; try again on the next tick, not in a tight loop
			}
			seen[l.ID] = true
			progress = true
			started, err := s.fire(ctx, l, now)
			if err != nil {
				s.log.ErrorContext(ctx, "loop firing failed", "schedule_id", l.ID, "err", err)
				errs = append(errs, fmt.Errorf("schedule %s: %w", l.ID, err))
			}
			if started {
				fired++
			}
		}
		if !progress || len(due) < dueBatch {
			return fired, errors.Join(errs...)
		}
	}
}

// fire handles one due firing of l: skip it, or start a run. Either way next_run_at moves to the
// first period after now (missed periods are not back-filled), by a claim that only one caller
// wins.
func (s *Service) fire(ctx context.Context, l store.Schedule, now time.Time) (bool, error) {
	sched, err := ScheduleOf(l)
	if err != nil {
		return false, err
	}
	due := *l.NextRunAt
	next := sched.Next(now)
	active, err := s.settleOpenRuns(ctx, l.ID, l.LatestBatchID)
	if err != nil {
		return false, err
	}
	if active {
		return false, s.skip(ctx, l, due, next, now, SkipPreviousRunActive)
	}
	full, err := s.load(ctx, s.st, l.AccountID, l.ID)
	if err != nil {
		return false, err
	}
	errLost := errors.New("claim lost")
	var batchID string
	var runNumber int
	prepared, err := s.batches.PrepareRun(ctx, runInput(full))
	if err == nil {
		err = s.st.InTx(ctx, func(tx *store.Store) error {
			ok, err := tx.ClaimLoopFiring(ctx, l.ID, due, next, l.LatestBatchID, now)
			if err != nil {
				return err
			}
			if !ok {
				return errLost
			}
			batchID, runNumber, err = s.startRun(ctx, tx, full, prepared, l.LatestBatchID, now)
			return err
		})
	}
	switch {
	case errors.Is(err, errLost):
		return false, nil // another process fired (or skipped) this period, or a run-now won
	case errors.Is(err, ErrInsufficientCredits):
		return false, s.skip(ctx, l, due, next, now, SkipInsufficientCredits)
	case errors.Is(err, ErrExpertForbidden):
		return false, s.skip(ctx, l, due, next, now, SkipForbidden)
	case fault.IsKind(err, fault.Invalid):
		// The configuration no longer makes a batch (e.g. its expert is gone or archived):
		// the run failed to start. Count it and move on; retrying every tick would not help.
		s.log.WarnContext(ctx, "loop run could not start", "schedule_id", l.ID, "err", err)
		_, cerr := s.st.FailLoopFiring(ctx, l.ID, due, next, l.LatestBatchID)
		return false, cerr
	case err != nil:
		return false, err // transient: next_run_at is unchanged, the next tick tries again
	}
	s.log.InfoContext(ctx, "loop fired", "schedule_id", l.ID, "run_number", runNumber, "batch_id", batchID, "due", due)
	return true, nil
}

// skip records a skipped firing and advances next_run_at, if this caller wins the claim.
func (s *Service) skip(ctx context.Context, l store.Schedule, due, next, now time.Time, reason string) error {
	ok, err := s.st.SkipLoopFiring(ctx, l.ID, due, next, l.LatestBatchID, reason, now)
	if err == nil && ok {
		s.log.InfoContext(ctx, "loop firing skipped", "schedule_id", l.ID, "reason", reason, "due", due)
	}
	return err
}

// startRun takes the next run number and creates the run's batch inside tx.
func (s *Service) startRun(ctx context.Context, tx *store.Store, l Loop, prepared any, latest *string, now time.Time) (string, int, error) {
	n, err := tx.ClaimLoopRun(ctx, l.ID, latest, now)
	if err != nil {
		return "", 0, err
	}
	if n == 0 {
		return "", 0, ErrRunActive
	}
	in := runInput(l)
	in.RunNumber, in.Prepared = n, prepared
	batchID, err := s.batches.CreateRun(ctx, tx, in)
	if err != nil {
		return "", 0, err
	}
	if err := tx.AddLoopRun(ctx, &store.ScheduleRun{ScheduleID: l.ID, RunNumber: n, BatchID: batchID, CreatedAt: now}); err != nil {
		return "", 0, err
	}
	return batchID, n, nil
}

// runInput is a run of l before its number is claimed.
func runInput(l Loop) RunInput {
	return RunInput{AccountID: l.AccountID, ScheduleID: l.ID, Name: l.Name, Config: l.Cfg}
}

// RunNow starts a run immediately, outside the schedule (next_run_at unchanged; paused loops
// too). ErrRunActive while the previous run has not finished; ErrInsufficientCredits when the
// balance cannot cover one row. Two run-nows (or a run-now and a firing) at once start one run.
func (s *Service) RunNow(ctx context.Context, accountID, id string) (batchID string, runNumber int, err error) {
	l, err := s.loadLive(ctx, s.st, accountID, id)
	if err != nil {
		return "", 0, err
	}
	active, err := s.settleOpenRuns(ctx, l.ID, l.LatestBatchID)
	if err != nil {
		return "", 0, err
	}
	if active {
		return "", 0, ErrRunActive
	}
	prepared, err := s.batches.PrepareRun(ctx, runInput(l))
	if err != nil {
		return "", 0, err
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		batchID, runNumber, err = s.startRun(ctx, tx, l, prepared, l.LatestBatchID, s.now())
		return err
	})
	if err != nil {
		return "", 0, err
	}
	return batchID, runNumber, nil
}

// RunEndedArgs tells the loop service a run's batch ended. The batch service enqueues it in the
// transaction that ends the batch, so the loop reads the batch once it is committed.
type RunEndedArgs struct {
	BatchID string `json:"batch_id"`
}

// Kind is the kind batches enqueued before the loop owned the notice, so entries queued by an
// older process are still worked.
func (RunEndedArgs) Kind() string { return "batch_loop_run_ended" }

type runEndedWorker struct {
	river.WorkerDefaults[RunEndedArgs]
	svc *Service
}

func (w *runEndedWorker) Timeout(*river.Job[RunEndedArgs]) time.Duration { return time.Minute }

func (w *runEndedWorker) Work(ctx context.Context, job *river.Job[RunEndedArgs]) error {
	return w.svc.Settled(ctx, job.Args.BatchID)
}

// Settled records the outcome of a loop's ended batch now (not only at the next firing or
// read). Batches that are not a loop's are ignored.
func (s *Service) Settled(ctx context.Context, batchID string) error {
	r, err := s.st.ScheduleRunByBatch(ctx, batchID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.settleOpenRuns(ctx, r.ScheduleID, nil)
	return err
}

// settleOpenRuns records the outcome of each run of the loop whose batch has ended (once,
// oldest first) and keeps consecutive_failures in step. It reports whether the loop's latest
// batch (latest, or any open run) is still active: a new run must not start.
func (s *Service) settleOpenRuns(ctx context.Context, scheduleID string, latest *string) (bool, error) {
	open, err := s.st.OpenScheduleRuns(ctx, scheduleID)
	if err != nil {
		return false, err
	}
	ids := make([]string, 0, len(open)+1)
	for _, r := range open {
		ids = append(ids, r.BatchID)
	}
	if latest != nil {
		ids = append(ids, *latest)
	}
	if len(ids) == 0 {
		return false, nil
	}
	states, err := s.batches.RunStates(ctx, ids)
	if err != nil {
		return false, fmt.Errorf("run states of schedule %s: %w", scheduleID, err)
	}
	if latest != nil {
		if st, ok := states[*latest]; ok && st.Active() {
			return true, s.settle(ctx, scheduleID, open, states)
		}
	}
	for _, r := range open {
		if st, ok := states[r.BatchID]; ok && st.Active() {
			return true, s.settle(ctx, scheduleID, open, states)
		}
	}
	return false, s.settle(ctx, scheduleID, open, states)
}

func (s *Service) settle(ctx context.Context, scheduleID string, open []store.ScheduleRun, states map[string]RunState) error {
	for _, r := range open {
		st, ok := states[r.BatchID]
		if ok && st.Active() {
			return nil // outcomes are recorded in run order
		}
		outcome := RunFailed
		if ok && st.SucceededRows > 0 {
			outcome = RunSucceeded
		}
		_, err := s.st.SettleLoopRun(ctx, scheduleID, r.RunNumber, outcome, outcome == RunFailed)
		if err != nil {
			return err
		}
	}
	return nil
}
