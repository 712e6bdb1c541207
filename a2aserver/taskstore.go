package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/store"
)

// Page sizes of ListTasks (the protocol's default is 50, its maximum 100).
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// TaskStore is the protocol library's task store over the database. A task is a research job plus
// its a2a_tasks row; every call is scoped to the caller in the context, and another account's task
// (or one that does not exist) is task not found.
type TaskStore struct {
	st  *store.Store
	log *slog.Logger
}

var _ taskstore.Store = (*TaskStore)(nil)

// NewTaskStore returns the task store over st.
func NewTaskStore(st *store.Store, log *slog.Logger) *TaskStore {
	return &TaskStore{st: st, log: log}
}

// Create stores a new task's protocol side; its job must already exist and be the caller's.
func (s *TaskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	p, j, err := s.ownJob(ctx, task.ID)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	b, err := json.Marshal(task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("encode task %s: %w", task.ID, err)
	}
	row := store.A2ATask{TaskID: j.ID, AccountID: p.AccountID, ContextID: task.ContextID, Task: string(b)}
	err = s.st.CreateA2ATask(ctx, &row)
	if errors.Is(err, store.ErrConflict) {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if err != nil {
		return taskstore.TaskVersionMissing, s.internal(ctx, err)
	}
	return taskstore.TaskVersion(row.Version), nil
}

// Update replaces the task's protocol side if nobody updated it since PrevVersion.
func (s *TaskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	p, j, err := s.ownJob(ctx, req.Task.ID)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	b, err := json.Marshal(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("encode task %s: %w", req.Task.ID, err)
	}
	v, err := s.st.UpdateA2ATask(ctx, store.A2ATask{TaskID: j.ID, AccountID: p.AccountID, ContextID: req.Task.ContextID, Task: string(b)}, int64(req.PrevVersion))
	if errors.Is(err, store.ErrConflict) {
		return taskstore.TaskVersionMissing, fmt.Errorf("task %s: %w", j.ID, taskstore.ErrConcurrentModification)
	}
	if err != nil {
		return taskstore.TaskVersionMissing, s.internal(ctx, err)
	}
	return taskstore.TaskVersion(v), nil
}

// Get returns the caller's task as it stands: the job now, with the stored history and context.
func (s *TaskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	p, j, err := s.ownJob(ctx, id)
	if err != nil {
		return nil, err
	}
	rows, err := s.st.A2ATasks(ctx, []string{j.ID})
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	saved, version, err := decodeRow(rows, j.ID)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	return &taskstore.StoredTask{Task: taskView(j, saved), Version: version, User: p.AccountID}, nil
}

// List pages the caller's tasks (every research job of the account) newest first.
func (s *TaskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = defaultPageSize
	case size < 0 || size > maxPageSize:
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageSize must be between 1 and %d", maxPageSize))
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "historyLength must not be negative")
	}
	cursor, err := store.DecodeCursor(req.PageToken)
	if err != nil {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "pageToken is not one this server issued")
	}
	f := store.A2ATaskFilter{ContextID: req.ContextID, UpdatedAfter: req.StatusTimestampAfter}
	if req.Status != a2a.TaskStateUnspecified {
		if f.Statuses = jobStatuses(req.Status); len(f.Statuses) == 0 {
			return &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, PageSize: size}, nil
		}
	}
	page, total, err := s.st.ListA2ATaskJobs(ctx, p.AccountID, f, store.PageRequest{Limit: size, Cursor: cursor})
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	ids := make([]string, len(page.Items))
	for i, j := range page.Items {
		ids[i] = j.ID
	}
	rows, err := s.st.A2ATasks(ctx, ids)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, len(page.Items)), TotalSize: int(total), PageSize: size}
	for _, j := range page.Items {
		saved, _, err := decodeRow(rows, j.ID)
		if err != nil {
			return nil, s.internal(ctx, err)
		}
		t := taskView(j, saved)
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		if n := req.HistoryLength; n != nil && *n < len(t.History) {
			t.History = t.History[len(t.History)-*n:]
		}
		out.Tasks = append(out.Tasks, t)
	}
	if page.Next != nil {
		out.NextPageToken = page.Next.Encode()
	}
	return out, nil
}

// ownJob loads the caller's job behind a task id; anything else is task not found.
func (s *TaskStore) ownJob(ctx context.Context, id a2a.TaskID) (auth.Principal, store.ResearchJob, error) {
	p, err := principal(ctx)
	if err != nil {
		return p, store.ResearchJob{}, err
	}
	j, err := s.st.ResearchJobByID(ctx, string(id))
	if errors.Is(err, store.ErrNotFound) || err == nil && j.AccountID != p.AccountID {
		return p, store.ResearchJob{}, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %q not found", id))
	}
	if err != nil {
		return p, j, s.internal(ctx, err)
	}
	return p, j, nil
}

// internal logs a failure the caller cannot act on and answers a plain internal error, so no
// database detail reaches the response.
func (s *TaskStore) internal(ctx context.Context, err error) error {
	s.log.ErrorContext(ctx, "a2a task store", "error", err)
	return a2a.NewError(a2a.ErrInternalError, "internal error")
}

// decodeRow returns a job's stored task and its version; a job without a row is at version 0 with
// nothing saved.
func decodeRow(rows map[string]store.A2ATask, id string) (*a2a.Task, taskstore.TaskVersion, error) {
	row, ok := rows[id]
	if !ok {
		return nil, taskstore.TaskVersionMissing, nil
	}
	var t a2a.Task
	if err := json.Unmarshal([]byte(row.Task), &t); err != nil {
		return nil, 0, fmt.Errorf("decode a2a task %s: %w", id, err)
	}
	return &t, taskstore.TaskVersion(row.Version), nil
}

func principal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return p, a2a.NewError(a2a.ErrUnauthenticated, "credentials required")
	}
	return p, nil
}
