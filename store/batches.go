package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Batch statuses (Batch.status in openapi/v2.json) and row statuses.
const (
	BatchPending               = "PENDING"
	BatchProcessing            = "PROCESSING"
	BatchProcessedSuccessfully = "PROCESSED_SUCCESSFULLY"
	BatchProcessedWithErrors   = "PROCESSED_WITH_ERRORS"
	BatchCancelled             = "CANCELLED"

	RowPending = "PENDING"
	RowRunning = "RUNNING"
	RowSuccess = "SUCCESS"
	RowFailed  = "FAILED"
)

// ActiveBatchStatuses are the statuses in which rows are still dispatched.
var ActiveBatchStatuses = []string{BatchPending, BatchProcessing}

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

// NextPendingRow is the lowest-numbered PENDING row of a batch.
func (s *Store) NextPendingRow(ctx context.Context, batchID string) (BatchRow, error) {
	var r BatchRow
	err := s.with(ctx).Where("batch_id = ? AND status = ?", batchID, RowPending).Order("row_number").Take(&r).Error
	return r, notFound(err, "pending row of batch "+batchID)
}

// UpdateBatch sets columns of a batch when its status is one of from (any status when from is
// empty) and reports whether it changed; updated_at is always set. Values may be gorm.Expr, so
// counters move relative to what is stored.
func (s *Store) UpdateBatch(ctx context.Context, id string, from []string, set map[string]any) (bool, error) {
	return updateByID[Batch](ctx, s, "batch", id, from, set)
}

// ClaimBatchSlot takes one concurrency slot and reserves cost credits for a launch, only while
// the batch is active, under max_concurrent and within max_credits. The condition is evaluated on
// the stored row (Postgres re-checks it after waiting on a concurrent writer), so processes
// launching rows of one batch at once never exceed either limit.
func (s *Store) ClaimBatchSlot(ctx context.Context, id string, cost int64, now time.Time) (bool, error) {
	res := s.with(ctx).Model(&Batch{}).
		Where("id = ? AND status IN ? AND pending_rows > 0 AND running_rows < max_concurrent", id, ActiveBatchStatuses).
		Where("max_credits IS NULL OR credits_spent + ? <= max_credits", cost).
		Updates(map[string]any{
			"status": BatchProcessing, "paused_reason": nil, "updated_at": now,
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

// UpdateBatchRows sets columns of a batch's rows in one of from (any status when from is empty);
// rowNumber 0 means every row. It returns how many changed.
func (s *Store) UpdateBatchRows(ctx context.Context, batchID string, rowNumber int, from []string, set map[string]any) (int64, error) {
	if _, ok := set["updated_at"]; !ok {
		set["updated_at"] = s.db.NowFunc()
	}
	q := s.with(ctx).Model(&BatchRow{}).Where("batch_id = ?", batchID)
	if rowNumber > 0 {
		q = q.Where("row_number = ?", rowNumber)
	}
	res := inStatus(q, from).Updates(set)
	if res.Error != nil {
		return 0, fmt.Errorf("update rows of batch %s: %w", batchID, res.Error)
	}
	return res.RowsAffected, nil
}

// FinishBatchIfSettled moves an active batch whose rows have all settled to its final status:
// PROCESSED_SUCCESSFULLY when no row failed, else PROCESSED_WITH_ERRORS (so a batch with zero
// successes is never "successful"). It reports whether the batch finished.
func (s *Store) FinishBatchIfSettled(ctx context.Context, id string, now time.Time) (bool, error) {
	res := s.with(ctx).Model(&Batch{}).
		Where("id = ? AND status IN ? AND pending_rows = 0 AND running_rows = 0", id, ActiveBatchStatuses).
		Updates(map[string]any{
			"status":        gorm.Expr("CASE WHEN failed_rows = 0 THEN ? ELSE ? END", BatchProcessedSuccessfully, BatchProcessedWithErrors),
			"paused_reason": nil, "processing_completed_at": now, "updated_at": now,
		})
	if res.Error != nil {
		return false, fmt.Errorf("finish batch %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// BatchesToDispatch lists active batches with waiting rows and a free slot, oldest first: the
// periodic sweep's work.
func (s *Store) BatchesToDispatch(ctx context.Context, limit int) ([]Batch, error) {
	var out []Batch
	err := s.with(ctx).Select("id").Where("status IN ? AND pending_rows > 0 AND running_rows < max_concurrent", ActiveBatchStatuses).
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
