package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// maxQuestion is POST /research's limit on a question, applied to a message's text.
const maxQuestion = 20000

// Jobs is the part of the jobs service the executor uses.
type Jobs interface {
	Create(ctx context.Context, r jobs.CreateRequest) (jobs.Created, error)
	Cancel(ctx context.Context, jobID string) (store.ResearchJob, error)
	Follower
}

// Follower follows a job's status and timeline as jobs.Service.Follow does (the process's one
// follower, woken by the writes).
type Follower interface {
	Follow(ctx context.Context, jobID string, after int64, every time.Duration, step func(jobs.Progress) error) error
}

// Executor is the protocol library's agent: a message becomes a research job enqueued through the
// jobs service (same validation, billing and workers as POST /research), and the execution then
// follows the job in the database until it is terminal, saving each change of state. No research
// runs here.
type Executor struct {
	jobs      Jobs
	requestID func(context.Context) string
	slots     *slots
}

var _ a2asrv.AgentExecutor = (*Executor)(nil)

// Execute enqueues the message's research job under the task id and follows it.
func (e *Executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask != nil { // Handler refuses follow-up messages before they get here
			yield(nil, a2a.ErrUnsupportedOperation)
			return
		}
		p, err := principal(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		r, err := createRequest(ec.Message, ec.Metadata)
		if err != nil {
			yield(nil, err)
			return
		}
		// The slot is taken before the job exists, so a refused send creates nothing, and held
		// until the execution stops following the job.
		release, err := e.slots.acquire(p.AccountID)
		if err != nil {
			yield(nil, err)
			return
		}
		defer release()
		r.ID, r.AccountID, r.Tier, r.APIKey = string(ec.TaskID), p.AccountID, p.Tier, p.Secret
		if e.requestID != nil {
			r.RequestID = e.requestID(ctx)
		}
		c, err := e.jobs.Create(ctx, r)
		if err != nil {
			yield(nil, createError(err))
			return
		}
		saved := &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, History: []*a2a.Message{ec.Message}, Metadata: ec.Metadata}
		task := taskView(c.Job, saved)
		if !yield(task, nil) {
			return
		}
		// Follow the job's state (its timeline is what streams read): each new state is saved as a
		// task snapshot; the terminal one ends the execution.
		last := task.Status.State
		err = e.jobs.Follow(ctx, c.Job.ID, math.MaxInt64, 0, func(p jobs.Progress) error {
			t := taskView(p.Job, saved)
			if t.Status.State == last && !p.Final {
				return nil
			}
			last = t.Status.State
			if !yield(t, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(nil, err)
		}
	}
}

// errStopped ends a follow whose consumer stopped listening.
var errStopped = errors.New("stopped")

// Cancel cancels the job (as POST /research/{id}/cancel) and reports the task as it then stands:
// canceled, or the terminal state the job reached first (which the library answers as not
// cancelable). The endpoint's CancelTask cancels through the job directly (handler.CancelTask), so
// this runs only where the library's own cancelation is used.
func (e *Executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		j, err := e.jobs.Cancel(ctx, string(ec.TaskID))
		if err != nil {
			yield(nil, fmt.Errorf("cancel job %s: %w", ec.TaskID, err))
			return
		}
		yield(taskView(j, ec.StoredTask), nil)
	}
}

// createRequest reads a research request from a message: the question is its text parts joined by
// blank lines (other parts are ignored); the request's metadata may carry effort, expert_id and
// json_schema as in POST /research.
func createRequest(m *a2a.Message, meta map[string]any) (jobs.CreateRequest, error) {
	var r jobs.CreateRequest
	if m == nil {
		return r, invalidParams("message is required", "message")
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil && strings.TrimSpace(p.Text()) != "" {
			texts = append(texts, p.Text())
		}
	}
	if len(texts) == 0 {
		return r, invalidParams("the message has no text part: its text is the research question", "message.parts")
	}
	r.Question = strings.Join(texts, "\n\n")
	if utf8.RuneCountInString(r.Question) > maxQuestion {
		return r, invalidParams(fmt.Sprintf("the question is longer than %d characters", maxQuestion), "message.parts")
	}
	for k, v := range meta {
		switch k {
		case "effort":
			s, ok := v.(string)
			if !ok {
				return r, invalidParams("metadata.effort must be a string", "metadata.effort")
			}
			r.Effort = s
		case "expert_id":
			s, ok := v.(string)
			if !ok || s == "" {
				return r, invalidParams("metadata.expert_id must be a non-empty string", "metadata.expert_id")
			}
			r.ExpertID = &s
		case "json_schema":
			o, ok := v.(map[string]any)
			if !ok {
				return r, invalidParams("metadata.json_schema must be an object", "metadata.json_schema")
			}
			r.JSONSchema = o
		}
	}
	return r, nil
}

func invalidParams(msg, field string) error {
	return a2a.NewError(a2a.ErrInvalidParams, "invalid params: "+msg).WithDetails(map[string]any{"code": "validation_error", "field": field})
}

// createError maps what POST /research answers as 4xx to protocol errors; anything else stays an
// internal error.
func createError(err error) error {
	var ce *jobs.CreditsError
	var te *jobs.ExpertTierError
	f := fault.Of(err)
	switch {
	case f != nil && f.Kind == fault.Invalid && len(f.Fields) > 0:
		return invalidParams(f.Error(), "metadata."+f.Fields[0].Field)
	case errors.Is(err, jobs.ErrExpertNotFound):
		return invalidParams("expert not found", "metadata.expert_id")
	case errors.As(err, &te):
		// POST /research answers 403 forbidden; the protocol's permission error is its counterpart.
		return a2a.NewError(a2a.ErrUnauthorized, "permission denied: "+te.Error()).
			WithDetails(map[string]any{"code": jobs.CodeForbidden, "field": "metadata.expert_id"})
	case errors.As(err, &ce):
		return a2a.NewError(a2a.ErrServerError, "insufficient credits: "+ce.Error()).
			WithDetails(map[string]any{"code": "insufficient_credits"})
	case errors.Is(err, billing.ErrInsufficientCredits):
		return a2a.NewError(a2a.ErrServerError, "insufficient credits").WithDetails(map[string]any{"code": "insufficient_credits"})
	}
	return fmt.Errorf("create research job: %w", err)
}
