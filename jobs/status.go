package jobs

import "github.com/researchd/researchd/store"

// Research job statuses (ResearchJob.status in openapi/v2.json).
const (
	Queued     = "queued"
	InProgress = "in_progress"
	Paused     = "paused"
	Completed  = "completed"
	Failed     = "failed"
	Blocked    = "blocked"
	Cancelled  = "cancelled"
)

// Run kinds and statuses.
const (
	RunInitial      = "initial"
	RunContinuation = "continuation"

	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// Terminal reports whether a job status is terminal.
func Terminal(status string) bool {
	switch status {
	case Completed, Failed, Blocked, Cancelled:
		return true
	}
	return false
}

// statuses hands the state machine's statuses to the store's state changes.
var statuses = store.JobStatuses{
	Active: []string{Queued, InProgress, Paused},
	Queued: Queued, InProgress: InProgress, Completed: Completed, Failed: Failed, Cancelled: Cancelled,
	Terminal:   []string{Completed, Failed, Blocked, Cancelled},
	RunRunning: RunRunning, RunCompleted: RunCompleted, RunFailed: RunFailed, RunInterrupted: RunInterrupted,
}
