package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/researchd/researchd/store"
)

// followBatch bounds how many timeline events one step of Follow reads.
const followBatch = 200

// Progress is one step of following a job: what is new since the previous step.
type Progress struct {
	Job     store.ResearchJob     // the job as just read
	Events  []store.ResearchEvent // timeline events after the previous step's, oldest first
	Changed bool                  // Job.Status differs from the previous step's (true on the first step)
	Final   bool                  // the job is terminal and every event was handed over: the last step
}

// FollowStore is what Follow reads.
type FollowStore interface {
	ResearchJobByID(ctx context.Context, id string) (store.ResearchJob, error)
	EventsAfter(ctx context.Context, jobID string, after int64, limit int) ([]store.ResearchEvent, error)
}

// Follow reads a job's status and its timeline after seq `after` every `every`, handing each step to
// step (also a step with nothing new, so a caller can keep its connection alive), until the job is
// terminal and every event was handed over, ctx ends (nil) or step fails (its error). It only reads
// the database, so a follower works in any process and never holds up the worker writing the job.
func Follow(ctx context.Context, st FollowStore, jobID string, after int64, every time.Duration, step func(Progress) error) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	last := ""
	for {
		if ctx.Err() != nil {
			return nil
		}
		// Status first, then events: a terminal status read here means every event of the job is
		// already stored, so draining them before the final step loses none.
		j, err := st.ResearchJobByID(ctx, jobID)
		if err != nil {
			return fmt.Errorf("follow %s: %w", jobID, err)
		}
		evs, err := st.EventsAfter(ctx, jobID, after, followBatch)
		if err != nil {
			return fmt.Errorf("follow %s: %w", jobID, err)
		}
		if n := len(evs); n > 0 {
			after = evs[n-1].Seq
		}
		drained := len(evs) < followBatch
		p := Progress{Job: j, Events: evs, Changed: j.Status != last, Final: drained && store.JobTerminal(j.Status)}
		last = j.Status
		if err := step(p); err != nil || p.Final {
			return err
		}
		if !drained {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}
