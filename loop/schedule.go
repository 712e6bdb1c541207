package loop

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/researchd/researchd/fault"
)

// Frequencies a loop may run at (sub-daily is not offered).
const (
	Daily   = "daily"
	Weekly  = "weekly"
	Monthly = "monthly"
)

// Schedule is a validated loop schedule: a wall-clock time of day in Location, every day, on one
// weekday (DayOfWeek, 0 = Monday) or on one day of the month (DayOfMonth, 1-28).
type Schedule struct {
	Frequency  string
	Hour       int
	Minute     int
	DayOfWeek  *int // weekly only
	DayOfMonth *int // monthly only
	Location   *time.Location
}

// ScheduleInput is BatchScheduleInput as the caller sent it. DayOfWeek is a number "0"-"6"
// (0 = Monday) or a day name, case-insensitive.
type ScheduleInput struct {
	Frequency  string
	Hour       *int
	Minute     *int
	DayOfWeek  *string
	DayOfMonth *int
	Timezone   *string
}

var dayNames = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// ParseDayOfWeek reads a weekday as 0-6 (0 = Monday) or a name ("monday", "Mon" is not accepted).
func ParseDayOfWeek(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n <= 6
	}
	for i, name := range dayNames {
		if s == name {
			return i, true
		}
	}
	return 0, false
}

// ParseSchedule checks what the document's validator cannot (the day field matching the
// frequency, the time zone existing) and returns the schedule; problems name their field under
// prefix (e.g. "schedule").
func ParseSchedule(prefix string, in ScheduleInput) (Schedule, error) {
	var errs fields
	field := func(name string) string { return prefix + "/" + name }
	cfg := func(name string) string { return prefix + "/schedule_config/" + name }
	s := Schedule{Frequency: in.Frequency, Location: time.UTC}
	switch in.Frequency {
	case Daily, Weekly, Monthly:
	default:
		errs.add(field("frequency"), "must be daily, weekly or monthly")
	}
	if in.Hour != nil {
		s.Hour = *in.Hour
	}
	if in.Minute != nil {
		s.Minute = *in.Minute
	}
	if s.Hour < 0 || s.Hour > 23 {
		errs.add(cfg("hour"), "must be 0-23")
	}
	if s.Minute < 0 || s.Minute > 59 {
		errs.add(cfg("minute"), "must be 0-59")
	}
	switch {
	case in.Frequency == Weekly && in.DayOfWeek == nil:
		errs.add(cfg("day_of_week"), "is required for a weekly loop")
	case in.Frequency != Weekly && in.DayOfWeek != nil:
		errs.add(cfg("day_of_week"), "is only allowed for a weekly loop")
	case in.DayOfWeek != nil:
		d, ok := ParseDayOfWeek(*in.DayOfWeek)
		if !ok {
			errs.add(cfg("day_of_week"), "must be 0-6 (0 = Monday) or a day name")
		}
		s.DayOfWeek = &d
	}
	switch {
	case in.Frequency == Monthly && in.DayOfMonth == nil:
		errs.add(cfg("day_of_month"), "is required for a monthly loop")
	case in.Frequency != Monthly && in.DayOfMonth != nil:
		errs.add(cfg("day_of_month"), "is only allowed for a monthly loop")
	case in.DayOfMonth != nil:
		if *in.DayOfMonth < 1 || *in.DayOfMonth > 28 {
			errs.add(cfg("day_of_month"), "must be 1-28")
		}
		d := *in.DayOfMonth
		s.DayOfMonth = &d
	}
	if in.Timezone != nil {
		loc, err := LoadLocation(*in.Timezone)
		if err != nil {
			errs.add(field("timezone"), err.Error())
		} else {
			s.Location = loc
		}
	}
	if len(errs) > 0 {
		return Schedule{}, fault.InvalidInput(errs...)
	}
	return s, nil
}

// LoadLocation loads an IANA zone by name. "Local" and "" are refused: the server's own zone is
// not something a caller can name.
func LoadLocation(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

// Next is the first firing strictly after t. Each matching local date has exactly one firing:
// its wall-clock time, or on a spring-forward day when that time does not exist the first valid
// instant after the gap (02:30 in a 02:00-03:00 gap fires at 03:00), or on a fall-back day when it
// exists twice the first occurrence. Next(fire) is therefore never the same date again.
func (s Schedule) Next(t time.Time) time.Time {
	local := t.In(s.Location)
	// A date's firing falls on that local date, so earlier dates cannot fire after t.
	day := time.Date(local.Year(), local.Month(), local.Day(), 12, 0, 0, 0, time.UTC)
	// 60 days cover every monthly schedule (day 1-28); weekly needs 8, daily 2.
	for range 60 {
		y, m, d := day.Date()
		if s.matches(day) {
			if at := wallTime(y, m, d, s.Hour, s.Minute, s.Location); at.After(t) {
				return at.UTC()
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	panic(fmt.Sprintf("loop: no firing within 60 days after %s for %+v", t, s))
}

// matches reports whether a date (given as noon UTC of that calendar date) has a firing.
func (s Schedule) matches(day time.Time) bool {
	switch s.Frequency {
	case Weekly:
		return s.DayOfWeek != nil && (int(day.Weekday())+6)%7 == *s.DayOfWeek
	case Monthly:
		return s.DayOfMonth != nil && day.Day() == *s.DayOfMonth
	default:
		return true
	}
}

// wallTime resolves a local wall-clock time to one instant: the earliest instant showing it, or,
// when no instant does (a DST gap), the first instant after the gap.
func wallTime(y int, m time.Month, d, hh, mm int, loc *time.Location) time.Time {
	naive := time.Date(y, m, d, hh, mm, 0, 0, time.UTC)
	// The offsets in force a day either side bracket any transition on this date.
	var best time.Time
	for _, probe := range []time.Time{naive.Add(-24 * time.Hour), naive.Add(24 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		at := naive.Add(-time.Duration(off) * time.Second)
		lt := at.In(loc)
		if lt.Year() == y && lt.Month() == m && lt.Day() == d && lt.Hour() == hh && lt.Minute() == mm {
			if best.IsZero() || at.Before(best) {
				best = at
			}
		}
	}
	if !best.IsZero() {
		return best
	}
	// A gap: the offset in force before it puts the wall time after the transition; the zone
	// period of that instant starts exactly at the transition, the first valid instant.
	var later time.Time
	for _, probe := range []time.Time{naive.Add(-24 * time.Hour), naive.Add(24 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		if at := naive.Add(-time.Duration(off) * time.Second); at.After(later) {
			later = at
		}
	}
	if start, _ := later.In(loc).ZoneBounds(); !start.IsZero() && !start.After(later) {
		return start
	}
	return later
}
