package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ResearchJob is one research job. JSON-valued columns (json_schema, attachment_ids, request,
// structured_output) hold raw JSON text so both dialects store them the same way.
type ResearchJob struct {
	ID                  string  `gorm:"type:varchar(36);primaryKey"`
	AccountID           string  `gorm:"type:varchar(36);not null"`
	Slug                string  `gorm:"type:varchar(200);not null"`
	Status              string  `gorm:"type:varchar(16);not null"`
	Question            string  `gorm:"type:text;not null"`
	Effort              string  `gorm:"type:varchar(16);not null"` // what runs
	RequestedEffort     string  `gorm:"type:varchar(16);not null"` // what was asked
	JSONSchema          *string `gorm:"column:json_schema;type:text"`
	WebhookURL          *string `gorm:"type:varchar(2048)"`
	ExpertID            *string `gorm:"type:varchar(255)"`
	AttachmentIDs       string  `gorm:"type:text;not null"` // JSON array of ids
	IsPublic            bool    `gorm:"not null;default:false"`
	Locked              bool    `gorm:"not null;default:false"`
	AnonymousCTAEnabled bool    `gorm:"column:anonymous_cta_enabled;not null;default:false"`
	AnonymousCTAVariant *string `gorm:"column:anonymous_cta_variant;type:varchar(80)"`
	AnonymousCTA        *string `gorm:"column:anonymous_cta;type:text"` // JSON settings; nil: the app's defaults
	Request             string  `gorm:"type:text;not null"`             // JSON echo of the create body, defaults applied
	StructuredOutput    *string `gorm:"type:text"`
	ReportSHA           *string `gorm:"column:report_sha;type:varchar(40)"`
	ReportMarkdown      *string `gorm:"type:text"`
	ErrorCode           *string `gorm:"type:varchar(64)"`
	ErrorMessage        *string `gorm:"type:text"`
	RequestID           *string `gorm:"type:varchar(100)"` // X-Request-ID of the originating POST
	// WebhookKeySealed is the caller's API key sealed with the server secret (AES-GCM): webhooks are
	// signed with the key, and only key hashes are kept anywhere else. It moves to the run's
	// WebhookMessage when the run ends, which deletes it once its deliveries are final.
	WebhookKeySealed *string `gorm:"type:text"`
	CurrentRunID     *string `gorm:"type:varchar(36)"` // the run the queue entry executes
	RiverJobID       *int64  // that queue entry
	EventSeq         int64   `gorm:"not null;default:0"` // last timeline seq handed out
	CreatedAt        time.Time
	UpdatedAt        time.Time
	StartedAt        *time.Time
	CompletedAt      *time.Time
	// ExpertRef is the canonical id (registry id or UUID) ExpertID resolved to at create, so a
	// renamed expert (its handle changes) still runs; ExpertVersion is the version the last run
	// used (nil for unversioned registry experts).
	ExpertRef     *string `gorm:"type:varchar(255)"`
	ExpertVersion *int
	// RequiredToolCalls is the JSON outcome ({required, succeeded, missing}) of the last run's
	// required-tool monitor; nil when it had none.
	RequiredToolCalls *string `gorm:"type:text"`

	// APIVersion is the surface the job was created through (APIv1, APIv2): it picks the webhook's
	// signature and correlation headers (docs/api.md: Webhooks).
	APIVersion string `gorm:"type:varchar(4);not null;default:v2"`

	// CitationsTotal and CitationsVerified count the quoted citations of the last completed report
	// (and its structured-output basis) and those found in their stored sources; nil before a run
	// completes. StructuredOutputBasis is the JSON per-field support of the structured output.
	CitationsTotal        *int
	CitationsVerified     *int
	StructuredOutputBasis *string `gorm:"type:text"`
}

// ResearchRun is one run (check result) of a job: the initial run or a continuation.
type ResearchRun struct {
	ID             string `gorm:"type:varchar(36);primaryKey"`
	JobID          string `gorm:"type:varchar(36);not null"`
	Kind           string `gorm:"type:varchar(16);not null"`
	Status         string `gorm:"type:varchar(16);not null"`
	Effort         string `gorm:"type:varchar(16);not null"`
	CreditsCharged int64  `gorm:"not null;default:0"`
	StartedAt      time.Time
	FinishedAt     *time.Time
}

// ResearchRevision is a checkpoint commit of a job's workspace, with the run that made it.
type ResearchRevision struct {
	JobID          string `gorm:"type:varchar(36);primaryKey"`
	SHA            string `gorm:"column:sha;type:varchar(40);primaryKey"`
	Ordinal        int64  `gorm:"not null"`
	RunID          string `gorm:"type:varchar(36);not null"`
	CheckpointType string `gorm:"type:varchar(16);not null"`
	Message        string `gorm:"type:text;not null"`
	CreatedAt      time.Time
	// FilesStored: the manifest is in research_revision_files and the contents in the blob store
	// (false for revisions recorded before those existed, until they are backfilled).
	FilesStored bool `gorm:"not null;default:false"`
}

// ResearchEvent is one timeline entry, stored already sanitized.
type ResearchEvent struct {
	ID        string `gorm:"type:varchar(36);primaryKey"`
	JobID     string `gorm:"type:varchar(36);not null"`
	Seq       int64  `gorm:"not null"`
	CreatedAt time.Time
	Kind      string  `gorm:"type:varchar(16);not null"`
	Title     string  `gorm:"type:text;not null"`
	Content   string  `gorm:"type:text;not null"`
	Data      *string `gorm:"type:text"` // JSON object or NULL
}

// IdempotencyKey remembers which job an Idempotency-Key created, for 24 hours.
type IdempotencyKey struct {
	AccountID   string `gorm:"type:varchar(36);primaryKey"`
	IdemKey     string `gorm:"type:varchar(320);primaryKey"`
	RequestHash string `gorm:"type:char(64);not null"`
	JobID       string `gorm:"type:varchar(36);not null"`
	StatusCode  int    `gorm:"not null"`
	CreatedAt   time.Time
}

// WebhookDelivery is one webhook attempt, recorded whatever its outcome.
type WebhookDelivery struct {
	ID         string `gorm:"type:varchar(36);primaryKey"`
	JobID      string `gorm:"type:varchar(36);not null"`
	RunID      string `gorm:"type:varchar(36);not null"`
	Event      string `gorm:"type:varchar(32);not null"`
	Attempt    int    `gorm:"not null"`
	RequestID  string `gorm:"type:varchar(36);not null"`
	URL        string `gorm:"type:varchar(2048);not null"`
	StatusCode *int
	Error      *string `gorm:"type:text"`
	DurationMS int64   `gorm:"column:duration_ms;not null"`
	Succeeded  bool    `gorm:"not null;default:false"`
	CreatedAt  time.Time

	// Round is 1 for the attempts that follow the run, 2 and up for each redelivery; MessageID is
	// the WebhookMessage (nil on attempts recorded before messages existed).
	Round     int     `gorm:"not null;default:1"`
	MessageID *string `gorm:"type:varchar(36)"`
}

// CreateResearchJob inserts a job. A taken slug is ErrConflict.
//
// first, when given, are the job's first timeline events, inserted with it (seqs 1, 2, … and the
// job's event_seq set to their count): the same rows AppendEvents would write, without its counter
// update, since no other writer can know a job its own insert has yet to commit. j and first are
// written together or not at all.
func (s *Store) CreateResearchJob(ctx context.Context, j *ResearchJob, first ...*ResearchEvent) error {
	if len(first) == 0 {
		return s.insertResearchJob(ctx, j)
	}
	return s.atomically(ctx, func(st *Store) error {
		j.EventSeq = int64(len(first))
		if err := st.insertResearchJob(ctx, j); err != nil {
			return err
		}
		if err := st.insertEvents(ctx, j.ID, j.EventSeq, first); err != nil {
			return err
		}
		st.AfterCommit(func() { st.events.written(j.ID, j.EventSeq) })
		return nil
	})
}

func (s *Store) insertResearchJob(ctx context.Context, j *ResearchJob) error {
	// A taken slug (or id) inserts nothing instead of failing, so it does not poison the caller's
	// transaction (Postgres) and needs no savepoint around the insert.
	res := s.with(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(j)
	if res.Error != nil {
		return notFound(res.Error, "create research job")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("create research job %s (slug %s): %w", j.ID, j.Slug, ErrConflict)
	}
	return nil
}

// ResearchJobByID loads a job by its UUID.
func (s *Store) ResearchJobByID(ctx context.Context, id string) (ResearchJob, error) {
	var j ResearchJob
	err := s.with(ctx).Where("id = ?", id).Take(&j).Error
	return j, notFound(err, "research job "+id)
}

// ResearchJobByRef loads a job by UUID or slug.
func (s *Store) ResearchJobByRef(ctx context.Context, ref string) (ResearchJob, error) {
	if id, ok := jobRefID(ref); ok {
		return s.ResearchJobByID(ctx, id)
	}
	var j ResearchJob
	err := s.with(ctx).Where("slug = ?", ref).Take(&j).Error
	return j, notFound(err, "research job "+ref)
}

// jobRefID is the job id a reference names, in canonical form, when it is a UUID in the
// 36-character form; any other reference is a slug.
func jobRefID(ref string) (string, bool) {
	u, err := uuid.Parse(ref)
	if err != nil || len(ref) != 36 {
		return "", false
	}
	return u.String(), true
}

// SlugTaken reports whether a slug is in use.
func (s *Store) SlugTaken(ctx context.Context, slug string) (bool, error) {
	var n int64
	if err := s.with(ctx).Model(&ResearchJob{}).Where("slug = ?", slug).Count(&n).Error; err != nil {
		return false, fmt.Errorf("slug lookup: %w", err)
	}
	return n > 0, nil
}

// ListResearchJobs pages an account's jobs newest first, optionally in one status.
func (s *Store) ListResearchJobs(ctx context.Context, accountID string, status *string, req PageRequest) (Page[ResearchJob], error) {
	q := s.with(ctx).Model(&ResearchJob{}).
		Omit("report_markdown", "structured_output", "request", "json_schema", "webhook_key_sealed").
		Where("account_id = ?", accountID)
	if status != nil {
		q = q.Where("status = ?", *status)
	}
	page, err := paginate(q, req, func(j ResearchJob) Cursor { return Cursor{CreatedAt: j.CreatedAt, ID: j.ID} })
	if err != nil {
		return page, fmt.Errorf("list research jobs: %w", err)
	}
	return page, nil
}

// UpdateResearchJob sets columns of a job when its status is one of from (any status when from is
// empty) and reports whether a row changed; updated_at is always set. Conditional updates make
// state transitions race-safe without explicit row locks, in both dialects.
func (s *Store) UpdateResearchJob(ctx context.Context, id string, from []string, set map[string]any) (bool, error) {
	return updateByID[ResearchJob](ctx, s, "research job", id, from, set)
}

// CreateRun inserts a run unless one with its id exists; the stored run is returned either way, so
// a worker re-running after a crash reuses the run (and its charge) instead of starting another.
func (s *Store) CreateRun(ctx context.Context, r *ResearchRun) (ResearchRun, error) {
	if err := s.with(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(r).Error; err != nil {
		return ResearchRun{}, fmt.Errorf("create run: %w", err)
	}
	return s.RunByID(ctx, r.ID)
}

// RunByID loads a run.
func (s *Store) RunByID(ctx context.Context, id string) (ResearchRun, error) {
	var r ResearchRun
	err := s.with(ctx).Where("id = ?", id).Take(&r).Error
	return r, notFound(err, "run "+id)
}

// RunsForJob lists a job's runs, oldest first.
func (s *Store) RunsForJob(ctx context.Context, jobID string) ([]ResearchRun, error) {
	var runs []ResearchRun
	if err := s.with(ctx).Where("job_id = ?", jobID).Order("started_at, id").Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("runs of %s: %w", jobID, err)
	}
	return runs, nil
}

// AddRevision records a checkpoint commit; recording the same commit twice is a no-op.
func (s *Store) AddRevision(ctx context.Context, r *ResearchRevision) error {
	return s.atomically(ctx, func(st *Store) error {
		tx := st.with(ctx)
		var last int64
		if err := tx.Model(&ResearchRevision{}).Where("job_id = ?", r.JobID).
			Select("COALESCE(MAX(ordinal), 0)").Scan(&last).Error; err != nil {
			return fmt.Errorf("last revision: %w", err)
		}
		r.Ordinal = last + 1
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(r).Error; err != nil {
			return fmt.Errorf("add revision: %w", err)
		}
		return nil
	})
}

// RevisionsForJob lists a job's revisions, oldest first.
func (s *Store) RevisionsForJob(ctx context.Context, jobID string) ([]ResearchRevision, error) {
	var revs []ResearchRevision
	if err := s.with(ctx).Where("job_id = ?", jobID).Order("ordinal").Find(&revs).Error; err != nil {
		return nil, fmt.Errorf("revisions of %s: %w", jobID, err)
	}
	return revs, nil
}

// ForgetWorkspace drops a job's recorded revisions, their manifests and the report they pointed at, in one
// transaction: used when an initial run starts over in a fresh workspace after a crash.
func (s *Store) ForgetWorkspace(ctx context.Context, jobID string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.with(ctx).Where("job_id = ?", jobID).Delete(&ResearchRevision{}).Error; err != nil {
			return fmt.Errorf("forget revisions of %s: %w", jobID, err)
		}
		if err := tx.with(ctx).Where("job_id = ?", jobID).Delete(&ResearchRevisionFile{}).Error; err != nil {
			return fmt.Errorf("forget revision files of %s: %w", jobID, err)
		}
		err := tx.with(ctx).Model(&ResearchJob{}).Where("id = ?", jobID).
			Updates(map[string]any{"report_sha": nil, "report_markdown": nil}).Error
		return notFound(err, "forget report of "+jobID)
	})
}

// AppendEvent adds a timeline event with the job's next seq. The seq comes from a counter on the
// job row, incremented with UPDATE ... RETURNING, so concurrent writers (the worker and a cancel)
// serialise on the row and seq is strictly increasing per job.
func (s *Store) AppendEvent(ctx context.Context, e *ResearchEvent) error {
	return s.AppendEvents(ctx, e.JobID, []*ResearchEvent{e})
}

// AppendEvents adds several timeline events of one job in one transaction, with consecutive seqs
// in the order given (one counter update and one insert for all of them).
func (s *Store) AppendEvents(ctx context.Context, jobID string, events []*ResearchEvent) error {
	if len(events) == 0 {
		return nil
	}
	return s.atomically(ctx, func(st *Store) error {
		tx := st.with(ctx)
		var last int64
		var err error
		if st.dialect == Postgres {
			// The NOTIFY rides on the counter update (no extra round trip) and is delivered at
			// commit to every process's timeline follower. A job's first events are written by the
			// transaction that creates it, which no stream can be following yet: they send none.
			var notified bool
			err = tx.Raw("UPDATE research_jobs SET event_seq = event_seq + ? WHERE id = ? RETURNING event_seq, "+
				"(CASE WHEN event_seq > ? THEN pg_notify(current_schema() || '."+eventsChannel+"', id || ':' || event_seq) END) IS NULL",
				len(events), jobID, len(events)).Row().Scan(&last, &notified)
		} else {
			err = tx.Raw("UPDATE research_jobs SET event_seq = event_seq + ? WHERE id = ? RETURNING event_seq", len(events), jobID).Row().Scan(&last)
		}
		if err != nil {
			return notFound(translateNoRows(err), "next event seqs of "+jobID)
		}
		st.AfterCommit(func() { st.events.written(jobID, last) })
		return st.insertEvents(ctx, jobID, last, events)
	})
}

// insertEvents numbers a job's new events so that the last is seq last, and inserts them.
func (s *Store) insertEvents(ctx context.Context, jobID string, last int64, events []*ResearchEvent) error {
	for i, e := range events {
		e.JobID, e.Seq = jobID, last-int64(len(events)-1-i)
		if e.ID == "" {
			e.ID = uuid.NewString()
		}
	}
	if err := s.with(ctx).Create(events).Error; err != nil {
		return fmt.Errorf("append %d events: %w", len(events), err)
	}
	return nil
}

// ListEvents pages a job's timeline newest first (descending seq). The cursor's ID carries the seq
// of the last event returned.
func (s *Store) ListEvents(ctx context.Context, jobID string, req PageRequest) (Page[ResearchEvent], error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	q := s.with(ctx).Where("job_id = ?", jobID)
	if c := req.Cursor; c != nil {
		seq, err := strconv.ParseInt(c.ID, 10, 64)
		if err != nil || seq < 1 {
			return Page[ResearchEvent]{}, fmt.Errorf("%w: not a timeline cursor", ErrInvalidCursor)
		}
		q = q.Where("seq < ?", seq)
	}
	var rows []ResearchEvent
	if err := q.Order("seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return Page[ResearchEvent]{}, fmt.Errorf("list events: %w", err)
	}
	page := Page[ResearchEvent]{Items: rows}
	if len(rows) > limit {
		page.Items = rows[:limit]
		last := rows[limit-1]
		page.Next = &Cursor{CreatedAt: last.CreatedAt, ID: strconv.FormatInt(last.Seq, 10)}
	}
	return page, nil
}

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyKeyFor returns the live (younger than IdempotencyTTL) record of an account's key.
func (s *Store) IdempotencyKeyFor(ctx context.Context, accountID, key string, now time.Time) (IdempotencyKey, error) {
	var k IdempotencyKey
	err := s.with(ctx).Where("account_id = ? AND idem_key = ? AND created_at > ?", accountID, key, now.Add(-IdempotencyTTL)).Take(&k).Error
	return k, notFound(err, "idempotency key")
}

// ClaimIdempotencyKey records key → job. An expired record of the key is replaced; a live one is
// ErrConflict (a concurrent request won: read its record with IdempotencyKeyFor). Inside the
// creating transaction, the unique primary key makes concurrent duplicates wait for the winner's
// commit and then fail, so exactly one job is created.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k *IdempotencyKey, now time.Time) error {
	db := s.with(ctx)
	if k.CreatedAt.IsZero() {
		k.CreatedAt = now
	}
	if err := db.Where("account_id = ? AND idem_key = ? AND created_at <= ?", k.AccountID, k.IdemKey, now.Add(-IdempotencyTTL)).
		Delete(&IdempotencyKey{}).Error; err != nil {
		return fmt.Errorf("expire idempotency key: %w", err)
	}
	err := db.Transaction(func(tx *gorm.DB) error { return tx.Create(k).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("idempotency key %q: %w", k.IdemKey, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("claim idempotency key: %w", err)
	}
	return nil
}

// DeleteExpiredIdempotencyKeys removes records older than IdempotencyTTL.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	res := s.with(ctx).Where("created_at <= ?", now.Add(-IdempotencyTTL)).Delete(&IdempotencyKey{})
	if res.Error != nil {
		return 0, fmt.Errorf("expire idempotency keys: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// RecordDelivery stores one webhook attempt. A second record of the same attempt is ErrConflict.
func (s *Store) RecordDelivery(ctx context.Context, d *WebhookDelivery) error {
	if d.ID == "" {
		d.ID = uuid.NewString()
	}
	if err := s.with(ctx).Create(d).Error; err != nil {
		return notFound(err, "record webhook delivery")
	}
	return nil
}

// DeliveriesFor lists the recorded attempts of one round of one webhook (a run's event), oldest first.
func (s *Store) DeliveriesFor(ctx context.Context, runID, event string, round int) ([]WebhookDelivery, error) {
	var ds []WebhookDelivery
	if err := s.with(ctx).Where("run_id = ? AND event = ? AND round = ?", runID, event, round).Order("attempt").Find(&ds).Error; err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return ds, nil
}

// DeliveriesForJob lists every recorded webhook attempt of a job, oldest first.
func (s *Store) DeliveriesForJob(ctx context.Context, jobID string) ([]WebhookDelivery, error) {
	var ds []WebhookDelivery
	if err := s.with(ctx).Where("job_id = ?", jobID).Order("created_at, attempt").Find(&ds).Error; err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return ds, nil
}

// ActiveJobsUpdatedBefore lists jobs still queued or in progress that have not changed since before
// t: candidates for the reaper, which checks their queue entries.
func (s *Store) ActiveJobsUpdatedBefore(ctx context.Context, st JobStatuses, t time.Time, limit int) ([]ResearchJob, error) {
	var jobs []ResearchJob
	err := s.with(ctx).Where("status IN ? AND updated_at < ?", []string{st.Queued, st.InProgress}, t).
		Order("updated_at").Limit(limit).Find(&jobs).Error
	if err != nil {
		return nil, fmt.Errorf("active jobs: %w", err)
	}
	return jobs, nil
}

// CountJobsByStatus counts jobs per status (for tests and operators).
func (s *Store) CountJobsByStatus(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Status string
		N      int64
	}
	if err := s.with(ctx).Model(&ResearchJob{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

func translateNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return gorm.ErrRecordNotFound
	}
	return err
}
