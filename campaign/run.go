package campaign

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// advanceArgs asks the dispatcher to move one campaign on: start it, start stages whose inputs
// completed, claim work within each stage's concurrency, finish it.
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
	return nil
}

// chunkArgs asks a worker to answer the records a chunk holds.
type chunkArgs struct {
	CampaignID string `json:"campaign_id"`
	StageKey   string `json:"stage_key"`
	Chunk      string `json:"chunk"`
}

func (chunkArgs) Kind() string { return "campaign_chunk" }

type chunkWorker struct {
	river.WorkerDefaults[chunkArgs]
	svc *Service
}

func (w *chunkWorker) Work(ctx context.Context, job *river.Job[chunkArgs]) error { return nil }

// deliverArgs asks for one deliverable file to be built.
type deliverArgs struct {
	CampaignID     string `json:"campaign_id"`
	DeliverableKey string `json:"deliverable_key"`
}

func (deliverArgs) Kind() string { return "campaign_deliver" }

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	svc *Service
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error { return nil }

// sweepArgs is the periodic safety net.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "campaign_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	svc *Service
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error { return nil }
