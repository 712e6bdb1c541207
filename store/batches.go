package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Batch is one batch: its configuration and its row counters. The counters are kept in the row
// itself (updated in the same transaction as each row change), so total_rows always equals
// pending + running + succeeded + failed, and conditional updates on them are the dispatcher's
// concurrency and budget guards. A loop run is a batch with ScheduleID and RunNumber set.
type Batch struct {
	ID                    string  `gorm:"type:varchar(36);primaryKey"`
	AccountID             string  `gorm:"type:varchar(36);not null"`
	Name                  string  `gorm:"type:varchar(200);not null"`
	Status                string  `gorm:"type:varchar(32);not null"`
	PausedReason          *string `gorm:"type:varchar(32)"`
	Effort                string  `gorm:"type:varchar(16);not null"`
	RequestedEffort       string  `gorm:"type:varchar(16);not null"`
	ExpertID              *string `gorm:"type:varchar(255)"`
	Approach              *string `gorm:"type:varchar(200)"`
	ResponseLanguage      *string `gorm:"type:varchar(16)"`
	MaxConcurrent         int     `gorm:"not null"`
	MaxCredits            *int64
	CustomJSONSchema      *string `gorm:"column:custom_json_schema;type:text"`
	CreditsPerRow         int64   `gorm:"not null;default:0"`
	CreditsSpent          int64   `gorm:"not null;default:0"` // reserved at dispatch, released when a row's job fails
	TotalRows             int     `gorm:"not null"`
	PendingRows           int     `gorm:"not null"`
	RunningRows           int     `gorm:"not null;default:0"`
	SucceededRows         int     `gorm:"not null;default:0"`
	FailedRows            int     `gorm:"not null;default:0"`
	ScheduleID            *string `gorm:"type:varchar(36)"`
	RunNumber             *int
	CreatedAt             time.Time
	UpdatedAt             time.Time
	ProcessingStartedAt   *time.Time
	ProcessingCompletedAt *time.Time
}

// BatchRow is one question of a batch and the research job that answers it (the latest one after
// retries). Credits is what the row's current launch reserved from the batch's budget.
type BatchRow struct {
	BatchID    string  `gorm:"type:varchar(36);primaryKey"`
	RowNumber  int     `gorm:"primaryKey;autoIncrement:false"`
	Question   string  `gorm:"type:text;not null"`
	Status     string  `gorm:"type:varchar(16);not null"`
	JobID      *string `gorm:"type:varchar(36)"`
	ErrorCode  *string `gorm:"type:varchar(64)"`
	Attempts   int     `gorm:"not null;default:0"`
	Credits    int64   `gorm:"not null;default:0"`
	RowData    *string `gorm:"type:text"` // JSON object or NULL
	Input      *string `gorm:"type:text"` // JSON object or NULL
	StartedAt  *time.Time
	FinishedAt *time.Time
	UpdatedAt  time.Time
}

// CreateBatch inserts a batch and its rows.
func (s *Store) CreateBatch(ctx context.Context, b *Batch, rows []BatchRow) error {
	if err := s.with(ctx).Create(b).Error; err != nil {
		return notFound(err, "create batch")
	}
	if len(rows) == 0 {
		return nil
	}
	if err := s.with(ctx).CreateInBatches(rows, 100).Error; err != nil {
		return notFound(err, "create batch rows")
	}
	return nil
}

// BatchByID loads a batch.
func (s *Store) BatchByID(ctx context.Context, id string) (Batch, error) {
	var b Batch
	err := s.with(ctx).Where("id = ?", id).Take(&b).Error
	return b, notFound(err, "batch "+id)
}

// ListBatches pages an account's batches newest first; query is a case-insensitive substring of
// the name, status an exact status.
func (s *Store) ListBatches(ctx context.Context, accountID string, query, status *string, req PageRequest) (Page[Batch], error) {
	q := s.with(ctx).Model(&Batch{}).Omit("custom_json_schema").Where("account_id = ?", accountID)
	if query != nil && *query != "" {
		q = q.Where("LOWER(name) LIKE ? ESCAPE '\\'", "%"+likeEscape(strings.ToLower(*query))+"%")
	}
	if status != nil {
		q = q.Where("status = ?", *status)
	}
	page, err := paginate(q, req, func(b Batch) Cursor { return Cursor{CreatedAt: b.CreatedAt, ID: b.ID} })
	if err != nil {
		return page, fmt.Errorf("list batches: %w", err)
	}
	return page, nil
}

// likeEscape makes a user's text match literally inside a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// BatchRows lists a batch's rows in order, only those in status when set.
func (s *Store) BatchRows(ctx context.Context, batchID string, status *string) ([]BatchRow, error) {
	q := s.with(ctx).Where("batch_id = ?", batchID)
	if status != nil {
		q = q.Where("status = ?", *status)
	}
	var rows []BatchRow
	if err := q.Order("row_number").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("batch %s rows: %w", batchID, err)
	}
	return rows, nil
}

// BatchRowAt loads one row by its 1-based number.
func (s *Store) BatchRowAt(ctx context.Context, batchID string, n int) (BatchRow, error) {
	var r BatchRow
	err := s.with(ctx).Where("batch_id = ? AND row_number = ?", batchID, n).Take(&r).Error
	return r, notFound(err, fmt.Sprintf("batch %s row %d", batchID, n))
}

// BatchRowByJob finds the row a research job was launched for (ErrNotFound: not a batch job, or
// the row has moved on to a newer job).
func (s *Store) BatchRowByJob(ctx context.Context, jobID string) (BatchRow, error) {
	var r BatchRow
	err := s.with(ctx).Where("job_id = ?", jobID).Take(&r).Error
	return r, notFound(err, "batch row of job "+jobID)
}

// NextPendingRow is the lowest-numbered pending row of a batch.
func (s *Store) NextPendingRow(ctx context.Context, st BatchStatuses, batchID string) (BatchRow, error) {
	var r BatchRow
	err := s.with(ctx).Where("batch_id = ? AND status = ?", batchID, st.RowPending).Order("row_number").Take(&r).Error
	return r, notFound(err, "pending row of batch "+batchID)
}

// BatchStatuses are the statuses of package batch's state machine that the queries below write
// and filter by. Package batch defines them; store persists them without knowing their values.
type BatchStatuses struct {
	Active     []string // a batch whose rows are still dispatched
	Processing string   // what an active batch becomes once it launches, pauses or reopens
	Succeeded  string   // settled with no row failed
	WithErrors string   // settled with some row failed
	Cancelled  string

	RowPending, RowRunning, RowSuccess, RowFailed string
}

// ClaimBatchSlot takes one concurrency slot and reserves cost credits for a launch, only while
// the batch is active, under max_concurrent and within max_credits. The condition is evaluated on
// the stored row (Postgres re-checks it after waiting on a concurrent writer), so processes
// launching rows of one batch at once never exceed either limit.
func (s *Store) ClaimBatchSlot(ctx context.Context, st BatchStatuses, id string, cost int64, now time.Time) (bool, error) {
	res := s.with(ctx).Model(&Batch{}).
		Where("id = ? AND status IN ? AND pending_rows > 0 AND running_rows < max_concurrent", id, st.Active).
		Where("max_credits IS NULL OR credits_spent + ? <= max_credits", cost).
		Updates(map[string]any{
			"status": st.Processing, "paused_reason": nil, "updated_at": now,
			"pending_rows":          gorm.Expr("pending_rows - 1"),
			"running_rows":          gorm.Expr("running_rows + 1"),
			"credits_spent":         gorm.Expr("credits_spent + ?", cost),
			"processing_started_at": gorm.Expr("COALESCE(processing_started_at, ?)", now),
		})
	if res.Error != nil {
		return false, fmt.Errorf("claim a slot of batch %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// StartBatchRow moves a pending row to running under jobID, holding cost credits; false when the
// row is no longer pending (another dispatcher launched it).
func (s *Store) StartBatchRow(ctx context.Context, st BatchStatuses, batchID string, rowNumber int, jobID string, cost int64, now time.Time) (bool, error) {
	n, err := s.updateBatchRows(ctx, batchID, rowNumber, st.RowPending, map[string]any{
		"status": st.RowRunning, "job_id": jobID, "error_code": nil, "attempts": gorm.Expr("attempts + 1"),
		"credits": cost, "started_at": now, "finished_at": nil, "updated_at": now,
	})
	return n == 1, err
}

// MarkWaitingBatchRows sets (or, with nil, clears) the error code the pending rows of a batch
// show while they wait.
func (s *Store) MarkWaitingBatchRows(ctx context.Context, st BatchStatuses, batchID string, code *string) error {
	_, err := s.updateBatchRows(ctx, batchID, 0, st.RowPending, map[string]any{"error_code": code})
	return err
}

// PauseBatch keeps an active batch processing with reason as its paused_reason; false when the
// batch is no longer active.
func (s *Store) PauseBatch(ctx context.Context, st BatchStatuses, id, reason string) (bool, error) {
	return updateByID[Batch](ctx, s, "batch", id, st.Active, map[string]any{"status": st.Processing, "paused_reason": reason})
}

// FailWaitingBatchRows fails the pending rows of a batch (one, or all when rowNumber is 0) with
// code, moving them from the batch's pending to its failed counter; it returns how many failed.
func (s *Store) FailWaitingBatchRows(ctx context.Context, st BatchStatuses, batchID string, rowNumber int, code string, now time.Time) (int64, error) {
	return s.moveBatchRows(ctx, batchID, rowNumber, st.RowPending,
		map[string]any{"status": st.RowFailed, "error_code": code, "finished_at": now},
		func(n int64) map[string]any {
			return map[string]any{"pending_rows": gorm.Expr("pending_rows - ?", n), "failed_rows": gorm.Expr("failed_rows + ?", n)}
		})
}

// moveBatchRows sets rowSet on the rows of a batch in status from (one, or all when rowNumber is
// 0) and, when any changed, batchSet(how many) on the batch, together; it returns how many changed.
func (s *Store) moveBatchRows(ctx context.Context, batchID string, rowNumber int, from string, rowSet map[string]any, batchSet func(n int64) map[string]any) (int64, error) {
	var n int64
	err := s.atomically(ctx, func(tx *Store) error {
		var err error
		if n, err = tx.updateBatchRows(ctx, batchID, rowNumber, from, rowSet); err != nil || n == 0 {
			return err
		}
		_, err = updateByID[Batch](ctx, tx, "batch", batchID, nil, batchSet(n))
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// CancelBatch ends a batch as cancelled (its waiting rows failed first, FailWaitingBatchRows).
func (s *Store) CancelBatch(ctx context.Context, st BatchStatuses, id string, now time.Time) error {
	_, err := updateByID[Batch](ctx, s, "batch", id, nil,
		map[string]any{"status": st.Cancelled, "paused_reason": nil, "processing_completed_at": now})
	return err
}

// RetryBatchRows puts the failed rows of a batch (one, or all when rowNumber is 0) back to
// pending and reopens the batch: its counters move back, it is no longer completed, and a settled
// batch (reopen) becomes processing again. It returns how many rows were reset.
func (s *Store) RetryBatchRows(ctx context.Context, st BatchStatuses, batchID string, rowNumber int, reopen bool) (int64, error) {
	return s.moveBatchRows(ctx, batchID, rowNumber, st.RowFailed,
		map[string]any{"status": st.RowPending, "error_code": nil, "finished_at": nil},
		func(n int64) map[string]any {
			set := map[string]any{
				"pending_rows": gorm.Expr("pending_rows + ?", n), "failed_rows": gorm.Expr("failed_rows - ?", n),
				"processing_completed_at": nil,
			}
			if reopen {
				set["status"] = st.Processing
			}
			return set
		})
}

// RowSettlement is how a running batch row settles: the status it takes, its error code, what
// its job cost net of refunds, and, when it waits again (its status pending), the reason the
// batch pauses for.
type RowSettlement struct {
	Status       string
	ErrorCode    *string
	Credits      int64
	PausedReason *string
	Now          time.Time
}

// SettleBatchRow settles a running row of a batch locked by LockBatch: the row takes the
// settlement's status, the batch's counters move with it (running to succeeded, failed or back
// to pending) and its spent credits move from what the row held to what its job cost.
func (s *Store) SettleBatchRow(ctx context.Context, st BatchStatuses, row BatchRow, to RowSettlement) error {
	return s.atomically(ctx, func(tx *Store) error {
		rowSet := map[string]any{"status": to.Status, "error_code": to.ErrorCode, "credits": to.Credits, "finished_at": to.Now}
		batchSet := map[string]any{
			"running_rows":  gorm.Expr("running_rows - 1"),
			"credits_spent": gorm.Expr("credits_spent + ?", to.Credits-row.Credits),
		}
		switch to.Status {
		case st.RowSuccess:
			batchSet["succeeded_rows"] = gorm.Expr("succeeded_rows + 1")
		case st.RowPending:
			rowSet["finished_at"] = nil
			batchSet["pending_rows"] = gorm.Expr("pending_rows + 1")
			if to.PausedReason != nil {
				batchSet["paused_reason"] = *to.PausedReason
			}
		case st.RowFailed:
			batchSet["failed_rows"] = gorm.Expr("failed_rows + 1")
		default:
			return fmt.Errorf("settle row %d of batch %s: %q is not a settled status", row.RowNumber, row.BatchID, to.Status)
		}
		if _, err := tx.updateBatchRows(ctx, row.BatchID, row.RowNumber, st.RowRunning, rowSet); err != nil {
			return err
		}
		_, err := updateByID[Batch](ctx, tx, "batch", row.BatchID, nil, batchSet)
		return err
	})
}

// updateBatchRows sets columns of a batch's rows in status from (one row, or every row when
// rowNumber is 0) and returns how many changed.
func (s *Store) updateBatchRows(ctx context.Context, batchID string, rowNumber int, from string, set map[string]any) (int64, error) {
	if _, ok := set["updated_at"]; !ok {
		set["updated_at"] = s.db.NowFunc()
	}
	q := s.with(ctx).Model(&BatchRow{}).Where("batch_id = ? AND status = ?", batchID, from)
	if rowNumber > 0 {
		q = q.Where("row_number = ?", rowNumber)
	}
	res := q.Updates(set)
	if res.Error != nil {
		return 0, fmt.Errorf("update rows of batch %s: %w", batchID, res.Error)
	}
	return res.RowsAffected, nil
}

// FinishBatchIfSettled moves an active batch whose rows have all settled to its final status:
// succeeded when no row failed, else with errors (so a batch with zero successes is never
// "successful"). It reports whether the batch finished.
func (s *Store) FinishBatchIfSettled(ctx context.Context, st BatchStatuses, id string, now time.Time) (bool, error) {
	res := s.with(ctx).Model(&Batch{}).
		Where("id = ? AND status IN ? AND pending_rows = 0 AND running_rows = 0", id, st.Active).
		Updates(map[string]any{
			"status":        gorm.Expr("CASE WHEN failed_rows = 0 THEN ? ELSE ? END", st.Succeeded, st.WithErrors),
			"paused_reason": nil, "processing_completed_at": now, "updated_at": now,
		})
	if res.Error != nil {
		return false, fmt.Errorf("finish batch %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// BatchesToDispatch lists active batches with waiting rows and a free slot, oldest first: the
// periodic sweep's work.
func (s *Store) BatchesToDispatch(ctx context.Context, st BatchStatuses, limit int) ([]Batch, error) {
	var out []Batch
	err := s.with(ctx).Select("id").Where("status IN ? AND pending_rows > 0 AND running_rows < max_concurrent", st.Active).
		Order("updated_at").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("batches to dispatch: %w", err)
	}
	return out, nil
}

// JobOutcomes loads the result columns (status, report, structured output, error) of jobs by id.
func (s *Store) JobOutcomes(ctx context.Context, ids []string) (map[string]ResearchJob, error) {
	out := make(map[string]ResearchJob, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var jobs []ResearchJob
	err := s.with(ctx).Select("id", "status", "report_markdown", "structured_output", "error_code").Where("id IN ?", ids).Find(&jobs).Error
	if err != nil {
		return nil, fmt.Errorf("job outcomes: %w", err)
	}
	for _, j := range jobs {
		out[j.ID] = j
	}
	return out, nil
}

// LockBatch loads a batch inside a transaction and, on Postgres, locks its row until the
// transaction ends, so the row changes of one batch (settle, cancel, retry) apply one at a time
// and its counters stay consistent. (SQLite transactions are serialised already.)
func (s *Store) LockBatch(ctx context.Context, id string) (Batch, error) {
	var b Batch
	err := s.forUpdate(ctx).Where("id = ?", id).Take(&b).Error
	return b, notFound(err, "batch "+id)
}
