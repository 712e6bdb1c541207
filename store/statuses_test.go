package store_test

import "github.com/researchd/researchd/store"

// The statuses of the domain packages' state machines, as they define them: store is handed them
// and defines none.
const (
	jobQueued     = "queued"
	jobInProgress = "in_progress"
	jobPaused     = "paused"
	jobCompleted  = "completed"
	jobFailed     = "failed"
	jobBlocked    = "blocked"
	jobCancelled  = "cancelled"

	runInitial      = "initial"
	runContinuation = "continuation"
	runRunning      = "running"
	runCompleted    = "completed"
)

var (
	activeJobs  = []string{jobQueued, jobInProgress, jobPaused}
	jobStatuses = store.JobStatuses{
		Active: activeJobs, Queued: jobQueued, InProgress: jobInProgress, Completed: jobCompleted, Failed: jobFailed,
		Cancelled: jobCancelled, Terminal: []string{jobCompleted, jobFailed, jobBlocked, jobCancelled},
		RunRunning: runRunning, RunCompleted: runCompleted,
	}
	recordStatuses = store.CampaignStatuses{RecordPending: "pending", RecordRunning: "running", RecordDone: "done", RecordFailed: "failed"}
)
