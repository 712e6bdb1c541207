package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// JobStatuses are the statuses of package jobs' state machine (jobs and their runs) that the state
// changes below write and filter by. Package jobs defines them; store persists them without
// knowing their values.
type JobStatuses struct {
	Active                                []string // what a cancel moves to cancelled
	Queued, InProgress, Completed, Failed string
	Cancelled                             string
	Terminal                              []string // no run follows (webhook keys may go)
	RunRunning, RunCompleted, RunFailed   string
	RunInterrupted                        string
}

// updateRuns sets columns of a job's runs in status from (one run, or every run when runID is
// empty) and returns how many changed.
func (s *Store) updateRuns(ctx context.Context, jobID, runID, from string, set map[string]any) error {
	q := s.with(ctx).Model(&ResearchRun{}).Where("job_id = ?", jobID)
	if runID != "" {
		q = q.Where("id = ?", runID)
	}
	if from != "" {
		q = q.Where("status = ?", from)
	}
	if err := q.Updates(set).Error; err != nil {
		return fmt.Errorf("update runs of %s: %w", jobID, err)
	}
	return nil
}

// updateJob is updateByID for research jobs.
func (s *Store) updateJob(ctx context.Context, id string, from []string, set map[string]any) (bool, error) {
	return updateByID[ResearchJob](ctx, s, "research job", id, from, set)
}

// StartResearchJob moves a queued (or, resumed after a crash, in-progress) job in progress,
// started now unless it started before; false when it is in neither status.
func (s *Store) StartResearchJob(ctx context.Context, st JobStatuses, id string, now time.Time) (bool, error) {
	return s.updateJob(ctx, id, []string{st.Queued, st.InProgress},
		map[string]any{"status": st.InProgress, "started_at": gorm.Expr("COALESCE(started_at, ?)", now)})
}

// RecordRunCharge records what a run was charged when dispatched.
func (s *Store) RecordRunCharge(ctx context.Context, jobID, runID string, credits int64) error {
	return s.updateRuns(ctx, jobID, runID, "", map[string]any{"credits_charged": credits})
}

// SetJobExpert records the expert version an in-progress job's run resolved.
func (s *Store) SetJobExpert(ctx context.Context, st JobStatuses, id, ref string, version *int) error {
	_, err := s.updateJob(ctx, id, []string{st.InProgress}, map[string]any{"expert_ref": ref, "expert_version": version})
	return err
}

// ShowJobReport makes a checkpoint's report the one an in-progress job shows.
func (s *Store) ShowJobReport(ctx context.Context, st JobStatuses, id, sha, report string) error {
	_, err := s.updateJob(ctx, id, []string{st.InProgress}, map[string]any{"report_sha": sha, "report_markdown": report})
	return err
}

// DropWebhookKey forgets the sealed key a job's webhook would have been signed with.
func (s *Store) DropWebhookKey(ctx context.Context, id string) error {
	_, err := s.updateJob(ctx, id, nil, map[string]any{"webhook_key_sealed": nil})
	return err
}

// JobResult is what a completed run leaves on its job.
type JobResult struct {
	ReportSHA, Report     string
	StructuredOutput      *string // JSON
	CitationsTotal        *int
	CitationsVerified     *int
	StructuredOutputBasis *string // JSON
	RequiredToolCalls     *string // JSON
	// Uncharged: the run researched nothing, so its charge goes back (credits_charged 0).
	Uncharged bool
}

// CompleteResearchJob completes an in-progress job and its running run with the run's result;
// false when the job was no longer in progress (cancelled meanwhile) and nothing changed.
func (s *Store) CompleteResearchJob(ctx context.Context, st JobStatuses, id, runID string, r JobResult, now time.Time) (bool, error) {
	ok := false
	err := s.atomically(ctx, func(tx *Store) error {
		var err error
		ok, err = tx.updateJob(ctx, id, []string{st.InProgress}, map[string]any{
			"status": st.Completed, "completed_at": now, "report_sha": r.ReportSHA, "report_markdown": r.Report,
			"error_code": nil, "error_message": nil, "structured_output": r.StructuredOutput,
			"citations_total": r.CitationsTotal, "citations_verified": r.CitationsVerified, "structured_output_basis": r.StructuredOutputBasis,
			"required_tool_calls": r.RequiredToolCalls,
		})
		if err != nil || !ok {
			return err
		}
		runSet := map[string]any{"status": st.RunCompleted, "finished_at": now}
		if r.Uncharged {
			runSet["credits_charged"] = 0
		}
		return tx.updateRuns(ctx, id, runID, st.RunRunning, runSet)
	})
	return ok && err == nil, err
}

// FailResearchJob fails a queued or in-progress job with code and message, and its running run,
// whose charge goes back; false when the job was in neither status and nothing changed.
func (s *Store) FailResearchJob(ctx context.Context, st JobStatuses, id, runID, code, message string, now time.Time) (bool, error) {
	ok := false
	err := s.atomically(ctx, func(tx *Store) error {
		var err error
		ok, err = tx.updateJob(ctx, id, []string{st.Queued, st.InProgress},
			map[string]any{"status": st.Failed, "error_code": code, "error_message": message, "completed_at": nil})
		if err != nil || !ok {
			return err
		}
		return tx.updateRuns(ctx, id, runID, st.RunRunning, map[string]any{"status": st.RunFailed, "finished_at": now, "credits_charged": 0})
	})
	return ok && err == nil, err
}

// CancelResearchJob cancels an active job, forgetting its webhook key (no webhook follows a
// cancellation), and interrupts its running run; false when it was not active.
func (s *Store) CancelResearchJob(ctx context.Context, st JobStatuses, id string, now time.Time) (bool, error) {
	ok := false
	err := s.atomically(ctx, func(tx *Store) error {
		var err error
		ok, err = tx.updateJob(ctx, id, st.Active, map[string]any{"status": st.Cancelled, "webhook_key_sealed": nil})
		if err != nil || !ok {
			return err
		}
		return tx.updateRuns(ctx, id, "", st.RunRunning, map[string]any{"status": st.RunInterrupted, "finished_at": now})
	})
	return ok && err == nil, err
}

// Continuation is a new run of a completed job: its run, effort and queue entry, and the sealed
// key its webhook will be signed with (nil: the job's stays).
type Continuation struct {
	RunID            string
	Effort           string
	RiverJobID       int64
	WebhookKeySealed *string
}

// ContinueResearchJob queues a completed job again for a continuation; false when it was no
// longer completed.
func (s *Store) ContinueResearchJob(ctx context.Context, st JobStatuses, id string, c Continuation) (bool, error) {
	set := map[string]any{"status": st.Queued, "completed_at": nil, "current_run_id": c.RunID, "effort": c.Effort,
		"error_code": nil, "error_message": nil, "river_job_id": c.RiverJobID}
	if c.WebhookKeySealed != nil {
		set["webhook_key_sealed"] = *c.WebhookKeySealed
	}
	return s.updateJob(ctx, id, []string{st.Completed}, set)
}

// JobSettings are the owner's settings of a job (PATCH /research/{job}); a nil field is left as it
// is, and Clear* sets the column to null.
type JobSettings struct {
	IsPublic            *bool
	AnonymousCTAEnabled *bool
	AnonymousCTAVariant *string
	ClearCTAVariant     bool
	AnonymousCTA        *string // JSON
	ClearCTA            bool
}

// Empty: the settings change nothing.
func (c JobSettings) Empty() bool {
	return c.IsPublic == nil && c.AnonymousCTAEnabled == nil && c.AnonymousCTAVariant == nil && !c.ClearCTAVariant &&
		c.AnonymousCTA == nil && !c.ClearCTA
}

// ChangeJobSettings writes a job's owner settings.
func (s *Store) ChangeJobSettings(ctx context.Context, id string, c JobSettings) error {
	set := map[string]any{}
	if c.IsPublic != nil {
		set["is_public"] = *c.IsPublic
	}
	if c.AnonymousCTAEnabled != nil {
		set["anonymous_cta_enabled"] = *c.AnonymousCTAEnabled
	}
	if c.AnonymousCTAVariant != nil || c.ClearCTAVariant {
		set["anonymous_cta_variant"] = c.AnonymousCTAVariant
	}
	if c.AnonymousCTA != nil || c.ClearCTA {
		set["anonymous_cta"] = c.AnonymousCTA
	}
	if len(set) == 0 {
		return nil
	}
	_, err := s.UpdateResearchJob(ctx, id, nil, set)
	return err
}
