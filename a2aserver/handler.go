package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// Capabilities are what the agent card advertises and the handler enforces: streaming, no push
// notifications, no extended card.
var Capabilities = a2a.AgentCapabilities{Streaming: true}

// handler is the library's request handler with these changes, all so that the database, not one
// process's memory, is what a task is. Streams (SendStreamingMessage, SubscribeToTask) are read
// from the job's stored timeline rather than from the in-process event queue, so a client can
// subscribe through any process, after a restart, and see every timeline event. CancelTask cancels
// the job itself (whichever process follows it sees the change). A message naming an existing task
// is refused: a task is one research job, asked once. Push configuration in a message is refused
// like the push methods.
type handler struct {
	a2asrv.RequestHandler
	jobs  Jobs
	tasks *TaskStore
	// follow reads streams (Jobs, except in tests).
	follow Follower
	log    *slog.Logger
}

// SendMessage starts a task; the reply waits for the job unless configuration.returnImmediately
// (v0.3: blocking false) is set.
func (h *handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if err := h.admit(ctx, req); err != nil {
		return nil, err
	}
	return h.RequestHandler.SendMessage(ctx, req)
}

// SendStreamingMessage starts a task (the library answers with the submitted task at once) and
// streams the job from the database until it is terminal.
func (h *handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if err := h.admit(ctx, req); err != nil {
			yield(nil, err)
			return
		}
		r := *req
		cfg := a2a.SendMessageConfig{}
		if req.Config != nil {
			cfg = *req.Config
		}
		cfg.ReturnImmediately = true
		r.Config = &cfg
		res, err := h.RequestHandler.SendMessage(ctx, &r)
		if err != nil {
			yield(nil, err)
			return
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			yield(nil, a2a.ErrInvalidAgentResponse)
			return
		}
		if task.Status.State.Terminal() {
			// The job ended before the library answered (a run without sources takes milliseconds):
			// the stream still tells it from submission, and only its last update is terminal.
			submitted := *task
			submitted.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: task.Status.Timestamp}
			submitted.Artifacts = nil
			task = &submitted
		}
		h.stream(ctx, task, yield)
	}
}

// SubscribeToTask streams a task that is not terminal yet, from its first timeline event.
func (h *handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if req == nil || req.ID == "" {
			yield(nil, a2a.NewError(a2a.ErrInvalidParams, "invalid params: id is required"))
			return
		}
		task, err := h.RequestHandler.GetTask(ctx, &a2a.GetTaskRequest{ID: req.ID})
		if err != nil {
			yield(nil, err)
			return
		}
		if task.Status.State.Terminal() {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, "the task is "+task.Status.State.String()+": a terminal task has nothing to stream; use GetTask"))
			return
		}
		h.stream(ctx, task, yield)
	}
}

// CancelTask cancels the task's job as POST /research/{id}/cancel does. A canceled task is answered
// as it is; another terminal one (or one whose job finished first) is not cancelable.
func (h *handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req == nil || req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "invalid params: id is required")
	}
	st, err := h.tasks.Get(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if s := st.Task.Status.State; s.Terminal() {
		if s == a2a.TaskStateCanceled {
			return st.Task, nil
		}
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "the task is "+s.String()+" and cannot be canceled")
	}
	j, err := h.jobs.Cancel(ctx, string(req.ID))
	if err != nil {
		return nil, h.tasks.internal(ctx, fmt.Errorf("cancel job %s: %w", req.ID, err))
	}
	if j.Status != jobs.Cancelled {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "the task became "+stateOf(j.Status).String()+" first and cannot be canceled")
	}
	st, err = h.tasks.Get(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	return st.Task, nil
}

// admit refuses what the library would otherwise start an execution for.
func (h *handler) admit(ctx context.Context, req *a2a.SendMessageRequest) error {
	if req == nil || req.Message == nil {
		return a2a.NewError(a2a.ErrInvalidParams, "invalid params: message is required")
	}
	if req.Config != nil && req.Config.PushConfig != nil {
		return a2a.ErrPushNotificationNotSupported
	}
	if id := req.Message.TaskID; id != "" {
		if _, err := h.tasks.Get(ctx, id); err != nil {
			return err
		}
		return a2a.NewError(a2a.ErrUnsupportedOperation, "a task is one research job and takes no further messages: send a new message without taskId (or continue the job through POST /api/v2/research/{id}/continue)")
	}
	_, err := createRequest(req.Message, req.Metadata)
	return err
}

// stream sends first, then the job's timeline from its first event, each as a status update
// carrying the event, then the report artifact and the terminal status, which ends the stream.
func (h *handler) stream(ctx context.Context, first *a2a.Task, yield func(a2a.Event, error) bool) {
	if !yield(first, nil) || first.Status.State.Terminal() {
		return
	}
	state := first.Status.State
	err := h.follow.Follow(ctx, string(first.ID), 0, 0, func(p jobs.Progress) error {
		send := func(e a2a.Event) error {
			if !yield(e, nil) {
				return errStopped
			}
			return nil
		}
		for _, e := range p.Events {
			// Events before the end are reported in a working state: only the last update of the
			// stream may carry a terminal one.
			if s := eventState(e); s != a2a.TaskStateUnspecified && !s.Terminal() {
				state = s
			}
			u := a2a.NewStatusUpdateEvent(first, state, timelineMessage(e, first))
			ts := e.CreatedAt.UTC()
			u.Status.Timestamp = &ts
			u.SetMeta("seq", e.Seq)
			if err := send(u); err != nil {
				return err
			}
		}
		now := stateOf(p.Job.Status)
		switch {
		case p.Final:
			if a := reportArtifact(p.Job); a != nil {
				if err := send(&a2a.TaskArtifactUpdateEvent{TaskID: first.ID, ContextID: first.ContextID, Artifact: a, LastChunk: true}); err != nil {
					return err
				}
			}
			return send(&a2a.TaskStatusUpdateEvent{TaskID: first.ID, ContextID: first.ContextID, Status: statusOf(p.Job, first)})
		case now != state && !now.Terminal():
			state = now
			return send(&a2a.TaskStatusUpdateEvent{TaskID: first.ID, ContextID: first.ContextID, Status: statusOf(p.Job, first)})
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopped) {
		h.log.ErrorContext(ctx, "a2a stream", "task_id", first.ID, "error", err)
		yield(nil, a2a.NewError(a2a.ErrInternalError, "internal error"))
	}
}

// eventState is the task state a timeline status event records (its title is the job status).
func eventState(e store.ResearchEvent) a2a.TaskState {
	if e.Kind != "status" {
		return a2a.TaskStateUnspecified
	}
	return stateOf(e.Title)
}
