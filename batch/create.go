package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/schema"
	"github.com/researchd/researchd/store"
)

// Limits of a create (as in openapi/v2.json).
const (
	MaxRows              = 100
	DefaultMaxConcurrent = 5
	MaxConcurrentLimit   = 20
)

// idemPrefix keeps batch creates apart from job and expert creates in the shared idempotency records.
const idemPrefix = "batch:"

// CreateInput is a POST /batches body (already schema-validated) plus who sent it.
type CreateInput struct {
	AccountID, Tier  string
	Name             string
	Questions        []string
	Effort           string // requested; "" = the expert's default, else medium
	ExpertID         *string
	Approach         *string
	ResponseLanguage *string
	MaxConcurrent    *int
	MaxCredits       *int64
	CustomJSONSchema map[string]any
	// Inputs and Rows are nil when absent; when present they align with Questions (an element may
	// be nil).
	Inputs []map[string]any
	Rows   []map[string]any
	// IdempotencyKey and RequestHash (of the body) make a retried create return the original.
	IdempotencyKey, RequestHash string
	// ScheduleID and RunNumber mark a loop's run.
	ScheduleID *string
	RunNumber  *int
}

// Created is the outcome of Create: a new batch or, for a replayed Idempotency-Key, the original
// batch as it stands now.
type Created struct {
	Batch store.Batch
	Rows  []store.BatchRow
}

// Create validates a batch and persists the intent (the batch, its rows, the idempotency record
// and the first dispatch job) in one transaction. Nothing is charged: rows are metered when the
// dispatcher launches them.
func (s *Service) Create(ctx context.Context, in CreateInput) (Created, error) {
	k := idempotency.Key{AccountID: in.AccountID, Scope: idemPrefix, Key: in.IdempotencyKey, RequestHash: in.RequestHash, StatusCode: 202, Now: s.now()}
	c, _, err := idempotency.Create(ctx, s.st, k, in, s.replay, s.create)
	return c, err
}

func (s *Service) create(ctx context.Context, in CreateInput, claim idempotency.Claim) (Created, error) {
	if len(in.Questions) > MaxRows {
		return Created{}, invalid("questions", fmt.Sprintf("at most %d questions", MaxRows))
	}
	b, rows, err := s.prepare(ctx, in)
	if err != nil {
		return Created{}, err
	}
	if err := s.affordable(ctx, b); err != nil {
		return Created{}, err
	}

	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, b.ID); err != nil {
			return err
		}
		return s.insert(ctx, tx, &b, rows)
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Batch: b, Rows: rows}, nil
}

// prepare validates a create (everything but the row limit and the balance) and builds the batch
// and its rows without writing anything. It reads through the service's own store, so it runs
// before any transaction (SQLite has one connection).
func (s *Service) prepare(ctx context.Context, in CreateInput) (store.Batch, []store.BatchRow, error) {
	if in.Inputs != nil && in.ExpertID == nil {
		return store.Batch{}, nil, invalid("inputs", "inputs require expert_id")
	}
	if in.Inputs != nil && len(in.Inputs) != len(in.Questions) {
		return store.Batch{}, nil, invalid("inputs", fmt.Sprintf("has %d entries; questions has %d", len(in.Inputs), len(in.Questions)))
	}
	if in.Rows != nil && len(in.Rows) != len(in.Questions) {
		return store.Batch{}, nil, invalid("rows", fmt.Sprintf("has %d entries; questions has %d", len(in.Rows), len(in.Questions)))
	}
	requested, effort, err := s.effortFor(ctx, in.AccountID, in.Tier, in.Effort, in.ExpertID)
	if err != nil {
		return store.Batch{}, nil, err
	}
	cost := s.billing.Config().Credits(effort)
	maxConc := DefaultMaxConcurrent
	if in.MaxConcurrent != nil {
		maxConc = *in.MaxConcurrent
	}
	if maxConc < 1 || maxConc > MaxConcurrentLimit {
		return store.Batch{}, nil, invalid("max_concurrent", fmt.Sprintf("must be 1-%d", MaxConcurrentLimit))
	}
	if in.MaxCredits != nil && *in.MaxCredits < max(cost, 1) {
		f := invalid("max_credits", fmt.Sprintf("%d credits cannot cover one row at effort %s (%d credits)", *in.MaxCredits, effort, cost))
		f.Code = "max_credits_too_low"
		return store.Batch{}, nil, f
	}
	var schemaJSON *string
	if in.CustomJSONSchema != nil {
		if _, err := schema.CompileObject(in.CustomJSONSchema); err != nil {
			return store.Batch{}, nil, invalid("custom_json_schema", err.Error())
		}
		b, err := json.Marshal(in.CustomJSONSchema)
		if err != nil {
			return store.Batch{}, nil, fmt.Errorf("encode custom_json_schema: %w", err)
		}
		schemaJSON = ptr(string(b))
	}
	now := s.now()
	b := store.Batch{
		ID: uuid.NewString(), AccountID: in.AccountID, Name: in.Name, Status: Pending,
		Effort: effort, RequestedEffort: requested, ExpertID: in.ExpertID, Approach: in.Approach,
		ResponseLanguage: in.ResponseLanguage, MaxConcurrent: maxConc, MaxCredits: in.MaxCredits,
		CustomJSONSchema: schemaJSON, CreditsPerRow: cost, ScheduleID: in.ScheduleID, RunNumber: in.RunNumber,
		CreatedAt: now, UpdatedAt: now,
	}
	rows, err := buildRows(b.ID, in, now)
	if err != nil {
		return store.Batch{}, nil, err
	}
	b.TotalRows, b.PendingRows = len(rows), len(rows)
	return b, rows, nil
}

// affordable refuses a batch whose account cannot pay for one row (jobs.NoCredits).
func (s *Service) affordable(ctx context.Context, b store.Batch) error {
	ok, err := s.billing.CanAfford(ctx, b.AccountID, b.Effort)
	if err != nil {
		return err
	}
	if !ok {
		return jobs.NoCredits(b.Effort, b.CreditsPerRow, "a batch needs at least one row's credits; check GET /api/v2/batches/estimate")
	}
	return nil
}

// insert writes a prepared batch, its rows and its first dispatch job in the caller's transaction.
func (s *Service) insert(ctx context.Context, tx *store.Store, b *store.Batch, rows []store.BatchRow) error {
	if err := tx.CreateBatch(ctx, b, rows); err != nil {
		return err
	}
	return s.enqueueDispatch(ctx, tx, b.ID)
}

// buildRows drops blank questions (with their inputs and rows entries) and numbers the rest.
func buildRows(batchID string, in CreateInput, now time.Time) ([]store.BatchRow, error) {
	var rows []store.BatchRow
	for i, q := range in.Questions {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		r := store.BatchRow{BatchID: batchID, RowNumber: len(rows) + 1, Question: q, Status: RowPending, UpdatedAt: now}
		if in.Rows != nil && in.Rows[i] != nil {
			s, err := encode(in.Rows[i])
			if err != nil {
				return nil, fmt.Errorf("rows/%d: %w", i, err)
			}
			r.RowData = &s
		}
		if in.Inputs != nil && in.Inputs[i] != nil {
			s, err := encode(in.Inputs[i])
			if err != nil {
				return nil, fmt.Errorf("inputs/%d: %w", i, err)
			}
			r.Input = &s
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, invalid("questions", "every question is blank")
	}
	return rows, nil
}

func encode(v map[string]any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// effortFor applies the defaults (the expert's effort, else medium) and the tier clamp; it also
// checks that the caller may run the expert.
func (s *Service) effortFor(ctx context.Context, accountID, tier, asked string, expertID *string) (requested, effort string, err error) {
	requested = asked
	if expertID != nil {
		if s.experts == nil {
			return "", "", invalid("expert_id", "no expert "+*expertID+" that this account may run")
		}
		ex, err := s.experts.Resolve(ctx, accountID, *expertID)
		if errors.Is(err, jobs.ErrExpertNotFound) {
			return "", "", invalid("expert_id", "no expert "+*expertID+" that this account may run")
		} else if err != nil {
			return "", "", err
		}
		if requested == "" {
			requested = ex.DefaultEffort
		}
	}
	if requested == "" {
		requested = billing.EffortMedium
	}
	if !billing.KnownEffort(requested) {
		return "", "", invalid("effort", "unknown effort "+requested)
	}
	return requested, s.billing.Config().Clamp(tier, requested), nil
}

// Estimate is a preflight price of rows rows (GET /batches/estimate).
type Estimate struct {
	Rows                        int
	Effort, RequestedEffort     string
	CreditsPerRow, TotalCredits int64
	Downgraded                  bool
}

// Estimate prices a batch with the same defaults and tier clamp as Create; it reserves nothing.
func (s *Service) Estimate(ctx context.Context, accountID, tier string, rows int, effort string, expertID *string) (Estimate, error) {
	requested, eff, err := s.effortFor(ctx, accountID, tier, effort, expertID)
	if err != nil {
		return Estimate{}, err
	}
	per := s.billing.Config().Credits(eff)
	return Estimate{Rows: rows, Effort: eff, RequestedEffort: requested, CreditsPerRow: per, TotalCredits: per * int64(rows),
		Downgraded: eff != requested}, nil
}

// replay answers a create whose Idempotency-Key was seen: the batch as it stands now.
func (s *Service) replay(ctx context.Context, k store.IdempotencyKey) (Created, error) {
	b, err := s.st.BatchByID(ctx, k.JobID)
	if err != nil {
		return Created{}, err
	}
	rows, err := s.st.BatchRows(ctx, b.ID, nil)
	if err != nil {
		return Created{}, err
	}
	return Created{Batch: b, Rows: rows}, nil
}

// enqueueDispatch adds a dispatch job for a batch in the caller's transaction.
func (s *Service) enqueueDispatch(ctx context.Context, tx *store.Store, batchID string) error {
	_, err := s.queue.EnqueueTx(ctx, tx, dispatchArgs{BatchID: batchID}, &river.InsertOpts{Queue: Queue, MaxAttempts: 5})
	return err
}
