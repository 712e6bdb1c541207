package batch

import (
	"context"
	"errors"

	"github.com/researchd/researchd/store"
)

// Terminal reports whether a batch status is terminal.
func Terminal(status string) bool {
	switch status {
	case ProcessedSuccessfully, ProcessedWithErrors, Cancelled:
		return true
	}
	return false
}

// Cancel cancels a non-terminal batch at once: PENDING rows fail with cancelled (never dispatched,
// never metered); RUNNING rows settle on their own. A terminal batch is returned unchanged.
func (s *Service) Cancel(ctx context.Context, accountID, id string) (store.Batch, error) {
	var out store.Batch
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		b, err := s.owned(ctx, tx, accountID, id, true)
		if err != nil {
			return err
		}
		if !Terminal(b.Status) {
			now := s.now()
			if _, err := tx.FailWaitingBatchRows(ctx, statuses, b.ID, 0, CodeCancelled, now); err != nil {
				return err
			}
			if err := tx.CancelBatch(ctx, statuses, b.ID, now); err != nil {
				return err
			}
		}
		out, err = tx.BatchByID(ctx, b.ID)
		if err == nil && !Terminal(b.Status) {
			err = s.noticeRunEnded(ctx, tx, b.ID)
		}
		return err
	})
	return out, err
}

// RetryFailed resets every FAILED row to PENDING and reopens the batch; it returns how many rows
// were reset (0 is a no-op). A cancelled batch is ErrCancelled.
func (s *Service) RetryFailed(ctx context.Context, accountID, id string) (int64, error) {
	var n int64
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		var err error
		n, err = s.retry(ctx, tx, accountID, id, 0)
		return err
	})
	return n, err
}

// RetryRow resets one FAILED row to PENDING and reopens the batch; it returns the row as reset.
// A row that is not FAILED is ErrRowNotRetryable, a missing one ErrNotFound, a cancelled batch
// ErrCancelled.
func (s *Service) RetryRow(ctx context.Context, accountID, id string, rowNumber int) (store.BatchRow, error) {
	var row store.BatchRow
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		n, err := s.retry(ctx, tx, accountID, id, rowNumber)
		if err != nil {
			return err
		}
		row, err = tx.BatchRowAt(ctx, id, rowNumber)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrRowNotRetryable
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return row, ErrNotFound
	}
	return row, err
}

// retry resets FAILED rows (one, or all when rowNumber is 0) in tx, moves the counters, reopens
// the batch and enqueues a dispatch.
func (s *Service) retry(ctx context.Context, tx *store.Store, accountID, id string, rowNumber int) (int64, error) {
	b, err := s.owned(ctx, tx, accountID, id, true)
	if err != nil {
		return 0, err
	}
	if b.Status == Cancelled {
		return 0, ErrCancelled
	}
	if rowNumber > 0 {
		if _, err := tx.BatchRowAt(ctx, id, rowNumber); err != nil {
			return 0, err
		}
	}
	n, err := tx.RetryBatchRows(ctx, statuses, b.ID, rowNumber, Terminal(b.Status))
	if err != nil || n == 0 {
		return 0, err
	}
	return n, s.enqueueDispatch(ctx, tx, b.ID)
}

// List pages an account's batches newest first.
func (s *Service) List(ctx context.Context, accountID string, query, status *string, req store.PageRequest) (store.Page[store.Batch], error) {
	return s.st.ListBatches(ctx, accountID, query, status, req)
}

// Rows lists a batch's rows in order (only those in status when set).
func (s *Service) Rows(ctx context.Context, batchID string, status *string) ([]store.BatchRow, error) {
	return s.st.BatchRows(ctx, batchID, status)
}

// Result is one row with its job's outcome, for GET /batches/{id}/results.
type Result struct {
	Row              store.BatchRow
	StructuredOutput *string // JSON object, when the job produced one
	Headline         *string // SUCCESS rows only
	Excerpt          *string
}

// Results lists a batch's rows (only those in status when set) with what their jobs produced:
// structured output and a short answer derived from the report, never the report itself.
func (s *Service) Results(ctx context.Context, batchID string, status *string) ([]Result, error) {
	rows, err := s.st.BatchRows(ctx, batchID, status)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rows {
		if r.JobID != nil && r.Status == RowSuccess {
			ids = append(ids, *r.JobID)
		}
	}
	jobs, err := s.st.JobOutcomes(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		res := Result{Row: r}
		if r.Status == RowSuccess && r.JobID != nil {
			if j, ok := jobs[*r.JobID]; ok {
				res.StructuredOutput = j.StructuredOutput
				if j.ReportMarkdown != nil {
					h, e := Summarize(*j.ReportMarkdown)
					if h != "" {
						res.Headline = &h
					}
					if e != "" {
						res.Excerpt = &e
					}
				}
			}
		}
		out = append(out, res)
	}
	return out, nil
}
