package extractive

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dates as sources write them ("28 December 1879", "June 1, 1878", "1878-06-01"), read into the
// ISO form a `format: date` field holds. A date without its day ("June 1878") is no date: the
// field stays empty rather than holding a day the source does not state.

var (
	monthNames = `(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?`
	reDayMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthNames + `,?\s+(\d{4})\b`)
	reMonthDay = regexp.MustCompile(`(?i)\b` + monthNames + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
)

// reDayMonthOnly and reMonthDayOnly are a day and month written without a year ("released on 9
// October", "by October 31"): a letter or an e-mail leaves out the year its own date gives.
var (
	reDayMonthOnly = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthNames + `(?:,?\s+\d{4})?`)
	reMonthDayOnly = regexp.MustCompile(`(?i)\b` + monthNames + `\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+\d{4})?`)
)

// findDayMonth is the first day and month text states without a year, in the year yearOf gives
// (a document's own year: docYear; asked only when text has such a date), as YYYY-MM-DD.
func findDayMonth(text string, yearOf func() string) (string, bool) {
	at, day, mon := -1, "", ""
	if m := reDayMonthOnly.FindStringSubmatchIndex(text); m != nil && !strings.ContainsAny(text[m[0]:m[1]], ",") && !reYearEnd.MatchString(text[m[0]:m[1]]) {
		at, day, mon = m[0], text[m[2]:m[3]], text[m[4]:m[5]]
	}
	if m := reMonthDayOnly.FindStringSubmatchIndex(text); m != nil && !reYearEnd.MatchString(text[m[0]:m[1]]) && (at < 0 || m[0] < at) {
		at, mon, day = m[0], text[m[2]:m[3]], text[m[4]:m[5]]
	}
	if at < 0 {
		return "", false
	}
	year := yearOf()
	if year == "" {
		return "", false
	}
	return isoDate(year, mon, day)
}

var reYearEnd = regexp.MustCompile(`\d{4}$`)

// docYear is the year of a document's own date: the first full date it states (an e-mail's
// "Date:" line, a letter's or a meeting's date); "" when it states none.
func (c *corpus) docYear(d int) string {
	for _, un := range c.units {
		if un.Doc != d {
			continue
		}
		if iso, ok := findDate(un.Text); ok {
			return iso[:4]
		}
	}
	if iso, ok := findDate(c.titles[d]); ok {
		return iso[:4]
	}
	return ""
}

// findDate is the first date text states, as YYYY-MM-DD.
func findDate(text string) (string, bool) {
	type hit struct {
		at             int
		day, mon, year string
	}
	var best *hit
	consider := func(h hit) {
		if best == nil || h.at < best.at {
			best = &h
		}
	}
	if loc := reDate.FindStringIndex(text); loc != nil {
		consider(hit{at: loc[0], year: text[loc[0] : loc[0]+4], mon: text[loc[0]+5 : loc[0]+7], day: text[loc[0]+8 : loc[0]+10]})
	}
	if m := reDayMonth.FindStringSubmatchIndex(text); m != nil {
		consider(hit{at: m[0], day: text[m[2]:m[3]], mon: text[m[4]:m[5]], year: text[m[6]:m[7]]})
	}
	if m := reMonthDay.FindStringSubmatchIndex(text); m != nil {
		consider(hit{at: m[0], mon: text[m[2]:m[3]], day: text[m[4]:m[5]], year: text[m[6]:m[7]]})
	}
	if best == nil {
		return "", false
	}
	return isoDate(best.year, best.mon, best.day)
}

// isoDate checks a date (month as a number or a name) and writes it as YYYY-MM-DD.
func isoDate(year, month, day string) (string, bool) {
	y, err1 := strconv.Atoi(year)
	d, err2 := strconv.Atoi(day)
	m, err3 := strconv.Atoi(month)
	if err3 != nil {
		m = monthNumber(month)
	}
	if err1 != nil || err2 != nil || m == 0 {
		return "", false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != m { // 31 June is no date
		return "", false
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), true
}

func monthNumber(name string) int {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for m := time.January; m <= time.December; m++ {
		full := strings.ToLower(m.String())
		if name == full || (len(name) >= 3 && strings.HasPrefix(full, name)) {
			return int(m)
		}
	}
	return 0
}
