package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/store"
)

// Extension is the seam through which a package built on jobs (batches) runs its own work on this
// service's queue and hears about jobs settling, without jobs importing it. Extensions are fixed
// at New: River needs every worker before the client exists.
type Extension struct {
	// Queues are the extension's own queues and how many of their jobs one process works at once.
	Queues map[string]int
	// Workers registers the extension's River workers.
	Workers func(*river.Workers) error
	// Periodic jobs are enqueued by the elected leader only (once per cluster).
	Periodic []*river.PeriodicJob
	// Settled is called inside the transaction that moves a job to a terminal status (completed,
	// failed, cancelled; errorCode is the job's error code when failed). It commits or rolls back
	// with that transition, so no settlement is ever missed or seen twice; an error fails the
	// transition (the worker retries it).
	Settled func(ctx context.Context, tx *store.Store, jobID, status, errorCode string) error
}

// EnqueueTx inserts an extension's queue entry in the caller's transaction (a Store bound by
// InTx): the entry exists if and only if the transaction commits.
func (s *Service) EnqueueTx(ctx context.Context, tx *store.Store, args river.JobArgs, opts *river.InsertOpts) error {
	t, err := sqlTx(tx)
	if err != nil {
		return err
	}
	if _, err := s.client.InsertTx(ctx, t, args, opts); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// settled tells every extension that a job reached a terminal status, inside the transition's
// transaction.
func (s *Service) settled(ctx context.Context, tx *store.Store, jobID, status, errorCode string) error {
	for _, e := range s.extensions {
		if e.Settled == nil {
			continue
		}
		if err := e.Settled(ctx, tx, jobID, status, errorCode); err != nil {
			return fmt.Errorf("job %s settled (%s): %w", jobID, status, err)
		}
	}
	return nil
}
