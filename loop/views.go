package loop

import (
	"context"

	"github.com/researchd/researchd/store"
)

// Summary is a loop as lists and batches show it: its stored row, without configuration or runs.
type Summary = store.Schedule

// Summary reads the loop that ran a batch (deleted or not), for whoever may read the batch.
func (s *Service) Summary(ctx context.Context, id string) (Summary, error) {
	return s.st.ScheduleByID(ctx, id)
}
