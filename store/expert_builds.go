package store

import (
	"context"
	"fmt"
	"time"
)

// BuildStatuses are the statuses of package expertbuild's state machine that the queries below
// write and filter by; package expertbuild defines them.
type BuildStatuses struct {
	Queued, Running, Succeeded, Failed string
}

// ExpertBuild is an asynchronous expert build (POST /experts/build): the request, and once it ends
// the draft it created or why it failed.
type ExpertBuild struct {
	ID           string `gorm:"type:varchar(36);primaryKey"`
	AccountID    string `gorm:"type:varchar(36);not null"`
	Status       string `gorm:"type:varchar(16);not null"`
	Request      string `gorm:"type:text;not null"` // the request body, JSON
	ExpertID     *string
	ErrorCode    *string
	ErrorMessage *string
	CreatedAt    time.Time `gorm:"not null"`
	FinishedAt   *time.Time
}

// CreateExpertBuild inserts a build.
func (s *Store) CreateExpertBuild(ctx context.Context, b *ExpertBuild) error {
	if err := s.with(ctx).Create(b).Error; err != nil {
		return fmt.Errorf("create expert build: %w", err)
	}
	return nil
}

// ExpertBuildByID loads a build.
func (s *Store) ExpertBuildByID(ctx context.Context, id string) (ExpertBuild, error) {
	var b ExpertBuild
	err := s.with(ctx).Where("id = ?", id).Take(&b).Error
	return b, notFound(err, "expert build "+id)
}

// StartExpertBuild moves a queued build to running; a build in any other status is left as it is.
func (s *Store) StartExpertBuild(ctx context.Context, st BuildStatuses, id string) error {
	err := s.with(ctx).Model(&ExpertBuild{}).Where("id = ? AND status = ?", id, st.Queued).Update("status", st.Running).Error
	if err != nil {
		return fmt.Errorf("start expert build %s: %w", id, err)
	}
	return nil
}

// FinishExpertBuild ends a build that has not ended yet: succeeded with expertID, or failed with
// code and message. It reports whether this call ended it (false: it had already ended).
func (s *Store) FinishExpertBuild(ctx context.Context, st BuildStatuses, id string, expertID *string, code, message *string, at time.Time) (bool, error) {
	status := st.Succeeded
	if code != nil {
		status = st.Failed
	}
	res := s.with(ctx).Model(&ExpertBuild{}).Where("id = ? AND status IN ?", id, []string{st.Queued, st.Running}).
		Updates(map[string]any{"status": status, "expert_id": expertID, "error_code": code, "error_message": message, "finished_at": at})
	if res.Error != nil {
		return false, fmt.Errorf("finish expert build %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// UnfinishedExpertBuildsBefore lists builds still queued or running that were created before t.
func (s *Store) UnfinishedExpertBuildsBefore(ctx context.Context, st BuildStatuses, t time.Time, limit int) ([]ExpertBuild, error) {
	var out []ExpertBuild
	err := s.with(ctx).Where("status IN ? AND created_at < ?", []string{st.Queued, st.Running}, t).Order("created_at").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("unfinished expert builds: %w", err)
	}
	return out, nil
}
