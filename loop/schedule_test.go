package loop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/fault"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestNext(t *testing.T) {
	t.Parallel()
	ny, berlin := mustLoc(t, "America/New_York"), mustLoc(t, "Europe/Berlin")
	d := func(n int) *int { return &n }
	daily := func(h, m int, loc *time.Location) Schedule {
		return Schedule{Frequency: Daily, Hour: h, Minute: m, Location: loc}
	}
	tests := []struct {
		name  string
		s     Schedule
		after string
		want  string
	}{
		{"daily later today", daily(8, 30, time.UTC), "2025-03-10T07:00:00Z", "2025-03-10T08:30:00Z"},
		{"daily exactly at the time is the next day", daily(8, 30, time.UTC), "2025-03-10T08:30:00Z", "2025-03-11T08:30:00Z"},
		{"daily just after", daily(8, 30, time.UTC), "2025-03-10T08:30:00.000001Z", "2025-03-11T08:30:00Z"},
		{"daily across the year", daily(0, 0, time.UTC), "2025-12-31T23:59:00Z", "2026-01-01T00:00:00Z"},
		{"daily in a zone", daily(8, 30, berlin), "2025-01-15T00:00:00Z", "2025-01-15T07:30:00Z"},

		// America/New_York springs forward 2025-03-09 02:00 EST -> 03:00 EDT.
		{"NY spring forward: 02:30 does not exist, runs at 03:00 EDT", daily(2, 30, ny), "2025-03-08T12:00:00Z", "2025-03-09T07:00:00Z"},
		{"NY spring forward: the day before is normal", daily(2, 30, ny), "2025-03-07T12:00:00Z", "2025-03-08T07:30:00Z"},
		{"NY spring forward: after the 03:00 run, next is the day after", daily(2, 30, ny), "2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z"},
		{"NY spring forward: 03:30 exists", daily(3, 30, ny), "2025-03-08T12:00:00Z", "2025-03-09T07:30:00Z"},
		{"NY spring forward: 01:59 exists", daily(1, 59, ny), "2025-03-08T12:00:00Z", "2025-03-09T06:59:00Z"},
		// America/New_York falls back 2025-11-02 02:00 EDT -> 01:00 EST: 01:30 happens twice.
		{"NY fall back: 01:30 runs at the first occurrence (EDT)", daily(1, 30, ny), "2025-11-01T12:00:00Z", "2025-11-02T05:30:00Z"},
		{"NY fall back: not again at the second occurrence", daily(1, 30, ny), "2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"},
		{"NY fall back: between the two occurrences", daily(1, 30, ny), "2025-11-02T06:00:00Z", "2025-11-03T06:30:00Z"},
		{"NY fall back: 02:30 is unambiguous (EST)", daily(2, 30, ny), "2025-11-01T12:00:00Z", "2025-11-02T07:30:00Z"},

		// Europe/Berlin springs forward 2025-03-30 02:00 CET -> 03:00 CEST.
		{"Berlin spring forward: 02:30 runs at 03:00 CEST", daily(2, 30, berlin), "2025-03-29T12:00:00Z", "2025-03-30T01:00:00Z"},
		{"Berlin spring forward: once", daily(2, 30, berlin), "2025-03-30T01:00:00Z", "2025-03-31T00:30:00Z"},
		{"Berlin spring forward: 02:00 runs at 03:00 CEST", daily(2, 0, berlin), "2025-03-29T12:00:00Z", "2025-03-30T01:00:00Z"},
		// Europe/Berlin falls back 2025-10-26 03:00 CEST -> 02:00 CET: 02:30 happens twice.
		{"Berlin fall back: 02:30 first occurrence (CEST)", daily(2, 30, berlin), "2025-10-25T12:00:00Z", "2025-10-26T00:30:00Z"},
		{"Berlin fall back: not at the second occurrence", daily(2, 30, berlin), "2025-10-26T00:30:00Z", "2025-10-27T01:30:00Z"},
		{"Berlin weekly on the fall-back Sunday", Schedule{Frequency: Weekly, Hour: 2, Minute: 30, DayOfWeek: d(6), Location: berlin},
			"2025-10-20T00:00:00Z", "2025-10-26T00:30:00Z"},

		{"weekly Monday from a Wednesday", Schedule{Frequency: Weekly, Hour: 8, Minute: 30, DayOfWeek: d(0), Location: berlin},
			"2025-03-12T10:00:00Z", "2025-03-17T07:30:00Z"},
		{"weekly today but passed", Schedule{Frequency: Weekly, Hour: 8, Minute: 0, DayOfWeek: d(2), Location: time.UTC},
			"2025-03-12T09:00:00Z", "2025-03-19T08:00:00Z"},
		{"weekly today not yet", Schedule{Frequency: Weekly, Hour: 8, Minute: 0, DayOfWeek: d(2), Location: time.UTC},
			"2025-03-12T07:00:00Z", "2025-03-12T08:00:00Z"},
		{"weekly Sunday", Schedule{Frequency: Weekly, Hour: 23, Minute: 59, DayOfWeek: d(6), Location: time.UTC},
			"2025-03-10T00:00:00Z", "2025-03-16T23:59:00Z"},
		{"weekly: local day differs from UTC day", Schedule{Frequency: Weekly, Hour: 0, Minute: 30, DayOfWeek: d(0), Location: berlin},
			"2025-03-12T00:00:00Z", "2025-03-16T23:30:00Z"},

		{"monthly later this month", Schedule{Frequency: Monthly, Hour: 9, Minute: 0, DayOfMonth: d(15), Location: time.UTC},
			"2025-03-10T00:00:00Z", "2025-03-15T09:00:00Z"},
		{"monthly from a month end", Schedule{Frequency: Monthly, Hour: 9, Minute: 0, DayOfMonth: d(1), Location: time.UTC},
			"2025-01-31T23:00:00Z", "2025-02-01T09:00:00Z"},
		{"monthly 28th across February", Schedule{Frequency: Monthly, Hour: 9, Minute: 0, DayOfMonth: d(28), Location: time.UTC},
			"2025-02-28T10:00:00Z", "2025-03-28T09:00:00Z"},
		{"monthly 28th in a leap February", Schedule{Frequency: Monthly, Hour: 9, Minute: 0, DayOfMonth: d(28), Location: time.UTC},
			"2028-02-01T00:00:00Z", "2028-02-28T09:00:00Z"},
		{"monthly across the year", Schedule{Frequency: Monthly, Hour: 0, Minute: 0, DayOfMonth: d(28), Location: time.UTC},
			"2025-12-28T00:00:00Z", "2026-01-28T00:00:00Z"},
		{"monthly on a spring-forward day", Schedule{Frequency: Monthly, Hour: 2, Minute: 30, DayOfMonth: d(9), Location: ny},
			"2025-02-10T00:00:00Z", "2025-03-09T07:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.s.Next(utc(tt.after))
			require.Equal(t, utc(tt.want), got, "local %s", got.In(tt.s.Location))
			require.Equal(t, time.UTC, got.Location())
		})
	}
}

// TestNextNeverTwiceADay walks a year of daily firings in zones with DST and checks one firing
// per local date, every date.
func TestNextNeverTwiceADay(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "UTC"} {
		for _, hm := range [][2]int{{0, 0}, {1, 30}, {2, 0}, {2, 30}, {3, 0}, {23, 59}} {
			s := Schedule{Frequency: Daily, Hour: hm[0], Minute: hm[1], Location: mustLoc(t, zone)}
			at := utc("2025-01-01T12:00:00Z")
			prev := ""
			for range 366 {
				next := s.Next(at)
				require.True(t, next.After(at))
				day := next.In(s.Location).Format(time.DateOnly)
				require.NotEqual(t, prev, day, "%s %v fired twice on %s", zone, hm, day)
				if prev != "" {
					p, _ := time.Parse(time.DateOnly, prev)
					require.Equal(t, p.AddDate(0, 0, 1).Format(time.DateOnly), day, "%s %v skipped a day", zone, hm)
				}
				prev, at = day, next
			}
		}
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	i := func(n int) *int { return &n }
	str := func(s string) *string { return &s }
	tests := []struct {
		name       string
		in         ScheduleInput
		wantFields []string
		wantDOW    *int
		wantZone   string
	}{
		{"daily defaults", ScheduleInput{Frequency: Daily}, nil, nil, "UTC"},
		{"weekly by number", ScheduleInput{Frequency: Weekly, DayOfWeek: str("4")}, nil, i(4), "UTC"},
		{"weekly by name", ScheduleInput{Frequency: Weekly, DayOfWeek: str("monday")}, nil, i(0), "UTC"},
		{"weekly by name any case", ScheduleInput{Frequency: Weekly, DayOfWeek: str("SUNDAY")}, nil, i(6), "UTC"},
		{"weekly with a zone", ScheduleInput{Frequency: Weekly, DayOfWeek: str("friday"), Timezone: str("Europe/Berlin")}, nil, i(4), "Europe/Berlin"},
		{"weekly without a day", ScheduleInput{Frequency: Weekly}, []string{"schedule/schedule_config/day_of_week"}, nil, ""},
		{"weekly bad day", ScheduleInput{Frequency: Weekly, DayOfWeek: str("7")}, []string{"schedule/schedule_config/day_of_week"}, nil, ""},
		{"weekly abbreviation", ScheduleInput{Frequency: Weekly, DayOfWeek: str("mon")}, []string{"schedule/schedule_config/day_of_week"}, nil, ""},
		{"daily with a weekday", ScheduleInput{Frequency: Daily, DayOfWeek: str("1")}, []string{"schedule/schedule_config/day_of_week"}, nil, ""},
		{"monthly", ScheduleInput{Frequency: Monthly, DayOfMonth: i(28)}, nil, nil, "UTC"},
		{"monthly without a day", ScheduleInput{Frequency: Monthly}, []string{"schedule/schedule_config/day_of_month"}, nil, ""},
		{"monthly 29", ScheduleInput{Frequency: Monthly, DayOfMonth: i(29)}, []string{"schedule/schedule_config/day_of_month"}, nil, ""},
		{"weekly with a day of month", ScheduleInput{Frequency: Weekly, DayOfWeek: str("0"), DayOfMonth: i(3)}, []string{"schedule/schedule_config/day_of_month"}, nil, ""},
		{"unknown zone", ScheduleInput{Frequency: Daily, Timezone: str("Mars/Olympus")}, []string{"schedule/timezone"}, nil, ""},
		{"Local refused", ScheduleInput{Frequency: Daily, Timezone: str("Local")}, []string{"schedule/timezone"}, nil, ""},
		{"hourly refused", ScheduleInput{Frequency: "hourly"}, []string{"schedule/frequency"}, nil, ""},
		{"hour out of range", ScheduleInput{Frequency: Daily, Hour: i(24), Minute: i(60)}, []string{"schedule/schedule_config/hour", "schedule/schedule_config/minute"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := ParseSchedule("schedule", tt.in)
			if tt.wantFields != nil {
				require.True(t, fault.IsKind(err, fault.Invalid), "err %v", err)
				var fields []string
				for _, e := range fault.Of(err).Fields {
					fields = append(fields, e.Field)
				}
				require.Equal(t, tt.wantFields, fields)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantDOW, s.DayOfWeek)
			require.Equal(t, tt.wantZone, s.Location.String())
		})
	}
}
