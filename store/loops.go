package store

import (
	"context"
	"fmt"
	"time"
)

// Schedule is a loop: a batch configuration (Config, JSON) re-run on a schedule.
// NextRunAt is computed by the loop package and stored; a firing is claimed by a conditional
// update on it (ClaimFiring), so each period fires once however many processes race for it.
type Schedule struct {
	ID                  string  `gorm:"type:varchar(36);primaryKey"`
	AccountID           string  `gorm:"type:varchar(36);not null"`
	Name                string  `gorm:"type:varchar(200);not null"`
	Frequency           string  `gorm:"type:varchar(16);not null"`
	Hour                int     `gorm:"not null"`
	Minute              int     `gorm:"not null"`
	DayOfWeek           *int    `gorm:"column:day_of_week"`
	DayOfMonth          *int    `gorm:"column:day_of_month"`
	Timezone            string  `gorm:"type:varchar(64);not null"`
	Effort              *string `gorm:"type:varchar(16)"` // requested; nil for the default
	ExpertID            *string `gorm:"type:varchar(255)"`
	QuestionCount       int     `gorm:"not null"`
	Config              string  `gorm:"type:text;not null"`
	IsActive            bool    `gorm:"not null"`
	NextRunAt           *time.Time
	LastRunAt           *time.Time
	RunCount            int `gorm:"not null;default:0"`
	ConsecutiveFailures int `gorm:"not null;default:0"`
	LastSkipReason      *string
	LastSkippedAt       *time.Time
	LatestBatchID       *string
	DeletedAt           *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// ScheduleRun is one run of a loop: its batch, and once the batch has ended whether it counts as
// a failure for consecutive_failures (Outcome "success" or "failure", nil while it runs).
type ScheduleRun struct {
	ScheduleID string `gorm:"type:varchar(36);primaryKey"`
	RunNumber  int    `gorm:"primaryKey;autoIncrement:false"`
	BatchID    string `gorm:"type:varchar(36);not null"`
	Outcome    *string
	CreatedAt  time.Time
}

// CreateSchedule inserts a loop.
func (s *Store) CreateSchedule(ctx context.Context, l *Schedule) error {
	return notFound(s.with(ctx).Create(l).Error, "create schedule")
}

// ScheduleByID loads a loop, deleted or not.
func (s *Store) ScheduleByID(ctx context.Context, id string) (Schedule, error) {
	var l Schedule
	err := s.with(ctx).Where("id = ?", id).Take(&l).Error
	return l, notFound(err, "schedule "+id)
}

// ListSchedules pages an account's loops that are not deleted, newest first, without their
// configuration (which can hold a thousand questions).
func (s *Store) ListSchedules(ctx context.Context, accountID string, req PageRequest) (Page[Schedule], error) {
	q := s.with(ctx).Model(&Schedule{}).Omit("config").Where("account_id = ? AND deleted_at IS NULL", accountID)
	page, err := paginate(q, req, func(l Schedule) Cursor { return Cursor{CreatedAt: l.CreatedAt, ID: l.ID} })
	if err != nil {
		return page, fmt.Errorf("list schedules: %w", err)
	}
	return page, nil
}

// ScheduleRunByBatch finds the run a batch belongs to (ErrNotFound: not a loop's batch).
func (s *Store) ScheduleRunByBatch(ctx context.Context, batchID string) (ScheduleRun, error) {
	var r ScheduleRun
	err := s.with(ctx).Where("batch_id = ?", batchID).Take(&r).Error
	return r, notFound(err, "schedule run of batch "+batchID)
}

// DueSchedules lists active loops due at or before now, earliest first.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error) {
	var ls []Schedule
	err := s.with(ctx).Omit("config").
		Where("is_active = ? AND deleted_at IS NULL AND next_run_at IS NOT NULL AND next_run_at <= ?", true, now).
		Order("next_run_at").Limit(limit).Find(&ls).Error
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return ls, nil
}

// EarliestNextRun is the soonest next_run_at of any active loop (nil: none).
func (s *Store) EarliestNextRun(ctx context.Context) (*time.Time, error) {
	var ls []Schedule
	err := s.with(ctx).Select("id", "next_run_at").
		Where("is_active = ? AND deleted_at IS NULL AND next_run_at IS NOT NULL", true).
		Order("next_run_at").Limit(1).Find(&ls).Error
	if err != nil {
		return nil, fmt.Errorf("earliest schedule: %w", err)
	}
	if len(ls) == 0 {
		return nil, nil
	}
	return ls[0].NextRunAt, nil
}

// ScheduleRuns lists a loop's most recent runs, newest first.
func (s *Store) ScheduleRuns(ctx context.Context, scheduleID string, limit int) ([]ScheduleRun, error) {
	var rs []ScheduleRun
	err := s.with(ctx).Where("schedule_id = ?", scheduleID).Order("run_number DESC").Limit(limit).Find(&rs).Error
	if err != nil {
		return nil, fmt.Errorf("schedule %s runs: %w", scheduleID, err)
	}
	return rs, nil
}

// OpenScheduleRuns lists a loop's runs whose outcome is not yet known, oldest first.
func (s *Store) OpenScheduleRuns(ctx context.Context, scheduleID string) ([]ScheduleRun, error) {
	var rs []ScheduleRun
	err := s.with(ctx).Where("schedule_id = ? AND outcome IS NULL", scheduleID).Order("run_number").Find(&rs).Error
	if err != nil {
		return nil, fmt.Errorf("schedule %s open runs: %w", scheduleID, err)
	}
	return rs, nil
}

// ScheduleRunAt loads one run by number.
func (s *Store) ScheduleRunAt(ctx context.Context, scheduleID string, n int) (ScheduleRun, error) {
	var r ScheduleRun
	err := s.with(ctx).Where("schedule_id = ? AND run_number = ?", scheduleID, n).Take(&r).Error
	return r, notFound(err, fmt.Sprintf("schedule %s run %d", scheduleID, n))
}

// ScheduleRunBefore loads the latest run numbered below n.
func (s *Store) ScheduleRunBefore(ctx context.Context, scheduleID string, n int) (ScheduleRun, error) {
	var r ScheduleRun
	err := s.with(ctx).Where("schedule_id = ? AND run_number < ?", scheduleID, n).Order("run_number DESC").Take(&r).Error
	return r, notFound(err, fmt.Sprintf("schedule %s run before %d", scheduleID, n))
}
