package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/store"
)

// advanceArgs asks the dispatcher to move one campaign on: start it, start the stages whose
// inputs completed, claim work within each stage's concurrency and budgets, finish it.
type advanceArgs struct {
	CampaignID string `json:"campaign_id"`
}

func (advanceArgs) Kind() string { return "campaign_advance" }

func advanceOpts() *river.InsertOpts { return &river.InsertOpts{Queue: QueueDispatch, MaxAttempts: 10} }

type advanceWorker struct {
	river.WorkerDefaults[advanceArgs]
	svc *Service
}

func (w *advanceWorker) Timeout(*river.Job[advanceArgs]) time.Duration { return 10 * time.Minute }

func (w *advanceWorker) Work(ctx context.Context, job *river.Job[advanceArgs]) error {
	return w.svc.Advance(ctx, job.Args.CampaignID)
}

// sweepArgs is the periodic safety net: advance every active campaign (a lost queue entry) and
// resume those paused for credits once the balance covers the next worker.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "campaign_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	svc *Service
}

func (w *sweepWorker) Timeout(*river.Job[sweepArgs]) time.Duration { return 5 * time.Minute }

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.svc.Sweep(ctx)
}

// Advance moves one campaign on, with its row locked.
func (s *Service) Advance(ctx context.Context, id string) error {
	return s.st.InTx(ctx, func(tx *store.Store) error {
		c, err := tx.LockCampaign(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.advanceTx(ctx, tx, c)
	})
}

// Sweep advances active campaigns and resumes those paused for credits when credits returned.
func (s *Service) Sweep(ctx context.Context) error {
	cs, err := s.st.CampaignsIn(ctx, []string{Approved, Running, NeedsAttention}, 500)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range cs {
		if c.Status == NeedsAttention && deref(c.AttentionReason) != ReasonQuotaExhausted {
			continue
		}
		err := s.st.InTx(ctx, func(tx *store.Store) error {
			c, err := tx.LockCampaign(ctx, c.ID)
			if err != nil {
				return err
			}
			if c.Status == NeedsAttention {
				if deref(c.AttentionReason) != ReasonQuotaExhausted {
					return nil // another cause since the list was read
				}
				if ok, err := s.resumeForCredits(ctx, tx, &c); err != nil || !ok {
					return err
				}
			}
			return s.advanceTx(ctx, tx, c)
		})
		if err != nil {
			s.log.WarnContext(ctx, "campaign sweep", "campaign_id", c.ID, "error", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resumeForCredits turns a campaign paused with quota_exhausted back to running once the balance
// covers one worker of a running stage.
func (s *Service) resumeForCredits(ctx context.Context, tx *store.Store, c *store.Campaign) (bool, error) {
	ok, err := s.creditsForNext(ctx, tx, *c)
	if err != nil || !ok {
		return false, err
	}
	return true, s.resume(ctx, tx, c)
}

// creditsForNext reports whether the balance covers one worker of a running stage.
func (s *Service) creditsForNext(ctx context.Context, tx *store.Store, c store.Campaign) (bool, error) {
	stages, err := tx.CampaignStages(ctx, c.ID)
	if err != nil {
		return false, err
	}
	for _, st := range stages {
		if st.Status != StageRunning || st.Effort == nil {
			continue
		}
		n, err := s.billing.AvailableUnits(ctx, tx, c.AccountID, *st.Effort)
		if err != nil {
			return false, err
		}
		return n != 0, nil
	}
	return true, nil
}

// resume clears the attention and sets the campaign running.
func (s *Service) resume(ctx context.Context, tx *store.Store, c *store.Campaign) error {
	now := s.now()
	c.Status, c.AttentionReason = Running, nil
	return tx.ResumeCampaign(ctx, statuses, c.ID, now)
}

// run is one pass of the dispatcher over a locked campaign.
type run struct {
	s      *Service
	tx     *store.Store
	c      store.Campaign
	plan   Plan
	stages map[string]*store.CampaignStage
	effort map[string]string
}

// advanceTx is the dispatcher: called with the campaign locked, in the transaction of whatever
// changed (approval, a chunk settling, a deliverable built, the sweep).
func (s *Service) advanceTx(ctx context.Context, tx *store.Store, c store.Campaign) error {
	if c.Status != Approved && c.Status != Running {
		return nil
	}
	r, err := s.load(ctx, tx, c)
	if err != nil {
		return err
	}
	now := s.now()
	if c.Status == Approved {
		if err := tx.StartCampaign(ctx, statuses, c.ID, now); err != nil {
			return err
		}
		r.c.Status = Running
	}
	if ok, err := r.keyUsable(ctx); err != nil || !ok {
		return err
	}
	for _, ps := range r.plan.Stages {
		if stop, err := r.step(ctx, ps); err != nil || stop {
			return err
		}
	}
	for _, ps := range r.plan.Stages {
		if stop, err := r.fill(ctx, ps); err != nil || stop {
			return err
		}
	}
	return r.finish(ctx)
}

func (s *Service) load(ctx context.Context, tx *store.Store, c store.Campaign) (*run, error) {
	v, err := decodeView(c, nil)
	if err != nil {
		return nil, err
	}
	rows, err := tx.CampaignStages(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	r := &run{s: s, tx: tx, c: c, plan: v.Plan, stages: map[string]*store.CampaignStage{}, effort: map[string]string{}}
	for i := range rows {
		r.stages[rows[i].Key] = &rows[i]
	}
	for _, m := range v.Workforce.Members {
		r.effort[m.StageKey] = m.Effort
	}
	return r, nil
}

// keyUsable checks the API key the campaign runs under: revoked, or without the campaigns scope,
// the campaign needs attention (key_unusable) until a retry re-binds it.
func (r *run) keyUsable(ctx context.Context) (bool, error) {
	if r.c.ApprovedKeyID == nil {
		return true, nil
	}
	k, err := r.tx.APIKeyByID(ctx, *r.c.ApprovedKeyID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	scopes := k.ScopeList()
	if err == nil && k.RevokedAt == nil && (slices.Contains(scopes, "campaigns") || slices.Contains(scopes, "admin")) {
		return true, nil
	}
	return false, r.attention(ctx, ReasonKeyUnusable, nil,
		"the API key that approved the campaign was revoked or lost the campaigns scope; retry with a usable key to continue under it", ActionRetry)
}

// step starts a pending stage whose inputs completed, and finishes a running stage whose records
// all settled. stop is set when the campaign needs attention.
func (r *run) step(ctx context.Context, ps Stage) (stop bool, err error) {
	st := r.stages[ps.Key]
	switch st.Status {
	case StagePending:
		for _, d := range ps.DependsOn {
			if r.stages[d].Status != StageCompleted {
				return false, nil
			}
		}
		return false, r.start(ctx, ps, st)
	case StageRunning:
		return r.settleStage(ctx, ps, st)
	case StageFailed:
		return true, nil
	}
	return false, nil
}

// start begins a stage: a per-entity stage takes its records (the supplied ones, or the accepted
// records of the stages it depends on); a single-worker stage gets its one worker.
func (r *run) start(ctx context.Context, ps Stage, st *store.CampaignStage) error {
	now := r.s.now()
	effort := r.effort[ps.Key]
	st.Status, st.Effort = StageRunning, &effort
	if ps.Single() {
		w := store.CampaignRecord{CampaignID: r.c.ID, StageKey: ps.Key, Seq: store.WorkerSeq, EntityKey: "worker", Status: RecordPending, Given: "{}", UpdatedAt: now}
		if err := r.tx.InsertCampaignRecords(ctx, []store.CampaignRecord{w}); err != nil {
			return err
		}
		return r.tx.StartCampaignStage(ctx, statuses, r.c.ID, ps.Key, store.StageStart{Effort: effort}, now)
	}
	n, fields, err := r.s.materialize(ctx, r.tx, r.c, ps, now)
	if err != nil {
		return err
	}
	st.RecordsTotal = n
	return r.tx.StartCampaignStage(ctx, statuses, r.c.ID, ps.Key, store.StageStart{Effort: effort, RecordsTotal: &n, GivenFields: &fields}, now)
}

// settleStage finishes a running stage whose work is all settled: completed when a record
// succeeded (or there was none to do), else failed, and the campaign needs attention.
func (r *run) settleStage(ctx context.Context, ps Stage, st *store.CampaignStage) (bool, error) {
	if st.ChunksRunning > 0 {
		return false, nil
	}
	if ps.Single() {
		w, err := r.tx.CampaignRecordAt(ctx, r.c.ID, ps.Key, store.WorkerSeq)
		if err != nil {
			return false, err
		}
		switch w.Status {
		case RecordDone:
			return false, r.completeStage(ctx, ps, st)
		case RecordFailed:
			return true, r.failStage(ctx, ps, fmt.Sprintf("the %s worker of stage %s failed (%s)", ps.Fanout, ps.Key, deref(w.ErrorCode)))
		}
		return false, nil
	}
	if st.RecordsDone+st.RecordsFailed < st.RecordsTotal {
		return false, nil
	}
	if st.RecordsDone == 0 && st.RecordsTotal > 0 {
		return true, r.failStage(ctx, ps, fmt.Sprintf("no record of stage %s succeeded (%d failed)", ps.Key, st.RecordsFailed))
	}
	return false, r.completeStage(ctx, ps, st)
}

func (r *run) completeStage(ctx context.Context, ps Stage, st *store.CampaignStage) error {
	st.Status = StageCompleted
	if err := r.tx.CompleteCampaignStage(ctx, statuses, r.c.ID, ps.Key, r.s.now()); err != nil {
		return err
	}
	for _, d := range r.plan.Deliverables {
		if d.StageKey == ps.Key {
			if _, err := r.s.queue.EnqueueTx(ctx, r.tx, deliverArgs{CampaignID: r.c.ID, DeliverableKey: d.Key},
				&river.InsertOpts{Queue: QueueDispatch, MaxAttempts: 5}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) failStage(ctx context.Context, ps Stage, msg string) error {
	if err := r.tx.FailCampaignStage(ctx, statuses, r.c.ID, ps.Key, msg); err != nil {
		return err
	}
	return r.attention(ctx, ReasonStageFailed, &ps.Key, msg+"; retry runs its failed work again", ActionRetry)
}

// attention pauses the campaign: no new worker starts until the cause is resolved.
func (r *run) attention(ctx context.Context, reason string, stage *string, msg, action string) error {
	now := r.s.now()
	r.c.Status = NeedsAttention
	return r.tx.PauseCampaign(ctx, statuses, r.c.ID, store.Attention{Reason: reason, Stage: stage, Message: msg, Action: action}, now)
}

// fill claims chunks of a running stage's pending work while the stage has free concurrency and
// the stage budget, the campaign budget and the account's credits cover them. When nothing runs
// and nothing can start, the campaign needs attention.
func (r *run) fill(ctx context.Context, ps Stage) (stop bool, err error) {
	st := r.stages[ps.Key]
	if st.Status != StageRunning || r.c.Status != Running {
		return false, nil
	}
	size := r.s.cfg.ChunkSize
	if ps.Single() {
		size = 1
	}
	effort := r.effort[ps.Key]
	cost := r.s.billing.Config().Credits(effort)
	for st.ChunksRunning < ps.Concurrency {
		k, why := r.affordable(ctx, ps, st, size, cost)
		if why.err != nil {
			return false, why.err
		}
		if k == 0 {
			if r.running() > 0 {
				return false, nil // settling chunks may free budget or credits
			}
			return true, r.attention(ctx, why.reason, why.stage, why.msg, why.action)
		}
		chunk := uuid.NewString()
		var n int
		// A savepoint: a hold refused by a concurrent spender undoes the claim, not the transaction.
		err := r.tx.InTx(ctx, func(tx *store.Store) error {
			var err error
			if n, err = tx.ClaimCampaignRecords(ctx, statuses, r.c.ID, ps.Key, chunk, k, r.s.now()); err != nil || n == 0 {
				return err
			}
			return r.s.billing.HoldUnits(ctx, tx, billing.Units{AccountID: r.c.AccountID, RunID: chunkRun(chunk), JobID: r.c.ID, Effort: effort, Count: int64(n)})
		})
		if errors.Is(err, billing.ErrInsufficientCredits) {
			return false, nil // the next settle or sweep looks again
		}
		if err != nil || n == 0 {
			return false, err
		}
		held := cost * int64(n)
		st.ChunksRunning++
		st.CreditsReserved += held
		r.c.CreditsReserved += held
		if err := r.tx.ReserveCampaignCredits(ctx, r.c.ID, ps.Key, held); err != nil {
			return false, err
		}
		if _, err := r.s.queue.EnqueueTx(ctx, r.tx, chunkArgs{CampaignID: r.c.ID, StageKey: ps.Key, Chunk: chunk},
			&river.InsertOpts{Queue: QueueWork, MaxAttempts: 5}); err != nil {
			return false, err
		}
		if n < k {
			return false, nil // no more pending work in this stage
		}
	}
	return false, nil
}

// blocked says why no worker can start.
type blocked struct {
	reason, msg, action string
	stage               *string
	err                 error
}

// affordable is how many workers (up to size) the budgets and the balance cover, or why none.
func (r *run) affordable(ctx context.Context, ps Stage, st *store.CampaignStage, size int, cost int64) (int, blocked) {
	k := int64(size)
	if cost > 0 {
		if ps.MaxCredits != nil {
			left := *ps.MaxCredits - st.CreditsSpent - st.CreditsReserved
			if k = min(k, left/cost); k <= 0 {
				return 0, blocked{reason: ReasonBudgetExhausted, stage: &ps.Key, action: ActionCancel,
					msg: fmt.Sprintf("stage %s spent its budget (%d of %d credits); the budget was approved with the plan and cannot be raised", ps.Key, st.CreditsSpent, *ps.MaxCredits)}
			}
		}
		if b := r.c.MaxCredits; b != nil {
			left := *b - r.c.CreditsSpent - r.c.CreditsReserved
			if k = min(k, left/cost); k <= 0 {
				return 0, blocked{reason: ReasonBudgetExhausted, action: ActionCancel,
					msg: fmt.Sprintf("the campaign spent its budget (%d of %d credits); the budget was approved with the plan and cannot be raised", r.c.CreditsSpent, *b)}
			}
		}
	}
	n, err := r.s.billing.AvailableUnits(ctx, r.tx, r.c.AccountID, r.effort[ps.Key])
	if err != nil {
		return 0, blocked{err: err}
	}
	if n >= 0 {
		if k = min(k, n); k <= 0 {
			return 0, blocked{reason: ReasonQuotaExhausted, action: ActionAddCredits,
				msg: fmt.Sprintf("the account's credits cannot cover the next worker of stage %s (%d credits at effort %s)", ps.Key, cost, r.effort[ps.Key])}
		}
	}
	return int(k), blocked{}
}

// running counts the chunks in flight over all stages.
func (r *run) running() int {
	n := 0
	for _, st := range r.stages {
		n += st.ChunksRunning
	}
	return n
}

// finish completes the campaign once every stage completed and every deliverable is built.
func (r *run) finish(ctx context.Context) error {
	if r.c.Status != Running {
		return nil
	}
	for _, st := range r.stages {
		if st.Status != StageCompleted {
			return nil
		}
	}
	built, err := r.tx.CampaignArtifacts(ctx, r.c.ID)
	if err != nil || len(built) < len(r.plan.Deliverables) {
		return err
	}
	_, err = r.tx.CompleteCampaign(ctx, statuses, r.c.ID, r.s.now())
	return err
}

// chunkRun is the metering id of a chunk (its credit hold and its charge).
func chunkRun(chunk string) string { return "campaign-chunk:" + chunk }
