package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// updateSchedule sets columns of a loop that is not deleted and reports whether it changed; where
// narrows it further. updated_at is always set.
func (s *Store) updateSchedule(ctx context.Context, id string, where func(*gorm.DB) *gorm.DB, set map[string]any) (bool, error) {
	if _, ok := set["updated_at"]; !ok {
		set["updated_at"] = s.db.NowFunc()
	}
	q := s.with(ctx).Model(&Schedule{}).Where("id = ? AND deleted_at IS NULL", id)
	if where != nil {
		q = where(q)
	}
	res := q.Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("update schedule %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// LoopRevision is an edit of a live loop: each part set is written.
type LoopRevision struct {
	Name *string
	// Schedule carries the new timing (frequency, hour, minute, day of week and month, timezone).
	Schedule *Schedule
	// NextRunAt is when an active loop with a new schedule fires next.
	NextRunAt *time.Time
	// Config carries the new configuration (with its effort, expert and question count).
	Config *Schedule
}

// ReviseLoop writes an edit of a loop that is not deleted; false when it was deleted meanwhile.
func (s *Store) ReviseLoop(ctx context.Context, id string, r LoopRevision) (bool, error) {
	set := map[string]any{}
	if r.Name != nil {
		set["name"] = *r.Name
	}
	if l := r.Schedule; l != nil {
		set["frequency"], set["hour"], set["minute"] = l.Frequency, l.Hour, l.Minute
		set["day_of_week"], set["day_of_month"], set["timezone"] = l.DayOfWeek, l.DayOfMonth, l.Timezone
	}
	if r.NextRunAt != nil {
		set["next_run_at"] = *r.NextRunAt
	}
	if l := r.Config; l != nil {
		set["config"], set["effort"], set["expert_id"], set["question_count"] = l.Config, l.Effort, l.ExpertID, l.QuestionCount
	}
	if len(set) == 0 {
		return true, nil
	}
	return s.updateSchedule(ctx, id, nil, set)
}

// whereActive narrows a loop update to a loop that is (or is not) active.
func whereActive(active bool) func(*gorm.DB) *gorm.DB {
	return func(q *gorm.DB) *gorm.DB { return q.Where("is_active = ?", active) }
}

// PauseLoop stops an active loop firing.
func (s *Store) PauseLoop(ctx context.Context, id string) error {
	_, err := s.updateSchedule(ctx, id, whereActive(true), map[string]any{"is_active": false, "next_run_at": nil})
	return err
}

// ResumeLoop re-activates a paused loop, firing next at next, and forgets its failures.
func (s *Store) ResumeLoop(ctx context.Context, id string, next time.Time) error {
	_, err := s.updateSchedule(ctx, id, whereActive(false), map[string]any{"is_active": true, "next_run_at": next, "consecutive_failures": 0})
	return err
}

// DeleteLoop soft-deletes a loop: inactive, no next run; false when it was deleted already.
func (s *Store) DeleteLoop(ctx context.Context, id string, now time.Time) (bool, error) {
	return s.updateSchedule(ctx, id, nil, map[string]any{"deleted_at": now, "is_active": false, "next_run_at": nil})
}

// claimFiring is the exactly-once guard of a scheduled firing: it moves next_run_at from due to
// next (and sets the other columns) only if the stored row is still active, not deleted and due
// at exactly that instant. Of several processes firing one period, one changes the row; on
// Postgres the others wait on its row lock, re-read it and change nothing.
//
// latest is the latest_batch_id the caller saw (nil: none): a run started meanwhile (run-now)
// makes the claim fail too, so the firing is looked at again rather than racing that run.
func (s *Store) claimFiring(ctx context.Context, id string, due, next time.Time, latest *string, set map[string]any) (bool, error) {
	set["next_run_at"] = next
	set["updated_at"] = s.db.NowFunc()
	q := s.with(ctx).Model(&Schedule{}).
		Where("id = ? AND next_run_at = ? AND is_active = ? AND deleted_at IS NULL", id, due, true)
	res := whereLatest(q, latest).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("claim firing of schedule %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ClaimLoopFiring claims the firing of a loop due at due for a run starting now, moving its next
// firing to next; false when another process (or a run-now) claimed it first.
func (s *Store) ClaimLoopFiring(ctx context.Context, id string, due, next time.Time, latest *string, now time.Time) (bool, error) {
	return s.claimFiring(ctx, id, due, next, latest, map[string]any{"last_run_at": now})
}

// SkipLoopFiring claims a firing and skips it, saying why.
func (s *Store) SkipLoopFiring(ctx context.Context, id string, due, next time.Time, latest *string, reason string, now time.Time) (bool, error) {
	return s.claimFiring(ctx, id, due, next, latest, map[string]any{"last_skip_reason": reason, "last_skipped_at": now})
}

// FailLoopFiring claims a firing whose run could not start and counts it as a failure.
func (s *Store) FailLoopFiring(ctx context.Context, id string, due, next time.Time, latest *string) (bool, error) {
	return s.claimFiring(ctx, id, due, next, latest, map[string]any{"consecutive_failures": gorm.Expr("consecutive_failures + 1")})
}

// ClaimLoopRun takes the next run number for a run starting now: it bumps run_count only while
// the loop is not deleted and its latest run is still latest (the caller saw it finished). It
// returns the new run number, 0 if the claim failed. Call it inside the transaction that creates
// the run: the row stays locked.
func (s *Store) ClaimLoopRun(ctx context.Context, id string, latest *string, now time.Time) (int, error) {
	q := s.with(ctx).Model(&Schedule{}).Where("id = ? AND deleted_at IS NULL", id)
	res := whereLatest(q, latest).Updates(map[string]any{"run_count": gorm.Expr("run_count + 1"), "last_run_at": now, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return 0, fmt.Errorf("claim a run of schedule %s: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return 0, nil
	}
	var l Schedule
	if err := s.with(ctx).Select("run_count").Where("id = ?", id).Take(&l).Error; err != nil {
		return 0, fmt.Errorf("run count of schedule %s: %w", id, err)
	}
	return l.RunCount, nil
}

func whereLatest(q *gorm.DB, latest *string) *gorm.DB {
	if latest == nil {
		return q.Where("latest_batch_id IS NULL")
	}
	return q.Where("latest_batch_id = ?", *latest)
}

// AddLoopRun records a run claimed by ClaimLoopRun and makes its batch the loop's latest.
func (s *Store) AddLoopRun(ctx context.Context, r *ScheduleRun) error {
	return s.atomically(ctx, func(tx *Store) error {
		if err := tx.with(ctx).Create(r).Error; err != nil {
			return notFound(err, "create schedule run")
		}
		_, err := tx.updateSchedule(ctx, r.ScheduleID, nil, map[string]any{"latest_batch_id": r.BatchID})
		return err
	})
}

// SettleLoopRun records a run's outcome once, and with it the loop's consecutive failures (one
// more when failed, else none); it reports whether this call recorded it.
func (s *Store) SettleLoopRun(ctx context.Context, scheduleID string, n int, outcome string, failed bool) (bool, error) {
	recorded := false
	err := s.atomically(ctx, func(tx *Store) error {
		res := tx.with(ctx).Model(&ScheduleRun{}).
			Where("schedule_id = ? AND run_number = ? AND outcome IS NULL", scheduleID, n).
			Update("outcome", outcome)
		if res.Error != nil {
			return fmt.Errorf("outcome of schedule %s run %d: %w", scheduleID, n, res.Error)
		}
		if recorded = res.RowsAffected == 1; !recorded {
			return nil
		}
		failures := any(0)
		if failed {
			failures = gorm.Expr("consecutive_failures + 1")
		}
		_, err := tx.updateSchedule(ctx, scheduleID, nil, map[string]any{"consecutive_failures": failures})
		return err
	})
	return recorded && err == nil, err
}
