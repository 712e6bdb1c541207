package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// A2ATask is the agent-to-agent side of a research job (TaskID = the job's id): the A2A task as the
// protocol library last saved it (JSON), with the version its optimistic updates are checked against.
// The job row stays the truth for status and results.
type A2ATask struct {
	TaskID    string `gorm:"type:varchar(36);primaryKey"`
	AccountID string `gorm:"type:varchar(36);not null"`
	ContextID string `gorm:"type:varchar(255);not null"`
	Version   int64  `gorm:"not null"`
	Task      string `gorm:"type:text;not null"` // the saved a2a Task, JSON
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreateA2ATask inserts a task at version 1; ErrConflict when the task already has a row.
func (s *Store) CreateA2ATask(ctx context.Context, t *A2ATask) error {
	t.Version = 1
	return notFound(s.with(ctx).Create(t).Error, "a2a task "+t.TaskID)
}

// UpdateA2ATask replaces a task's saved JSON if its version is still prev and returns the new
// version. A job that has no task row yet (created through REST) is at version 0: an update from 0
// creates the row. ErrConflict: the version moved on (a concurrent update won).
func (s *Store) UpdateA2ATask(ctx context.Context, t A2ATask, prev int64) (int64, error) {
	if prev == 0 {
		err := s.CreateA2ATask(ctx, &t)
		return t.Version, err
	}
	res := s.with(ctx).Model(&A2ATask{}).
		Where("task_id = ? AND account_id = ? AND version = ?", t.TaskID, t.AccountID, prev).
		Updates(map[string]any{"task": t.Task, "version": prev + 1, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return 0, fmt.Errorf("update a2a task %s: %w", t.TaskID, res.Error)
	}
	if res.RowsAffected == 0 {
		return 0, fmt.Errorf("a2a task %s is no longer at version %d: %w", t.TaskID, prev, ErrConflict)
	}
	return prev + 1, nil
}

// A2ATasks loads the task rows of the given jobs, keyed by task id; jobs without one are absent.
func (s *Store) A2ATasks(ctx context.Context, ids []string) (map[string]A2ATask, error) {
	out := map[string]A2ATask{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []A2ATask
	if err := s.with(ctx).Where("task_id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("a2a tasks: %w", err)
	}
	for _, r := range rows {
		out[r.TaskID] = r
	}
	return out, nil
}

// A2ATaskFilter narrows ListA2ATaskJobs. ContextID matches the task's context (a job with no task
// row is its own context: its id).
type A2ATaskFilter struct {
	Statuses     []string // job statuses; empty: any
	ContextID    string
	UpdatedAfter *time.Time
}

// ListA2ATaskJobs pages an account's research jobs (each one an A2A task) newest first, with the
// number of jobs matching the filter.
func (s *Store) ListA2ATaskJobs(ctx context.Context, accountID string, f A2ATaskFilter, req PageRequest) (Page[ResearchJob], int64, error) {
	q := s.with(ctx).Model(&ResearchJob{}).Omit("webhook_key_sealed").Where("account_id = ?", accountID)
	if len(f.Statuses) > 0 {
		q = q.Where("status IN ?", f.Statuses)
	}
	if f.UpdatedAfter != nil {
		q = q.Where("updated_at > ?", *f.UpdatedAfter)
	}
	if f.ContextID != "" {
		inContext := s.with(ctx).Model(&A2ATask{}).Select("task_id").Where("account_id = ? AND context_id = ?", accountID, f.ContextID)
		withRow := s.with(ctx).Model(&A2ATask{}).Select("task_id").Where("account_id = ?", accountID)
		q = q.Where("id IN (?) OR (id = ? AND id NOT IN (?))", inContext, f.ContextID, withRow)
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return Page[ResearchJob]{}, 0, fmt.Errorf("count a2a tasks: %w", err)
	}
	page, err := paginate(q, req, func(j ResearchJob) Cursor { return Cursor{CreatedAt: j.CreatedAt, ID: j.ID} })
	if err != nil {
		return page, 0, fmt.Errorf("list a2a tasks: %w", err)
	}
	return page, total, nil
}
