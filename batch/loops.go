package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/store"
)

// Loops is the batch service as loops see it (loop.Batches): each run of a loop is a batch
// created from the loop's configuration, with the same validation as POST /batches except the
// row limit (a loop has up to loop.MaxQuestions questions) and no Idempotency-Key.
type Loops struct{ svc *Service }

var _ loop.Batches = Loops{}

// Loops returns the loop adapter over s.
func (s *Service) Loops() Loops { return Loops{svc: s} }

// preparedRun is a validated run batch waiting for its transaction.
type preparedRun struct {
	b    store.Batch
	rows []store.BatchRow
}

func (l Loops) input(ctx context.Context, accountID, name string, cfg loop.Config) (CreateInput, error) {
	acct, err := l.svc.st.AccountByID(ctx, accountID)
	if err != nil {
		return CreateInput{}, fmt.Errorf("loop run account %s: %w", accountID, err)
	}
	in := CreateInput{
		AccountID: accountID, Tier: acct.Tier, Name: name, Questions: cfg.Questions, ExpertID: cfg.ExpertID,
		Approach: cfg.Approach, MaxCredits: cfg.MaxCredits, CustomJSONSchema: cfg.CustomJSONSchema,
		Inputs: cfg.Inputs, Rows: cfg.Rows,
	}
	if cfg.Effort != nil {
		in.Effort = *cfg.Effort
	}
	if cfg.ResponseLanguage != "" {
		in.ResponseLanguage = ptr(cfg.ResponseLanguage)
	}
	if cfg.MaxConcurrent != 0 {
		in.MaxConcurrent = ptr(cfg.MaxConcurrent)
	}
	return in, nil
}

// Validate checks a loop's configuration as a batch create would, without writing.
func (l Loops) Validate(ctx context.Context, accountID string, cfg loop.Config) error {
	in, err := l.input(ctx, accountID, "", cfg)
	if err != nil {
		return err
	}
	_, _, err = l.svc.prepare(ctx, in)
	return loopError(err)
}

// PrepareRun validates a run's batch and checks the balance covers one row, before the firing's
// transaction.
func (l Loops) PrepareRun(ctx context.Context, in loop.RunInput) (any, error) {
	ci, err := l.input(ctx, in.AccountID, in.Name, in.Config)
	if err != nil {
		return nil, err
	}
	b, rows, err := l.svc.prepare(ctx, ci)
	if err == nil {
		err = l.svc.affordable(ctx, b)
	}
	if err != nil {
		return nil, loopError(err)
	}
	return preparedRun{b: b, rows: rows}, nil
}

// CreateRun writes a prepared run's batch in tx, the transaction that claims the firing.
func (l Loops) CreateRun(ctx context.Context, tx *store.Store, in loop.RunInput) (string, error) {
	p, ok := in.Prepared.(preparedRun)
	if !ok {
		return "", errors.New("batch: loop run not prepared")
	}
	b, now := p.b, l.svc.now()
	// A fresh id per attempt: a prepared run is never written twice.
	b.ID, b.ScheduleID, b.RunNumber, b.CreatedAt, b.UpdatedAt = uuid.NewString(), ptr(in.ScheduleID), ptr(in.RunNumber), now, now
	rows := make([]store.BatchRow, len(p.rows))
	for i, r := range p.rows {
		r.BatchID, r.UpdatedAt = b.ID, now
		rows[i] = r
	}
	if err := l.svc.insert(ctx, tx, &b, rows); err != nil {
		return "", err
	}
	return b.ID, nil
}

// RunStates reads the runs' batches.
func (l Loops) RunStates(ctx context.Context, batchIDs []string) (map[string]loop.RunState, error) {
	out := make(map[string]loop.RunState, len(batchIDs))
	for _, id := range batchIDs {
		b, err := l.svc.st.BatchByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = loop.RunState{
			Status: b.Status, TotalRows: b.TotalRows, ProcessedRows: b.SucceededRows + b.FailedRows, SucceededRows: b.SucceededRows,
		}
	}
	return out, nil
}

// RunResults lists a run's rows with their short answers, as GET /batches/{id}/results has them.
func (l Loops) RunResults(ctx context.Context, batchID string) ([]loop.RowResult, error) {
	res, err := l.svc.Results(ctx, batchID, nil)
	if err != nil {
		return nil, err
	}
	out := make([]loop.RowResult, len(res))
	for i, r := range res {
		out[i] = loop.RowResult{RowNumber: r.Row.RowNumber, Question: r.Row.Question, Status: r.Row.Status, Headline: r.Headline}
		if r.StructuredOutput != nil {
			if err := json.Unmarshal([]byte(*r.StructuredOutput), &out[i].StructuredOutput); err != nil {
				return nil, fmt.Errorf("structured output of batch %s row %d: %w", batchID, r.Row.RowNumber, err)
			}
		}
	}
	return out, nil
}

// loopError maps batch errors to the loop's.
func loopError(err error) error {
	var ce *jobs.CreditsError
	var te *jobs.ExpertTierError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return fmt.Errorf("%w: %s", loop.ErrInsufficientCredits, ce.Error())
	case errors.As(err, &te):
		// Both stay in the chain: the loop skips on its own error, the HTTP layer answers the tier's.
		return fmt.Errorf("%w: %w", loop.ErrExpertForbidden, err)
	}
	return err
}

// finish ends a batch whose rows have all settled (tx.FinishBatchIfSettled) and, for a loop's
// run, tells the loop in the same transaction (an entry of the loop's queue work), so the loop
// reads the batch once it is committed.
func (s *Service) finish(ctx context.Context, tx *store.Store, batchID string, now time.Time) (bool, error) {
	finished, err := tx.FinishBatchIfSettled(ctx, statuses, batchID, now)
	if err != nil || !finished {
		return finished, err
	}
	return true, s.noticeRunEnded(ctx, tx, batchID)
}

func (s *Service) noticeRunEnded(ctx context.Context, tx *store.Store, batchID string) error {
	b, err := tx.BatchByID(ctx, batchID)
	if err != nil || b.ScheduleID == nil {
		return err
	}
	_, err = s.queue.EnqueueTx(ctx, tx, loop.RunEndedArgs{BatchID: batchID}, &river.InsertOpts{Queue: Queue, MaxAttempts: 5})
	return err
}
