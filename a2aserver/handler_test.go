package a2aserver

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// finishedFirst is the library's handler when the job ended before it answered: it returns the
// task already completed.
type finishedFirst struct {
	a2asrv.RequestHandler
	task *a2a.Task
}

func (f finishedFirst) SendMessage(context.Context, *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return f.task, nil
}

// A streaming send whose job completed before the library answered still streams the timeline,
// the report and the terminal status, and only its last update is terminal.
func TestStreamOfAJobThatEndedFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		acct, _, err := st.EnsureAccount(ctx, "stream@example.com", store.TierPro, false)
		require.NoError(t, err)
		now := time.Now().UTC()
		report := "# Answer\n\nDone."
		job := &store.ResearchJob{ID: uuid.NewString(), AccountID: acct.ID, Slug: "ended-first", Status: "completed",
			Question: "Why?", Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}",
			ReportMarkdown: &report, APIVersion: "v2", CreatedAt: now, UpdatedAt: now, CompletedAt: &now}
		require.NoError(t, st.CreateResearchJob(ctx, job))
		require.NoError(t, st.AppendEvents(ctx, job.ID, []*store.ResearchEvent{
			{Kind: "status", Title: "in_progress", Content: "started"},
			{Kind: "search", Title: "searching", Content: "looking"},
			{Kind: "status", Title: "completed", Content: "done"},
		}))
		done := &a2a.Task{ID: a2a.TaskID(job.ID), ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		h := &handler{RequestHandler: finishedFirst{task: done}, follow: jobs.NewFollower(st, log), log: log}

		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Why?"))
		var events []a2a.Event
		for ev, err := range h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
			require.NoError(t, err)
			events = append(events, ev)
		}
		require.Len(t, events, 1+3+2, "the task, three timeline updates, the report, the final status")
		first, ok := events[0].(*a2a.Task)
		require.True(t, ok, "%T", events[0])
		require.Equal(t, a2a.TaskStateSubmitted, first.Status.State)
		for _, ev := range events[1:4] {
			u, ok := ev.(*a2a.TaskStatusUpdateEvent)
			require.True(t, ok, "%T", ev)
			require.False(t, u.Status.State.Terminal())
		}
		_, ok = events[4].(*a2a.TaskArtifactUpdateEvent)
		require.True(t, ok, "%T", events[4])
		last, ok := events[5].(*a2a.TaskStatusUpdateEvent)
		require.True(t, ok, "%T", events[5])
		require.Equal(t, a2a.TaskStateCompleted, last.Status.State)
	})
}
