package store

import (
	"context"
	"fmt"
)

// EventsAfter returns up to limit of a job's events whose seq is greater than after, oldest first:
// the replay and follow step of a timeline stream.
func (s *Store) EventsAfter(ctx context.Context, jobID string, after int64, limit int) ([]ResearchEvent, error) {
	var rows []ResearchEvent
	if err := s.with(ctx).Where("job_id = ? AND seq > ?", jobID, after).Order("seq ASC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("events of %s after %d: %w", jobID, after, err)
	}
	return rows, nil
}
