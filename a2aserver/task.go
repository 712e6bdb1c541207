// Package a2aserver is the agent-to-agent endpoint: the A2A protocol (v1.0, and v0.3 through the
// library's compat layer) served by a2a-go over researchd's own pieces. Every A2A task is a research
// job of its caller (task id = job id): TaskStore keeps the protocol's side of a task durably in the
// database beside the job, Executor enqueues the job through the jobs service and follows it, and
// streams are read from the job's stored timeline, so they work in any process.
package a2aserver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// reportArtifactID names the report artifact: a continuation replaces it rather than adding one.
const reportArtifactID a2a.ArtifactID = "report"

// states maps job statuses to task states. A paused job is still the agent's to resume (working);
// a blocked one was refused by policy (rejected).
var states = map[string]a2a.TaskState{
	jobs.Queued: a2a.TaskStateSubmitted, jobs.InProgress: a2a.TaskStateWorking, jobs.Paused: a2a.TaskStateWorking,
	jobs.Completed: a2a.TaskStateCompleted, jobs.Failed: a2a.TaskStateFailed, jobs.Blocked: a2a.TaskStateRejected,
	jobs.Cancelled: a2a.TaskStateCanceled,
}

func stateOf(status string) a2a.TaskState {
	if s, ok := states[status]; ok {
		return s
	}
	return a2a.TaskStateUnspecified
}

// jobStatuses is the inverse of states, for filtering a task list by state.
func jobStatuses(s a2a.TaskState) []string {
	var out []string
	for status, st := range states {
		if st == s {
			out = append(out, status)
		}
	}
	return out
}

// taskView renders a job as its A2A task. saved is the task as the protocol library last stored it
// (nil for a job created through REST): it supplies the context id, the message history and the
// caller's metadata; the job supplies the status, the artifacts and the job's own metadata.
func taskView(j store.ResearchJob, saved *a2a.Task) *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(j.ID), ContextID: j.ID}
	if saved != nil {
		t.ContextID, t.History = saved.ContextID, saved.History
		for k, v := range saved.Metadata {
			t.SetMeta(k, v)
		}
	}
	t.Status = statusOf(j, t)
	if a := reportArtifact(j); a != nil {
		t.Artifacts = []*a2a.Artifact{a}
	}
	t.SetMeta("job", map[string]any{
		"id": j.ID, "slug": j.Slug, "status": j.Status, "effort": j.Effort, "requested_effort": j.RequestedEffort,
	})
	return t
}

// statusOf is the job's status as a task status; a failed job says why in an agent message.
func statusOf(j store.ResearchJob, info a2a.TaskInfoProvider) a2a.TaskStatus {
	ts := j.UpdatedAt.UTC()
	st := a2a.TaskStatus{State: stateOf(j.Status), Timestamp: &ts}
	if j.ErrorMessage != nil && (j.Status == jobs.Failed || j.Status == jobs.Blocked) {
		st.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.NewTextPart(*j.ErrorMessage))
		st.Message.ID = j.ID + "-error"
	}
	return st
}

// reportArtifact is the job's report (Markdown) with its structured output, once a report exists.
func reportArtifact(j store.ResearchJob) *a2a.Artifact {
	if j.ReportMarkdown == nil {
		return nil
	}
	text := a2a.NewTextPart(*j.ReportMarkdown)
	text.MediaType = "text/markdown"
	a := &a2a.Artifact{ID: reportArtifactID, Name: "report.md", Description: "The research report.", Parts: a2a.ContentParts{text}}
	if j.StructuredOutput != nil {
		var so any
		if json.Unmarshal([]byte(*j.StructuredOutput), &so) == nil {
			data := a2a.NewDataPart(map[string]any{"structured_output": so})
			data.MediaType = "application/json"
			a.Parts = append(a.Parts, data)
		}
	}
	if j.ReportSHA != nil {
		a.SetMeta("revision_sha", *j.ReportSHA)
	}
	return a
}

// timelineMessage renders a stored timeline event as an agent message: its title and content as
// text, and the event itself (as GET /research/{id}/timeline shows it) as data.
func timelineMessage(e store.ResearchEvent, info a2a.TaskInfoProvider) *a2a.Message {
	var data map[string]any
	if e.Data != nil {
		_ = json.Unmarshal([]byte(*e.Data), &data)
	}
	title, content, data := jobs.SanitizeEvent(e.Kind, e.Title, e.Content, data)
	text := strings.TrimSpace(title + "\n\n" + content)
	event := map[string]any{
		"event_id": e.ID, "seq": e.Seq, "created_at": e.CreatedAt.UTC().Format(time.RFC3339Nano), "kind": e.Kind,
		"title": title, "content": content, "data": data,
	}
	m := a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.NewTextPart(text), a2a.NewDataPart(event))
	m.ID = e.ID
	return m
}
