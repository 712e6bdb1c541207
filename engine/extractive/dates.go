package extractive

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/researchd/researchd/engine/nlp"
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

// dateMention is a date a text states: where, as YYYY-MM-DD, and its place in a range ("11 – 13
// September 2026", "from 2 March to 30 April"): -1 the start, +1 the end, 0 none.
type dateMention struct {
	iso        string
	start, end int
	inRange    int
	yearless   bool // the text writes no year for it (the document's own was taken)
}

var (
	// reDayRange is two days of one month: "11–13 September 2026", "Friday 11 – Sunday 13 September".
	reDayRange = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s*(?:–|-|to|until|till)\s*(?:[a-z]+day\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+` + monthNames + `(?:,?\s+(\d{4}))?`)
	// reMonthDayRange is the same written month first: "September 11–13, 2026".
	reMonthDayRange = regexp.MustCompile(`(?i)\b` + monthNames + `\s+(\d{1,2})\s*(?:–|-|to)\s*(\d{1,2}),?\s+(\d{4})\b`)
	// reRangeBetween joins two dates into a range.
	reRangeBetween = regexp.MustCompile(`(?i)^[\s,]*(?:–|-|to|until|till|through|and)\s*(?:[a-z]+day,?\s+)?$`)
)

// dateMentions are the dates text states, in order; a date without its year takes the year
// yearOf gives (the document's own), and is left out when it gives none.
func dateMentions(text string, yearOf func() string) []dateMention {
	var out []dateMention
	docYear := sync.OnceValue(yearOf) // asked only of a date without its year, once
	add := func(at, end int, year, mon, day string) {
		yearless := year == ""
		if yearless {
			year = docYear()
		}
		if iso, ok := isoDate(year, mon, day); ok {
			out = append(out, dateMention{iso: iso, start: at, end: end, yearless: yearless})
		}
	}
	for _, m := range reDayRange.FindAllStringSubmatchIndex(text, -1) {
		year := sub(text, m, 4)
		add(m[0], m[3], year, sub(text, m, 3), sub(text, m, 1))
		add(m[4], m[1], year, sub(text, m, 3), sub(text, m, 2))
	}
	for _, m := range reMonthDayRange.FindAllStringSubmatchIndex(text, -1) {
		add(m[0], m[5], sub(text, m, 4), sub(text, m, 1), sub(text, m, 2))
		add(m[6], m[1], sub(text, m, 4), sub(text, m, 1), sub(text, m, 3))
	}
	for _, loc := range reDate.FindAllStringIndex(text, -1) {
		add(loc[0], loc[1], text[loc[0]:loc[0]+4], text[loc[0]+5:loc[0]+7], text[loc[0]+8:loc[0]+10])
	}
	for _, m := range reDayMonthOnly.FindAllStringSubmatchIndex(text, -1) {
		add(m[0], m[1], trailingYear(text[m[0]:m[1]]), sub(text, m, 2), sub(text, m, 1))
	}
	for _, m := range reMonthDayOnly.FindAllStringSubmatchIndex(text, -1) {
		add(m[0], m[1], trailingYear(text[m[0]:m[1]]), sub(text, m, 1), sub(text, m, 2))
	}
	return rangesOf(text, firstOfOverlaps(out))
}

func sub(text string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return text[m[2*i]:m[2*i+1]]
}

func trailingYear(s string) string { return reYearEnd.FindString(s) }

// firstOfOverlaps keeps, of mentions that overlap, the one found first (a range's days before
// the plain date inside it), in text order.
func firstOfOverlaps(ms []dateMention) []dateMention {
	var out []dateMention
	for _, m := range ms {
		if !slices.ContainsFunc(out, func(o dateMention) bool { return m.start < o.end && o.start < m.end }) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b dateMention) int { return a.start - b.start })
	return out
}

// rangesOf marks two dates joined by a dash, "to" or "until" as a range's start and end. A start
// written without its year is in the end's year, or the year before when it would come after it
// ("7 March – 30 August 2026", "15 December – 10 January 2027").
func rangesOf(text string, ms []dateMention) []dateMention {
	for i := 0; i+1 < len(ms); i++ {
		if reRangeBetween.MatchString(text[ms[i].end:ms[i+1].start]) {
			ms[i].inRange, ms[i+1].inRange = -1, 1
			if ms[i].yearless && !ms[i+1].yearless && len(ms[i].iso) == 10 {
				start := ms[i+1].iso[:4] + ms[i].iso[4:]
				if start > ms[i+1].iso {
					y, _ := strconv.Atoi(ms[i+1].iso[:4])
					start = strconv.Itoa(y-1) + ms[i].iso[4:]
				}
				ms[i].iso, ms[i].yearless = start, false
			}
		}
	}
	return ms
}

var (
	reStartField = regexp.MustCompile(`(?i)\b(?:start|starts|starting|begin|begins|beginning|from|first|opening|opens)\b`)
	reEndField   = regexp.MustCompile(`(?i)\b(?:end|ends|ending|finish|finishes|until|last|closing|closes|deadline)\b`)
)

// fillDate takes a date field's value from the first three of its passages that state a date: the
// date of the better passage, stated nearer after a word of the field's name ("to launch on 1
// April 2026", not the press release's own date), at the end of a range the field asks for ("11 –
// 13 September 2026": festival_end_date). A date without its year takes the year of its
// document's own date ("released on 9 October" in an e-mail of 14 October 2026).
func (x *extractor) fillDate(field string) (any, bool, []evidence) {
	name, _, _ := strings.Cut(field, fieldSep)
	terms := fieldTerms(name)
	hn := strings.NewReplacer("_", " ", "-", " ").Replace(name)
	wants := 0
	switch {
	case reEndField.MatchString(hn):
		wants = 1
	case reStartField.MatchString(hn):
		wants = -1
	}
	if wants != 0 && boundOnly(hn) {
		// "opening_date", "end_date": of what the question is about, the range its page gives.
		if v, ok, ev := x.rangeDate(wants); ok {
			return v, ok, ev
		}
	}
	best, bestScore := "", math.Inf(-1)
	var at evidence
	read := 0
	for _, e := range x.searchIn(field, false, true) {
		un := x.c.units[e.U]
		ms := dateMentions(un.Text, func() string { return x.c.docYear(un.Doc) })
		if len(ms) == 0 {
			continue
		}
		for _, m := range ms {
			score := e.Score*2 - float64(read)*0.25 - 0.2*float64(wordsFromField(un.Text, m, terms))
			switch {
			case m.inRange != 0 && m.inRange == wants:
				score += 3
			case m.inRange != 0 && wants == 0 && m.inRange == 1, m.inRange != 0 && m.inRange == -wants:
				score -= 3
			}
			if score > bestScore {
				best, bestScore, at = m.iso, score, e
			}
		}
		if read++; read == 3 {
			break
		}
	}
	if best == "" && wants != 0 {
		return x.rangeDate(wants)
	}
	if best == "" {
		return nil, false, nil
	}
	return best, true, []evidence{at}
}

// boundOnly: a field's name says only that it is the start or the end of something, and a date
// ("opening_date", "end_date"; not "application_closing_date").
func boundOnly(name string) bool {
	for _, w := range strings.Fields(name) {
		if !reStartField.MatchString(w) && !reEndField.MatchString(w) && !formatWords[nlp.Stem(w)] {
			return false
		}
	}
	return true
}

// rangeDate: a field asking for the start or the end of something that its words do not name
// ("closing_date" of a page that says "7 March – 30 August 2026") takes it from the first range of
// dates in the documents read that the question's best passages come from: a page states the dates
// of what it is about near its top.
func (x *extractor) rangeDate(wants int) (any, bool, []evidence) {
	for _, d := range x.questionDocs() {
		for u, un := range x.c.units {
			if un.Doc != d || !x.c.mentions(u, x.subject) {
				continue
			}
			for _, m := range dateMentions(un.Text, func() string { return x.c.docYear(d) }) {
				if m.inRange == wants {
					return m.iso, true, []evidence{{U: u, Score: 0}}
				}
			}
		}
	}
	return nil, false, nil
}

// wordsFromField is how many words lie between a date and the nearest word of the field's name
// (itself or a WordNet relative) before it, up to 20; one after it counts double: sources
// write "launch on 1 April", and a date that precedes ("3 February 2026 -- … the launch of")
// dates something else.
func wordsFromField(text string, m dateMention, terms []string) int {
	names := func(w string) bool {
		t := nlp.Stem(strings.ToLower(w))
		return slices.ContainsFunc(terms, func(f string) bool { return f == t || slices.Contains(nlp.Related(f), t) })
	}
	best := 20
	before := strings.Fields(text[:m.start])
	for i := len(before) - 1; i >= 0 && len(before)-1-i < best; i-- {
		if names(strings.Trim(before[i], ".,;:()\"'*")) {
			best = len(before) - 1 - i
		}
	}
	after := strings.Fields(text[m.end:])
	for i := 0; i < len(after) && 2*(i+1) < best; i++ {
		if names(strings.Trim(after[i], ".,;:()\"'*")) {
			best = 2 * (i + 1)
		}
	}
	return best
}
