package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/store"
)

// idemPrefix keeps loop creates apart from other creates in the shared idempotency records.
const idemPrefix = "loop:"

// CreateInput is a POST /loops body (already schema-validated) plus who sent it.
type CreateInput struct {
	AccountID string
	Name      string
	Config    Config
	Schedule  ScheduleInput
	// IdempotencyKey and RequestHash (of the body) make a retried create return the original.
	IdempotencyKey, RequestHash string
}

// Loop is a loop with its decoded configuration.
type Loop struct {
	store.Schedule
	Cfg Config
}

// Create validates and stores an active loop; its first run is at next_run_at.
func (s *Service) Create(ctx context.Context, in CreateInput) (Loop, bool, error) {
	k := idempotency.Key{AccountID: in.AccountID, Scope: idemPrefix, Key: in.IdempotencyKey, RequestHash: in.RequestHash, StatusCode: 201, Now: s.reqNow()}
	return idempotency.Create(ctx, s.st, k, in, func(ctx context.Context, k store.IdempotencyKey) (Loop, error) {
		return s.load(ctx, s.st, in.AccountID, k.JobID)
	}, s.create)
}

func (s *Service) create(ctx context.Context, in CreateInput, claim idempotency.Claim) (Loop, error) {
	sched, err := ParseSchedule("schedule", in.Schedule)
	if err != nil {
		return Loop{}, err
	}
	cfg, err := s.normalize(ctx, in.AccountID, in.Config)
	if err != nil {
		return Loop{}, err
	}
	now := s.now()
	l := store.Schedule{
		ID: uuid.NewString(), AccountID: in.AccountID, Name: in.Name, IsActive: true,
		CreatedAt: now, UpdatedAt: now,
	}
	setSchedule(&l, sched)
	next := sched.Next(now)
	l.NextRunAt = &next
	if err := setConfig(&l, cfg); err != nil {
		return Loop{}, err
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, l.ID); err != nil {
			return err
		}
		return tx.CreateSchedule(ctx, &l)
	})
	if err != nil {
		return Loop{}, err
	}
	return Loop{Schedule: l, Cfg: cfg}, nil
}

// normalize drops blank questions with their inputs and rows entries, applies defaults and checks
// what the document's validator cannot, then asks the batch service to check the rest.
func (s *Service) normalize(ctx context.Context, accountID string, c Config) (Config, error) {
	var errs fields
	if c.Inputs != nil && c.ExpertID == nil {
		errs.add("inputs", "inputs require expert_id")
	}
	if c.Inputs != nil && len(c.Inputs) != len(c.Questions) {
		errs.add("inputs", fmt.Sprintf("has %d entries; questions has %d", len(c.Inputs), len(c.Questions)))
	}
	if c.Rows != nil && len(c.Rows) != len(c.Questions) {
		errs.add("rows", fmt.Sprintf("has %d entries; questions has %d", len(c.Rows), len(c.Questions)))
	}
	if len(c.Questions) > MaxQuestions {
		errs.add("questions", fmt.Sprintf("at most %d questions", MaxQuestions))
	}
	if len(errs) > 0 {
		return Config{}, fault.InvalidInput(errs...)
	}
	out := c
	out.Questions, out.Inputs, out.Rows = nil, nil, nil
	if c.Inputs != nil {
		out.Inputs = []map[string]any{}
	}
	if c.Rows != nil {
		out.Rows = []map[string]any{}
	}
	for i, q := range c.Questions {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		out.Questions = append(out.Questions, q)
		if c.Inputs != nil {
			out.Inputs = append(out.Inputs, c.Inputs[i])
		}
		if c.Rows != nil {
			out.Rows = append(out.Rows, c.Rows[i])
		}
	}
	if len(out.Questions) == 0 {
		return Config{}, invalid("questions", "every question is blank")
	}
	if out.ResponseLanguage == "" {
		out.ResponseLanguage = DefaultLanguage
	}
	if out.MaxConcurrent == 0 {
		out.MaxConcurrent = DefaultMaxConcurrent
	}
	if out.MaxConcurrent < 1 || out.MaxConcurrent > MaxConcurrent {
		return Config{}, invalid("max_concurrent", fmt.Sprintf("must be 1-%d", MaxConcurrent))
	}
	if err := s.batches.Validate(ctx, accountID, out); err != nil {
		return Config{}, err
	}
	return out, nil
}

func setSchedule(l *store.Schedule, s Schedule) {
	l.Frequency, l.Hour, l.Minute = s.Frequency, s.Hour, s.Minute
	l.DayOfWeek, l.DayOfMonth, l.Timezone = s.DayOfWeek, s.DayOfMonth, s.Location.String()
}

func setConfig(l *store.Schedule, c Config) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode loop config: %w", err)
	}
	l.Config, l.Effort, l.ExpertID, l.QuestionCount = string(b), c.Effort, c.ExpertID, len(c.Questions)
	return nil
}

// ScheduleOf rebuilds a stored loop's schedule.
func ScheduleOf(l store.Schedule) (Schedule, error) {
	loc, err := LoadLocation(l.Timezone)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %s: %w", l.ID, err)
	}
	return Schedule{Frequency: l.Frequency, Hour: l.Hour, Minute: l.Minute, DayOfWeek: l.DayOfWeek, DayOfMonth: l.DayOfMonth, Location: loc}, nil
}

// Input is a stored schedule as a ScheduleInput (what a PATCH without schedule keeps).
func (s Schedule) Input() ScheduleInput {
	in := ScheduleInput{Frequency: s.Frequency, Hour: ptr(s.Hour), Minute: ptr(s.Minute), DayOfMonth: s.DayOfMonth, Timezone: ptr(s.Location.String())}
	if s.DayOfWeek != nil {
		in.DayOfWeek = ptr(strconv.Itoa(*s.DayOfWeek))
	}
	return in
}

// load reads an account's loop with its configuration; another account's is ErrNotFound.
func (s *Service) load(ctx context.Context, st *store.Store, accountID, id string) (Loop, error) {
	l, err := st.ScheduleByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.AccountID != accountID) {
		return Loop{}, ErrNotFound
	}
	if err != nil {
		return Loop{}, err
	}
	var c Config
	if err := json.Unmarshal([]byte(l.Config), &c); err != nil {
		return Loop{}, fmt.Errorf("decode config of schedule %s: %w", id, err)
	}
	return Loop{Schedule: l, Cfg: c}, nil
}

// loadLive is load refusing a deleted loop (every change answers 404 on one).
func (s *Service) loadLive(ctx context.Context, st *store.Store, accountID, id string) (Loop, error) {
	l, err := s.load(ctx, st, accountID, id)
	if err == nil && l.DeletedAt != nil {
		return Loop{}, ErrNotFound
	}
	return l, err
}

// List pages an account's loops (deleted ones are not listed).
func (s *Service) List(ctx context.Context, accountID string, req store.PageRequest) (store.Page[store.Schedule], error) {
	return s.st.ListSchedules(ctx, accountID, req)
}

// Run is one run of a loop with its batch's state (zero State if the batch is gone).
type Run struct {
	store.ScheduleRun
	State RunState
}

// Detail is a loop with its most recent runs, newest first.
type Detail struct {
	Loop
	Runs []Run
}

// Get reads a loop (deleted ones too) with its recent runs; it records the outcome of runs that
// have ended, so consecutive_failures is current.
func (s *Service) Get(ctx context.Context, accountID, id string) (Detail, error) {
	l, err := s.load(ctx, s.st, accountID, id)
	if err != nil {
		return Detail{}, err
	}
	if _, err := s.settleOpenRuns(ctx, l.ID, nil); err != nil {
		return Detail{}, err
	}
	if l, err = s.load(ctx, s.st, accountID, id); err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, l)
}

func (s *Service) detail(ctx context.Context, l Loop) (Detail, error) {
	runs, err := s.st.ScheduleRuns(ctx, l.ID, RecentRuns)
	if err != nil {
		return Detail{}, err
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.BatchID
	}
	states, err := s.batches.RunStates(ctx, ids)
	if err != nil {
		return Detail{}, fmt.Errorf("run states of schedule %s: %w", l.ID, err)
	}
	d := Detail{Loop: l, Runs: make([]Run, len(runs))}
	for i, r := range runs {
		d.Runs[i] = Run{ScheduleRun: r, State: states[r.BatchID]}
	}
	return d, nil
}

// UpdateInput is a PATCH: Name and Schedule when sent; Merge applies the configuration fields
// sent (nil: none).
type UpdateInput struct {
	Name     *string
	Merge    func(*Config)
	Schedule *ScheduleInput
}

// Update changes a live loop. A new schedule recomputes next_run_at from now (while active).
func (s *Service) Update(ctx context.Context, accountID, id string, in UpdateInput) (Detail, error) {
	l, err := s.loadLive(ctx, s.st, accountID, id)
	if err != nil {
		return Detail{}, err
	}
	rev := store.LoopRevision{Name: in.Name}
	if in.Schedule != nil {
		sched, err := ParseSchedule("schedule", *in.Schedule)
		if err != nil {
			return Detail{}, err
		}
		rev.Schedule = &store.Schedule{}
		setSchedule(rev.Schedule, sched)
		if l.IsActive {
			next := sched.Next(s.now())
			rev.NextRunAt = &next
		}
	}
	if in.Merge != nil {
		cfg := l.Cfg
		in.Merge(&cfg)
		if cfg, err = s.normalize(ctx, accountID, cfg); err != nil {
			return Detail{}, err
		}
		rev.Config = &store.Schedule{}
		if err := setConfig(rev.Config, cfg); err != nil {
			return Detail{}, err
		}
	}
	ok, err := s.st.ReviseLoop(ctx, id, rev)
	if err != nil {
		return Detail{}, err
	}
	if !ok {
		return Detail{}, ErrNotFound // deleted meanwhile
	}
	return s.Get(ctx, accountID, id)
}

// Pause stops a loop firing; pausing a paused loop changes nothing.
func (s *Service) Pause(ctx context.Context, accountID, id string) (store.Schedule, error) {
	l, err := s.loadLive(ctx, s.st, accountID, id)
	if err != nil {
		return store.Schedule{}, err
	}
	if l.IsActive {
		if err := s.st.PauseLoop(ctx, id); err != nil {
			return store.Schedule{}, err
		}
	}
	return s.reread(ctx, accountID, id)
}

// Resume re-activates a paused loop from now (missed firings are not back-filled) and resets
// consecutive_failures; resuming an active loop changes nothing.
func (s *Service) Resume(ctx context.Context, accountID, id string) (store.Schedule, error) {
	l, err := s.loadLive(ctx, s.st, accountID, id)
	if err != nil {
		return store.Schedule{}, err
	}
	if !l.IsActive {
		sched, err := ScheduleOf(l.Schedule)
		if err != nil {
			return store.Schedule{}, err
		}
		if err := s.st.ResumeLoop(ctx, id, sched.Next(s.now())); err != nil {
			return store.Schedule{}, err
		}
	}
	return s.reread(ctx, accountID, id)
}

// Delete soft-deletes a loop: deleted_at set, inactive, no next run. Its batches are kept.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	if _, err := s.loadLive(ctx, s.st, accountID, id); err != nil {
		return err
	}
	ok, err := s.st.DeleteLoop(ctx, id, s.now())
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

func (s *Service) reread(ctx context.Context, accountID, id string) (store.Schedule, error) {
	l, err := s.load(ctx, s.st, accountID, id)
	return l.Schedule, err
}
