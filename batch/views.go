package batch

import "github.com/researchd/researchd/store"

// What the API reads of batches: the rows are the views, so the server maps them without
// querying the store.
type (
	// Batch is a batch with its counters as last settled.
	Batch = store.Batch
	// Row is one question of a batch and the job that answers it.
	Row = store.BatchRow
)
