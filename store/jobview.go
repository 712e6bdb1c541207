package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// JobView is a job with its runs and revisions, read from one snapshot.
type JobView struct {
	Job       ResearchJob
	Runs      []ResearchRun
	Revisions []ResearchRevision
}

// ResearchJobView reads a job (by UUID or slug) with its runs and revisions from one snapshot, so a
// worker committing meanwhile cannot show a queued job with a running run. On Postgres that is one
// statement (one round trip instead of five: the detail read is most of an API client's polling);
// on SQLite, where a round trip costs nothing but every statement is parsed anew, three plain
// queries in a read transaction on the read-only connections.
func (s *Store) ResearchJobView(ctx context.Context, ref string) (JobView, error) {
	if s.dialect == Postgres {
		return s.jobViewOneStatement(ctx, ref)
	}
	var v JobView
	err := s.readTx(ctx, func(tx *Store) error {
		var err error
		if v.Job, err = tx.ResearchJobByRef(ctx, ref); err != nil {
			return err
		}
		if v.Runs, err = tx.RunsForJob(ctx, v.Job.ID); err != nil {
			return err
		}
		v.Revisions, err = tx.RevisionsForJob(ctx, v.Job.ID)
		return err
	})
	return v, err
}

// jobViewSQL is the Postgres view: the job row with its runs and revisions as JSON arrays, in the
// orders of RunsForJob and RevisionsForJob. %s is the job's condition.
const jobViewSQL = `SELECT j.*,
	(SELECT COALESCE(json_agg(json_build_object('id', r.id, 'job_id', r.job_id, 'kind', r.kind, 'status', r.status,
		'effort', r.effort, 'credits_charged', r.credits_charged, 'started_at', r.started_at, 'finished_at', r.finished_at)
		ORDER BY r.started_at, r.id), '[]') FROM research_runs r WHERE r.job_id = j.id) AS view_runs,
	(SELECT COALESCE(json_agg(json_build_object('job_id', v.job_id, 'sha', v.sha, 'ordinal', v.ordinal, 'run_id', v.run_id,
		'checkpoint_type', v.checkpoint_type, 'message', v.message, 'created_at', v.created_at, 'files_stored', v.files_stored)
		ORDER BY v.ordinal), '[]') FROM research_revisions v WHERE v.job_id = j.id) AS view_revisions
FROM research_jobs j WHERE %s LIMIT 1`

// viewRun and viewRevision are the JSON shapes of jobViewSQL (ResearchRun and ResearchRevision
// carry no JSON names of their own).
type viewRun struct {
	ID             string     `json:"id"`
	JobID          string     `json:"job_id"`
	Kind           string     `json:"kind"`
	Status         string     `json:"status"`
	Effort         string     `json:"effort"`
	CreditsCharged int64      `json:"credits_charged"`
	StartedAt      time.Time  `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
}

type viewRevision struct {
	JobID          string    `json:"job_id"`
	SHA            string    `json:"sha"`
	Ordinal        int64     `json:"ordinal"`
	RunID          string    `json:"run_id"`
	CheckpointType string    `json:"checkpoint_type"`
	Message        string    `json:"message"`
	CreatedAt      time.Time `json:"created_at"`
	FilesStored    bool      `json:"files_stored"`
}

func (s *Store) jobViewOneStatement(ctx context.Context, ref string) (JobView, error) {
	cond, arg := "j.slug = ?", ref
	if u, err := uuid.Parse(ref); err == nil && len(ref) == 36 {
		cond, arg = "j.id = ?", u.String()
	}
	var rows []struct {
		ResearchJob   `gorm:"embedded"`
		ViewRuns      string
		ViewRevisions string
	}
	if err := s.read(ctx).Raw(fmt.Sprintf(jobViewSQL, cond), arg).Scan(&rows).Error; err != nil {
		return JobView{}, fmt.Errorf("research job %s: %w", ref, err)
	}
	if len(rows) == 0 {
		return JobView{}, fmt.Errorf("research job %s: %w", ref, ErrNotFound)
	}
	v := JobView{Job: rows[0].ResearchJob}
	// Times in the location the driver gives the job's own columns, as the plain queries would.
	loc := v.Job.CreatedAt.Location()
	var runs []viewRun
	if err := json.Unmarshal([]byte(rows[0].ViewRuns), &runs); err != nil {
		return JobView{}, fmt.Errorf("runs of %s: %w", v.Job.ID, err)
	}
	v.Runs = make([]ResearchRun, 0, len(runs))
	for _, r := range runs {
		run := ResearchRun(r)
		run.StartedAt = run.StartedAt.In(loc)
		if run.FinishedAt != nil {
			run.FinishedAt = ptrTo(run.FinishedAt.In(loc))
		}
		v.Runs = append(v.Runs, run)
	}
	var revs []viewRevision
	if err := json.Unmarshal([]byte(rows[0].ViewRevisions), &revs); err != nil {
		return JobView{}, fmt.Errorf("revisions of %s: %w", v.Job.ID, err)
	}
	v.Revisions = make([]ResearchRevision, 0, len(revs))
	for _, r := range revs {
		rev := ResearchRevision(r)
		rev.CreatedAt = rev.CreatedAt.In(loc)
		v.Revisions = append(v.Revisions, rev)
	}
	return v, nil
}

func ptrTo[T any](v T) *T { return &v }
