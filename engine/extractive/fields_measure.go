package extractive

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// What kind of figure a number field asks for, read from its name, title and description, and
// the scale figures are stated in: a field of money takes an amount of money, a field in per
// cent a percentage, and "£2.4 million" is 2,400,000 for "cost_gbp" but 2.4 for
// "revenue_gbp_million".

// fieldMeasure is what a number field asks for.
type fieldMeasure struct {
	money   bool    // an amount of money: a figure with a currency sign, code or word
	percent bool    // a percentage: a figure followed by "%", "percent" or "per cent"
	scale   float64 // what one of the field's units is worth: 1e6 for a field "in millions"
	per     float64 // a span of time: the seconds of the field's unit ("outage_minutes": 60); 0 otherwise
	// each is the stem of what a rate is counted by ("meal" of "cost_per_meal_kronor"): its
	// figure is stated by that thing, near it ("£4 a meal", "each meal costs £4").
	each string
	unit []string // a unit of measure the field names ("feet" of "dam_height_feet"): its forms
	age  bool     // an age, counted in years ("age_at_death": "aged 67", "67 years old")
}

var (
	reMoneyMeasure   = regexp.MustCompile(`(?i)\b(?:price|prices|cost|costs|fee|fees|revenue|revenues|salary|budget|profit|spend|spending|fare|toll|usd|eur|gbp|nok|sek|dkk|chf|jpy|dollars?|euros?|pounds? sterling|sterling|kronor|kroner|krona)\b`)
	rePercentMeasure = regexp.MustCompile(`(?i)\b(?:percent|per cent|percentage|pct)\b|%`)
	reScaleWord      = regexp.MustCompile(`(?i)\b(thousands?|millions?|mn|mln|billions?|bn)\b`)
	// reScaleAfter is a scale written after a figure; the abbreviations ("2.4m", "£6bn") only of
	// money, where "m" is no metre.
	reScaleAfter      = regexp.MustCompile(`^(?:thousand|million|billion)\b`)
	reMoneyScaleAfter = regexp.MustCompile(`^(?:thousand|million|billion|mn|m|bn|k)\b`)
	reMoneyAfter      = regexp.MustCompile(`^(?:(?:thousand|million|billion|mn|m|bn|k)\s?)?(?:usd|eur|gbp|nok|sek|dkk|chf|jpy|dollars?|euros?|pounds?|kroner|kronor|krona|cents?|pence|p)\b`)
	rePercentAfter    = regexp.MustCompile(`^(?:%|percent\b|per cent\b|percentage points?\b)`)
)

// measureOf reads a field's measure from its text (name, title and description, fieldSep
// between them). The name speaks in words joined by "_" ("revenue_gbp_million"), so it is read
// with spaces.
func measureOf(field string) fieldMeasure {
	text := strings.NewReplacer(fieldSep, " ", "_", " ", "-", " ").Replace(field)
	m := fieldMeasure{money: reMoneyMeasure.MatchString(text), percent: rePercentMeasure.MatchString(text), scale: 1}
	if m.percent {
		m.money = false // "share of costs in per cent" asks for a percentage
	}
	name, _, _ := strings.Cut(field, fieldSep)
	if name = strings.NewReplacer("_", " ", "-", " ").Replace(name); reDurationField.MatchString(name) &&
		!reMoneyMeasure.MatchString(name) && !rePercentMeasure.MatchString(name) {
		// A span of time named by the field ("cooling_off_days") is asked for, whatever its
		// description mentions in passing ("… without a cancellation fee").
		m.money, m.percent = false, false
	}
	if w := reScaleWord.FindString(text); w != "" {
		m.scale = scaleOf(w)
	}
	if w := reDurationField.FindString(text); w != "" {
		m.per = secondsOf(w)
	}
	m.unit = unitOf(text)
	m.age = reAgeField.MatchString(text)
	if e := rePerField.FindStringSubmatch(name); e != nil && !nlp.IsStopword(strings.ToLower(e[1])) {
		// A rate named by the field ("cost_per_meal_kronor"); a description's "per claim" (of a
		// standard excess) says how the amount applies, not that a total might be confused with it.
		m.each = nlp.Stem(strings.ToLower(e[1]))
	}
	return m
}

// reAgeField is a field of someone's or something's age.
var reAgeField = regexp.MustCompile(`(?i)\b(?:age|aged|old)\b`)

// rePerField is a rate in a field's name: "cost per meal", "price_per_night".
var rePerField = regexp.MustCompile(`(?i)\b(?:per|each|every)\s+([a-z]{3,})\b`)

// statesEach: the figure at text[start:end] is stated by the thing a rate is counted by, within a
// few words of it ("£1,850 per flat", "a frozen month costs 5 euros"); a total is not.
func statesEach(text string, start, end int, each string) bool {
	near := text[max(0, start-30):min(len(text), end+30)]
	return slices.Contains(wordStems(near), each)
}

var (
	// reDurationField: a field in a unit of time, plural ("outage_minutes", "in months"); "year"
	// alone names a calendar year, "per hour" a rate.
	reDurationField = regexp.MustCompile(`(?i)\b(?:seconds|secs|minutes|mins|hours|hrs|days|weeks|months|years)\b`)
	// reDurationAfter is a span of time's unit after its figure, and a smaller unit after it:
	// "3 hours and 12 minutes".
	reDurationAfter = regexp.MustCompile(`^(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b(?:,?\s*(?:and\s+)?(\d+)\s*(seconds?|secs?|minutes?|mins?|days?|months?)\b)?`)
	// reDurationBefore: the figure is the smaller unit of such a span ("12" of "3 hours and 12
	// minutes"), counted with the larger.
	reDurationBefore = regexp.MustCompile(`\d\s*(?:hours?|hrs?|days?|weeks?|minutes?|mins?),?\s*(?:and)?$`)
)

// secondsOf is the length of a unit of time.
func secondsOf(unit string) float64 {
	switch u := strings.ToLower(unit); {
	case strings.HasPrefix(u, "sec"):
		return 1
	case strings.HasPrefix(u, "min"):
		return 60
	case strings.HasPrefix(u, "h"):
		return 3600
	case strings.HasPrefix(u, "d"):
		return 86400
	case strings.HasPrefix(u, "w"):
		return 604800
	case strings.HasPrefix(u, "mo"):
		return 2629746 // a twelfth of a mean Gregorian year
	case strings.HasPrefix(u, "y"):
		return 31556952
	}
	return 0
}

// scaleOf is the worth of a scale word.
func scaleOf(w string) float64 {
	switch w = strings.ToLower(w); {
	case strings.HasPrefix(w, "thousand"), w == "k":
		return 1e3
	case strings.HasPrefix(w, "million"), w == "mn", w == "mln", w == "m":
		return 1e6
	case strings.HasPrefix(w, "billion"), w == "bn":
		return 1e9
	}
	return 1
}

// stated is how a figure stands in its text: as money, as a percentage, the scale written after
// it, as a span of time (its length in seconds, with the smaller unit after it) or as the smaller
// unit of one (tail). before and after are the lower-case text around it.
type stated struct {
	money, percent bool
	scale          float64
	seconds        float64
	tail           bool
}

func statedAs(before, after string, f float64) stated {
	st := stated{scale: 1, tail: reDurationBefore.MatchString(before)}
	if m := reDurationAfter.FindStringSubmatch(after); m != nil {
		st.seconds = f * secondsOf(m[1])
		if m[2] != "" {
			more, _ := strconv.ParseFloat(m[2], 64)
			st.seconds += more * secondsOf(m[3])
		}
	}
	st.money = strings.HasSuffix(before, "$") || strings.HasSuffix(before, "€") || strings.HasSuffix(before, "£") ||
		strings.HasSuffix(before, "¥") || reCurrencyBefore.MatchString(before) || reMoneyAfter.MatchString(after)
	st.percent = rePercentAfter.MatchString(after)
	scale := reScaleAfter
	if st.money {
		scale = reMoneyScaleAfter
	}
	if w := scale.FindString(after); w != "" {
		st.scale = scaleOf(w)
	}
	return st
}

// withLabel adds what a table's column header or a "Label: value" line's label says of a figure
// in it ("Price (EUR)", "Share of households, %", "Revenue, £ million") to how it is stated.
func (st stated) withLabel(label string) stated {
	if label == "" {
		return st
	}
	m := measureOf(label)
	st.money = st.money || m.money || strings.ContainsAny(label, "$€£¥")
	st.percent = st.percent || m.percent
	if st.scale == 1 {
		st.scale = m.scale
	}
	return st
}

// fits: a figure stated so may fill a field of measure m; count says the field is an integer,
// which an amount of money or a percentage does not count unless the field asks for one
// ("number_of_flats" is not the "£1,850" each flat pays).
func (m fieldMeasure) fits(st stated, count bool) bool {
	switch {
	case count && (st.money && !m.money || st.percent && !m.percent):
		return false
	case m.per > 0 && st.tail:
		return false // counted with the larger unit before it
	case count && m.per == 0 && st.seconds > 0 && !m.age:
		return false // "two years of accounts" is no number of grants
	case m.money:
		return st.money
	case m.percent:
		return st.percent
	}
	return true
}

// value is the figure f in the field's units.
func (m fieldMeasure) value(f float64, st stated) float64 {
	switch {
	case st.percent:
		return f
	case m.per > 0 && st.seconds > 0:
		return st.seconds / m.per // "3 hours and 12 minutes" is 192 for "outage_minutes"
	}
	return f * st.scale / m.scale
}

// labelOf is what labels the figure literal in unit u: the header of a table row's cell that
// holds it, with the table's title, or a field line's label; "" for a sentence.
func (c *corpus) labelOf(u int, literal string) string {
	un := c.units[u]
	switch un.Kind {
	case extract.UnitField:
		label := extract.FieldLabel(un.Text)
		return label
	case extract.UnitRow:
		t := c.tables[un.Table]
		if un.Row < 0 || un.Row >= len(t.Rows) {
			return t.Title
		}
		for j, cell := range t.Rows[un.Row] {
			if strings.Contains(cell, literal) && j < len(t.Header) {
				return t.Header[j] + " · " + t.Title
			}
		}
		return t.Title
	}
	return ""
}

var (
	reMaxField = regexp.MustCompile(`(?i)\b(?:max|maximum|highest|upper|most|warmest|hottest|longest|largest|biggest|latest|up to|at most)\b`)
	reMinField = regexp.MustCompile(`(?i)\b(?:min|minimum|lowest|least|coldest|shortest|smallest|earliest|at least)\b`)
	// reRangeJoin joins the two ends of a range: "5 °C and 35 °C" (after "between"), "one to
	// three months", "9,000–14,000".
	reRangeJoin = regexp.MustCompile(`^\s*(?:\S+\s+)?(to|and|-|–)\s*[£$€]?\s*$`)
	reBetween   = regexp.MustCompile(`(?i)\b(?:between|from)\s*$`)
)

// extreme is which end of a range a field asks for: +1 the upper ("max_room_temperature_c",
// "longest pause"), -1 the lower, 0 neither.
func extreme(field string) int {
	text := strings.NewReplacer(fieldSep, " ", "_", " ").Replace(field)
	switch {
	case reMaxField.MatchString(text):
		return 1
	case reMinField.MatchString(text):
		return -1
	}
	return 0
}

// rangeEnd is which end of a range the figure at locs[i] is: -1 the lower ("between 5 °C and
// 35 °C"), +1 the upper, 0 none.
func rangeEnd(text string, locs [][]int, i int) int {
	joined := func(a, b []int) bool {
		m := reRangeJoin.FindStringSubmatch(text[a[1]:b[0]])
		return m != nil && (m[1] != "and" || reBetween.MatchString(text[max(0, a[0]-12):a[0]]))
	}
	switch {
	case i+1 < len(locs) && joined(locs[i], locs[i+1]):
		return -1
	case i > 0 && joined(locs[i-1], locs[i]):
		return 1
	}
	return 0
}

// reForecast: a sentence that looks ahead ("we expect gross margin to recover to about 42 per
// cent") gives an outlook, not the figure reported, unless the field asks for one.
var reForecast = regexp.MustCompile(`(?i)\b(?:expects?|expected|expecting|forecasts?|forecasted|outlook|guidance|targets?|targeted|projected|projects)\b`)
