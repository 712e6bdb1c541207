package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm/schema"
)

// JobView is a job with its runs and revisions, read from one snapshot.
type JobView struct {
	Job       ResearchJob
	Runs      []ResearchRun
	Revisions []ResearchRevision
}

// ResearchJobView reads a job (by UUID or slug) with its runs and revisions in one statement, so a
// worker committing meanwhile cannot show a queued job with a running run: one round trip instead
// of five on Postgres (the detail read is most of an API client's polling), and one prepared
// statement on SQLite.
func (s *Store) ResearchJobView(ctx context.Context, ref string) (JobView, error) {
	query, arg := jobViewQueries[s.dialect][0], ref
	if id, ok := jobRefID(ref); ok {
		query, arg = jobViewQueries[s.dialect][1], id
	}
	rows, err := s.reads.Statement.ConnPool.QueryContext(ctx, query, arg)
	if err != nil {
		return JobView{}, fmt.Errorf("research job %s: %w", ref, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return JobView{}, fmt.Errorf("research job %s: %w", ref, err)
		}
		return JobView{}, fmt.Errorf("research job %s: %w", ref, ErrNotFound)
	}
	job, runs, revs, err := scanJobView(rows)
	if err != nil {
		return JobView{}, fmt.Errorf("research job %s: %w", ref, err)
	}
	return viewOf(job, runs, revs)
}

// scanJobView reads the view's row without GORM's scanner, which took a tenth of a detail read's
// CPU: each column goes straight into its ResearchJob field (jobFields).
func scanJobView(rows *sql.Rows) (job ResearchJob, runs, revs string, err error) {
	cols, err := rows.Columns()
	if err != nil {
		return job, "", "", err
	}
	rv := reflect.ValueOf(&job).Elem()
	targets := make([]any, len(cols))
	for i, c := range cols {
		switch c {
		case "view_runs":
			targets[i] = &runs
		case "view_revisions":
			targets[i] = &revs
		default:
			index, ok := jobFields[c]
			if !ok {
				return job, "", "", fmt.Errorf("column %s has no field", c)
			}
			targets[i] = rv.FieldByIndex(index).Addr().Interface()
		}
	}
	err = rows.Scan(targets...)
	return job, runs, revs, err
}

// jobFields is the index of ResearchJob's field for each of its columns, by GORM's own naming (the
// store's GORM config keeps the default naming strategy).
var jobFields = func() map[string][]int {
	sch, err := schema.Parse(&ResearchJob{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		panic(fmt.Sprintf("research job schema: %v", err)) // a model that does not parse cannot ship
	}
	fields := make(map[string][]int, len(sch.DBNames))
	for _, name := range sch.DBNames {
		fields[name] = sch.FieldsByDBName[name].StructField.Index
	}
	return fields
}()

// jobViewSQL is the job row with its runs and revisions as JSON arrays. Its verbs are the
// dialect's JSON aggregate and object functions, then the job's condition. Times come as each
// database writes them into JSON, booleans as true/false or 0/1 (viewTime, viewBool). The arrays
// are put in the orders of RunsForJob and RevisionsForJob in Go (viewOf): an ORDER BY inside the
// aggregate made SQLite build and sort a temporary table per array on every detail read.
const jobViewSQL = `SELECT j.*,
	(SELECT COALESCE(%[1]s(%[2]s('id', r.id, 'job_id', r.job_id, 'kind', r.kind, 'status', r.status,
		'effort', r.effort, 'credits_charged', r.credits_charged, 'started_at', r.started_at, 'finished_at', r.finished_at)),
		'[]') FROM research_runs r WHERE r.job_id = j.id) AS view_runs,
	(SELECT COALESCE(%[1]s(%[2]s('job_id', v.job_id, 'sha', v.sha, 'ordinal', v.ordinal, 'run_id', v.run_id,
		'checkpoint_type', v.checkpoint_type, 'message', v.message, 'created_at', v.created_at, 'files_stored', v.files_stored)),
		'[]') FROM research_revisions v WHERE v.job_id = j.id) AS view_revisions
FROM research_jobs j WHERE %[3]s LIMIT 1`

// jobViewQueries is jobViewSQL by slug and by id, per dialect (written once: a detail read is the
// most frequent request there is).
var jobViewQueries = map[Dialect][2]string{
	SQLite: {
		fmt.Sprintf(jobViewSQL, "json_group_array", "json_object", "j.slug = ?"),
		fmt.Sprintf(jobViewSQL, "json_group_array", "json_object", "j.id = ?"),
	},
	Postgres: {
		fmt.Sprintf(jobViewSQL, "json_agg", "json_build_object", "j.slug = $1"),
		fmt.Sprintf(jobViewSQL, "json_agg", "json_build_object", "j.id = $1"),
	},
}

// viewTime reads a time as either database writes it into JSON: RFC 3339 (Postgres) or the text
// the SQLite driver stored.
type viewTime struct{ time.Time }

var sqliteTimeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"}

func (t *viewTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("time %s: %w", b, err)
	}
	layouts := sqliteTimeLayouts
	if len(s) > 10 && s[10] == ' ' {
		layouts = layouts[1:] // SQLite's text, not RFC 3339: skip a parse that would fail
	}
	for _, layout := range layouts {
		if v, err := time.Parse(layout, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return fmt.Errorf("time %q: unknown layout", s)
}

// viewBool reads true/false or SQLite's 1/0.
type viewBool bool

func (v *viewBool) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true", "1":
		*v = true
	case "false", "0", "null":
		*v = false
	default:
		return fmt.Errorf("boolean %s", b)
	}
	return nil
}

// viewRun and viewRevision are the JSON shapes of jobViewSQL (ResearchRun and ResearchRevision
// carry no JSON names of their own).
type viewRun struct {
	ID             string    `json:"id"`
	JobID          string    `json:"job_id"`
	Kind           string    `json:"kind"`
	Status         string    `json:"status"`
	Effort         string    `json:"effort"`
	CreditsCharged int64     `json:"credits_charged"`
	StartedAt      viewTime  `json:"started_at"`
	FinishedAt     *viewTime `json:"finished_at"`
}

type viewRevision struct {
	JobID          string   `json:"job_id"`
	SHA            string   `json:"sha"`
	Ordinal        int64    `json:"ordinal"`
	RunID          string   `json:"run_id"`
	CheckpointType string   `json:"checkpoint_type"`
	Message        string   `json:"message"`
	CreatedAt      viewTime `json:"created_at"`
	FilesStored    viewBool `json:"files_stored"`
}

// viewOf decodes the view's JSON arrays of runs and revisions.
func viewOf(job ResearchJob, runsJSON, revsJSON string) (JobView, error) {
	v := JobView{Job: job}
	// Times in the location the driver gives the job's own columns, as the plain queries would.
	loc := v.Job.CreatedAt.Location()
	var runs []viewRun
	if err := json.Unmarshal([]byte(runsJSON), &runs); err != nil {
		return JobView{}, fmt.Errorf("runs of %s: %w", v.Job.ID, err)
	}
	v.Runs = make([]ResearchRun, 0, len(runs))
	for _, r := range runs {
		run := ResearchRun{ID: r.ID, JobID: r.JobID, Kind: r.Kind, Status: r.Status, Effort: r.Effort,
			CreditsCharged: r.CreditsCharged, StartedAt: r.StartedAt.In(loc)}
		if r.FinishedAt != nil {
			run.FinishedAt = ptrTo(r.FinishedAt.In(loc))
		}
		v.Runs = append(v.Runs, run)
	}
	slices.SortFunc(v.Runs, func(a, b ResearchRun) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	var revs []viewRevision
	if err := json.Unmarshal([]byte(revsJSON), &revs); err != nil {
		return JobView{}, fmt.Errorf("revisions of %s: %w", v.Job.ID, err)
	}
	v.Revisions = make([]ResearchRevision, 0, len(revs))
	for _, r := range revs {
		v.Revisions = append(v.Revisions, ResearchRevision{JobID: r.JobID, SHA: r.SHA, Ordinal: r.Ordinal, RunID: r.RunID,
			CheckpointType: r.CheckpointType, Message: r.Message, CreatedAt: r.CreatedAt.In(loc), FilesStored: bool(r.FilesStored)})
	}
	slices.SortFunc(v.Revisions, func(a, b ResearchRevision) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
	return v, nil
}

func ptrTo[T any](v T) *T { return &v }
