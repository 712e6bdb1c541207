package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// dispatchArgs asks the dispatcher to launch what it can of one batch.
type dispatchArgs struct {
	BatchID string `json:"batch_id"`
}

func (dispatchArgs) Kind() string { return "batch_dispatch" }

type dispatchWorker struct {
	river.WorkerDefaults[dispatchArgs]
	svc *Service
}

func (w *dispatchWorker) Timeout(*river.Job[dispatchArgs]) time.Duration { return time.Minute }

func (w *dispatchWorker) Work(ctx context.Context, job *river.Job[dispatchArgs]) error {
	return w.svc.Dispatch(ctx, job.Args.BatchID)
}

// sweepArgs is the periodic safety net: dispatch every batch with waiting rows and a free slot.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "batch_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	svc *Service
}

func (w *sweepWorker) Timeout(*river.Job[sweepArgs]) time.Duration { return 5 * time.Minute }

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.svc.Sweep(ctx)
}

// Sweep dispatches every batch that has waiting rows and a free slot; it is how a batch paused for
// credits resumes by itself once credits return.
func (s *Service) Sweep(ctx context.Context) error {
	bs, err := s.st.BatchesToDispatch(ctx, statuses, 200)
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range bs {
		if err := s.Dispatch(ctx, b.ID); err != nil {
			s.log.WarnContext(ctx, "batch sweep: dispatch failed", "batch_id", b.ID, "error", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxLaunchesPerDispatch bounds one dispatch job; a settling row enqueues the next.
const maxLaunchesPerDispatch = MaxConcurrentLimit

// outcome of one launch attempt.
type outcome int

const (
	launched  outcome = iota
	lostRace          // another dispatcher took the slot or the row: look again
	rowFailed         // the row could not become a job; it failed (dispatch_error, or forbidden)
	stop              // paused, or nothing to do
)

// errLost aborts a job create whose row or slot another dispatcher claimed first.
var errLost = errors.New("batch row or slot claimed elsewhere")

// Dispatch launches PENDING rows of a batch while a concurrency slot, the budget and the account's
// credits allow; it finishes a batch whose rows have all settled. Safe to run concurrently for one
// batch from any number of processes.
func (s *Service) Dispatch(ctx context.Context, batchID string) error {
	for range maxLaunchesPerDispatch * 2 {
		b, err := s.st.BatchByID(ctx, batchID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.Status != Pending && b.Status != Processing {
			return nil
		}
		if b.PendingRows == 0 {
			return s.st.InTx(ctx, func(tx *store.Store) error {
				_, err := s.finish(ctx, tx, b.ID, s.now())
				return err
			})
		}
		if b.RunningRows >= b.MaxConcurrent {
			return nil
		}
		acct, err := s.st.AccountByID(ctx, b.AccountID)
		if err != nil {
			return err
		}
		effort := s.billing.Config().Clamp(acct.Tier, b.Effort)
		cost := s.billing.Config().Credits(effort)
		if b.MaxCredits != nil && b.CreditsSpent+cost > *b.MaxCredits {
			return s.budgetExhausted(ctx, b.ID, cost)
		}
		row, err := s.st.NextPendingRow(ctx, statuses, b.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		o, err := s.launch(ctx, b, row, acct.Tier, cost)
		if err != nil {
			return err
		}
		if o == stop {
			return nil
		}
	}
	return nil
}

// launch creates the research job of one row: the job is prepared first (jobs.Prepare reads what
// it needs outside any transaction), then inserted and the slot, the budget and the row claimed in
// one transaction, so the job exists if and only if the claims hold. The job goes in first: its
// hold locks the account before the claims lock the batch, the order a settling job takes them.
func (s *Service) launch(ctx context.Context, b store.Batch, row store.BatchRow, tier string, cost int64) (outcome, error) {
	req := jobs.CreateRequest{
		AccountID: b.AccountID, Tier: tier, Question: row.Question, Effort: b.Effort, ExpertID: b.ExpertID, Background: true,
	}
	if b.CustomJSONSchema != nil {
		if err := json.Unmarshal([]byte(*b.CustomJSONSchema), &req.JSONSchema); err != nil {
			return stop, fmt.Errorf("batch %s: decode custom_json_schema: %w", b.ID, err)
		}
	}
	p, err := s.jobs.Prepare(ctx, req)
	if err == nil {
		err = s.st.InTx(ctx, func(tx *store.Store) error {
			job, err := s.jobs.Insert(ctx, tx, p)
			if err != nil {
				return err
			}
			return s.claimRow(ctx, tx, b, row, job.ID, cost)
		})
	}
	var ce *jobs.CreditsError
	var te *jobs.ExpertTierError
	switch {
	case err == nil:
		return launched, nil
	case errors.Is(err, errLost):
		return lostRace, nil
	case errors.As(err, &ce), errors.Is(err, billing.ErrInsufficientCredits):
		return stop, s.pauseForQuota(ctx, b.ID)
	case errors.As(err, &te):
		// The tier (or the expert's allow_free_tier_use) changed after the batch was accepted: the
		// row fails with the code POST /batches would answer now. No job, so nothing is charged.
		s.log.InfoContext(ctx, "batch row refused: expert not available to the tier", "batch_id", b.ID, "row", row.RowNumber, "error", err)
		return rowFailed, s.failWaitingRow(ctx, b.ID, row.RowNumber, CodeForbidden)
	case fault.IsKind(err, fault.Invalid), errors.Is(err, jobs.ErrExpertNotFound):
		s.log.WarnContext(ctx, "batch row could not become a job", "batch_id", b.ID, "row", row.RowNumber, "error", err)
		return rowFailed, s.failWaitingRow(ctx, b.ID, row.RowNumber, CodeDispatchError)
	default:
		return stop, fmt.Errorf("launch row %d of batch %s: %w", row.RowNumber, b.ID, err)
	}
}

// claimRow takes a slot and the row's budget and links the row to its job, in the job's insert
// transaction; errLost when another dispatcher got there first.
func (s *Service) claimRow(ctx context.Context, tx *store.Store, b store.Batch, row store.BatchRow, jobID string, cost int64) error {
	now := s.now()
	ok, err := tx.ClaimBatchSlot(ctx, statuses, b.ID, cost, now)
	if err != nil {
		return err
	}
	if !ok {
		return errLost
	}
	ok, err = tx.StartBatchRow(ctx, statuses, b.ID, row.RowNumber, jobID, cost, now)
	if err != nil {
		return err
	}
	if !ok {
		return errLost
	}
	if b.PausedReason != nil && *b.PausedReason == CodeQuotaExhausted {
		// Credits are back: the waiting rows stop saying they wait for them.
		err = tx.MarkWaitingBatchRows(ctx, statuses, b.ID, nil)
	}
	return err
}

// pauseForQuota marks an active batch paused for credits and its waiting rows quota_exhausted.
func (s *Service) pauseForQuota(ctx context.Context, batchID string) error {
	return s.st.InTx(ctx, func(tx *store.Store) error {
		ok, err := tx.PauseBatch(ctx, statuses, batchID, CodeQuotaExhausted)
		if err != nil || !ok {
			return err
		}
		code := CodeQuotaExhausted
		return tx.MarkWaitingBatchRows(ctx, statuses, batchID, &code)
	})
}

// budgetExhausted handles a batch whose remaining max_credits cannot cover the next row. While
// rows run, their refunds may free budget: the batch waits, paused with budget_exhausted. When none
// runs, nothing can free budget any more: the waiting rows fail with budget_exhausted and the
// batch finishes.
func (s *Service) budgetExhausted(ctx context.Context, batchID string, cost int64) error {
	return s.st.InTx(ctx, func(tx *store.Store) error {
		b, err := tx.LockBatch(ctx, batchID)
		if err != nil {
			return err
		}
		if b.Status != Pending && b.Status != Processing {
			return nil
		}
		if b.MaxCredits == nil || b.CreditsSpent+cost <= *b.MaxCredits {
			return nil // budget freed meanwhile: the next dispatch launches
		}
		if b.RunningRows > 0 {
			_, err := tx.PauseBatch(ctx, statuses, b.ID, CodeBudgetExhausted)
			return err
		}
		now := s.now()
		if _, err := tx.FailWaitingBatchRows(ctx, statuses, b.ID, 0, CodeBudgetExhausted, now); err != nil {
			return err
		}
		_, err = s.finish(ctx, tx, b.ID, now)
		return err
	})
}

// failWaitingRow fails a PENDING row that could not become a job.
func (s *Service) failWaitingRow(ctx context.Context, batchID string, rowNumber int, code string) error {
	return s.st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.LockBatch(ctx, batchID); err != nil {
			return err
		}
		now := s.now()
		n, err := tx.FailWaitingBatchRows(ctx, statuses, batchID, rowNumber, code, now)
		if err != nil || n == 0 {
			return err
		}
		_, err = s.finish(ctx, tx, batchID, now)
		return err
	})
}

// settled is the queue's settled hook: inside the transaction of a job's terminal transition it
// settles the batch row the job was launched for (if any), moves the counters and the budget to
// what the ledger says the job cost, finishes the batch when every row has settled, and otherwise
// enqueues the next dispatch, so the next row launches as soon as this one settles.
func (s *Service) settled(ctx context.Context, tx *store.Store, jobID, status, errorCode string) error {
	row, err := tx.BatchRowByJob(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if row.Status != RowRunning {
		return nil // settled already (a continuation of a row's job settling later)
	}
	b, err := tx.LockBatch(ctx, row.BatchID)
	if err != nil {
		return err
	}
	// What the job really cost, net of refunds: a failed run was refunded in this transaction.
	spent, err := tx.JobCredits(ctx, jobID)
	if err != nil {
		return err
	}
	now := s.now()
	active := b.Status == Pending || b.Status == Processing
	code := rowErrorCode(status, errorCode)
	to := store.RowSettlement{Status: RowFailed, ErrorCode: &code, Credits: spent, Now: now}
	switch {
	case status == jobs.Completed:
		to.Status, to.ErrorCode = RowSuccess, nil
	case code == CodeQuotaExhausted && active:
		// Refused for credits when its run started: the row waits again and the batch pauses
		// until credits return (the sweep re-checks).
		to.Status, to.PausedReason = RowPending, &code
	}
	if err := tx.SettleBatchRow(ctx, statuses, row, to); err != nil {
		return err
	}
	if !active {
		return nil
	}
	finished, err := s.finish(ctx, tx, row.BatchID, now)
	if err != nil || finished {
		return err
	}
	return s.enqueueDispatch(ctx, tx, row.BatchID)
}

// rowErrorCode maps a settled job's status and error code to a row error code.
func rowErrorCode(status, jobCode string) string {
	if status == jobs.Cancelled {
		return CodeCancelled
	}
	switch jobCode {
	case "insufficient_credits":
		return CodeQuotaExhausted
	case "timed_out", engine.CodeTimeout:
		return CodeTimedOut
	case engine.CodeStructuredOutputInvalid, engine.CodeInvalidJSONSchema:
		return CodeSchemaUnsatisfied
	case "internal_error", "expert_unavailable", "attachment_unavailable":
		return CodeDispatchError
	case jobs.CodeForbidden:
		return CodeForbidden
	}
	return CodeEngineError
}
