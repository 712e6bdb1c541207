package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/store"
)

// A run's engine events are written in batches rather than one transaction each: on SQLite every
// transaction takes the one connection the API also needs, and a low-effort run emits a dozen
// events in a few milliseconds. An event waits at most eventFlushAfter (a reader of the timeline or
// the event stream sees it that much later), and every event is written before the checkpoint that
// follows it and before the run's outcome, so the timeline's order is the order of emission.
const (
	eventFlushAfter = 200 * time.Millisecond
	eventBatchMax   = 32
)

// eventBuffer holds a run's events until they are flushed.
type eventBuffer struct {
	st    *store.Store
	jobID string
	now   func() time.Time

	mu      sync.Mutex
	pending []*store.ResearchEvent
	timer   *time.Timer
	// flushing serialises flushes, so batches land in the order they were taken.
	flushing sync.Mutex
}

// add buffers an event, flushing at once when the batch is full.
func (b *eventBuffer) add(ctx context.Context, e engine.Event) error {
	ev, err := eventRow(b.jobID, e)
	if err != nil {
		return err
	}
	ev.CreatedAt = b.now()
	b.mu.Lock()
	b.pending = append(b.pending, &ev)
	full := len(b.pending) >= eventBatchMax
	if !full && b.timer == nil {
		flushCtx := context.WithoutCancel(ctx)
		b.timer = time.AfterFunc(eventFlushAfter, func() { _ = b.flush(flushCtx) })
	}
	b.mu.Unlock()
	if full {
		return b.flush(ctx)
	}
	return nil
}

// flush writes the buffered events in one transaction. On failure they stay buffered, ahead of
// later ones, for the next flush.
func (b *eventBuffer) flush(ctx context.Context) error {
	b.flushing.Lock()
	defer b.flushing.Unlock()
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.mu.Unlock()
	if err := b.st.AppendEvents(ctx, b.jobID, batch); err != nil {
		b.mu.Lock()
		b.pending = append(batch, b.pending...)
		b.mu.Unlock()
		return err
	}
	return nil
}
