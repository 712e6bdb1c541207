package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/store"
)

// Extension is the seam through which a package built on jobs (expert builds) runs its own work
// on this service's queue without jobs importing it. Extensions are fixed at New: River needs
// every worker before the client exists. (The same shape as the batches branch's jobs.Extension,
// without its Settled hook; that one supersedes this file when both are merged.)
type Extension struct {
	// Queues are the extension's own queues and how many of their jobs one process works at once.
	Queues map[string]int
	// Workers registers the extension's River workers.
	Workers func(*river.Workers) error
	// Periodic jobs are enqueued by the elected leader only (once per cluster).
	Periodic []*river.PeriodicJob
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
