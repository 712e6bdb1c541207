package extractive

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Units of measure a number field may be stated in ("dam_height_feet", "range_km"), and the
// figures of a text that are no quantity at all: the day and year of a date ("2 November 1893"
// is no age) and the number of a thing's name ("Round 2", "Hub 4").

// units are the units of length, mass, volume, energy, power, area, speed and data sources state
// figures in, each with the forms written after a figure; the first form is the unit's name in a
// field.
var units = [][]string{
	{"feet", "foot", "ft"}, {"inches", "inch"}, {"yards", "yard", "yd"}, {"miles", "mile", "mi"},
	{"metres", "meters", "metre", "meter", "m"}, {"kilometres", "kilometers", "kilometre", "kilometer", "km"},
	{"centimetres", "centimeters", "cm"}, {"millimetres", "millimeters", "mm"},
	{"kilograms", "kilogram", "kilos", "kg"}, {"grams", "gram", "g"}, {"tonnes", "tonne", "tons", "ton", "t"},
	{"lbs", "lb"}, {"litres", "liters", "litre", "liter", "l"}, {"millilitres", "milliliters", "ml"},
	{"gallons", "gallon", "gal"}, {"kwh", "kilowatt-hours", "kilowatt hours"}, {"mwh"}, {"gwh"},
	{"kw", "kilowatts", "kilowatt"}, {"mw", "megawatts", "megawatt"}, {"gw", "gigawatts", "gigawatt"},
	{"watts", "watt", "w"}, {"volts", "volt", "v"}, {"hectares", "hectare", "ha"}, {"acres", "acre"},
	{"mph", "miles per hour"}, {"kmh", "km/h", "kph"}, {"celsius", "°c", "degrees celsius", "degrees"},
	{"fahrenheit", "°f"}, {"mbps"}, {"gbps"}, {"gb", "gigabytes"}, {"tb", "terabytes"}, {"mb", "megabytes"},
	{"calories", "kcal"}, {"decibels", "db"},
}

// unitOf is the unit a field's text names (its forms), nil when it names none. A form of one
// letter or two ("m", "in") names no unit in a field's words: only whole names do.
func unitOf(text string) []string {
	words := strings.Fields(strings.ToLower(text))
	for _, u := range units {
		for _, w := range words {
			if w == u[0] || len(u) > 1 && len(u[1]) > 2 && w == u[1] {
				return u
			}
		}
	}
	return nil
}

// statedUnit is the unit a figure is stated in, from the text after it: its forms, or nil.
func statedUnit(after string) []string {
	after = strings.TrimSpace(strings.ToLower(after))
	for _, u := range units {
		for _, f := range u[1:] {
			if strings.HasPrefix(after, f) && (len(after) == len(f) || !unicode.IsLetter(rune(after[len(f)]))) {
				return u
			}
		}
		if strings.HasPrefix(after, u[0]) && (len(after) == len(u[0]) || !unicode.IsLetter(rune(after[len(u[0])]))) {
			return u
		}
	}
	return nil
}

// dateParts are the spans of text's dates ("14 March 1826", "March 14, 1826", "2026-04-01", "9
// October"): the figures in them are a day and a year, not quantities.
func dateParts(text string) [][]int {
	var out [][]int
	for _, re := range []*regexp.Regexp{reDate, reDayMonthOnly, reMonthDayOnly} {
		out = append(out, re.FindAllStringIndex(text, -1)...)
	}
	return out
}

func within(spans [][]int, loc []int) bool {
	for _, s := range spans {
		if loc[0] >= s[0] && loc[1] <= s[1] {
			return true
		}
	}
	return false
}

// reNamedNumber is a figure that numbers a named thing: a capitalised word right before it
// ("Round 2 has a budget", "the Lumenet Hub 4"); a month's name is none ("April 2024").
var reNamedNumber = regexp.MustCompile(`(\p{Lu}\p{Ll}+)\s$`)

// reListNumber is the number of a step or clause opening its line: "2. ", "3) ".
var reListNumber = regexp.MustCompile(`^\d{1,2}[.)]\s`)

// openerWords open a sentence before a figure without naming anything ("About 40 staff", "Only 12
// of them").
var openerWords = map[string]bool{"about": true, "around": true, "nearly": true, "almost": true, "over": true,
	"under": true, "only": true, "some": true, "just": true, "roughly": true, "approximately": true, "more": true,
	"fewer": true, "less": true, "up": true, "at": true, "exactly": true, "another": true, "all": true,
	"by": true, "in": true, "of": true, "from": true, "to": true, "with": true, "for": true, "on": true,
	"since": true, "until": true, "after": true, "before": true, "between": true}

// namesANumbered: the figure at text[start:] is the number of a thing's name ("Round 2"), not a
// quantity of anything, unless the field names that thing (field: its terms).
func namesANumbered(text string, start int, field []string) bool {
	if strings.TrimSpace(text[:start]) == "" && reListNumber.MatchString(text[start:]) {
		return true // "2. Talk to our Energy Fund Officer": the step's number
	}
	m := reNamedNumber.FindStringSubmatch(text[max(0, start-30):start])
	if m == nil || monthNumber(m[1]) != 0 || slices.Contains(field, nlp.Stem(strings.ToLower(m[1]))) {
		return false // a word the field names is what the figure measures ("IELTS Academic 6.5")
	}
	return !openerWords[strings.ToLower(m[1])]
}

// inUnit scores a figure for a field in unit u by the unit it is stated in (the text after it, or
// its table header or field label): the field's own unit 3, none -1; other says it is stated in
// another unit and does not fill the field.
func (x *extractor) inUnit(u []string, after string, unit int, literal string) (fit float64, other bool) {
	su := statedUnit(after)
	if su == nil {
		su = unitOf(x.c.labelOf(unit, literal))
	}
	switch {
	case su == nil:
		return -1, false
	case su[0] == u[0]:
		return 3, false
	}
	return 0, true
}

// labelFit scores a figure by its table column's header or its field line's label, and by its
// row: a header that states a word of the field's name ("Standard" of weekend_pass_standard_gbp)
// 2 for each, a passage that states what the field rules out (an "Early-bird weekend pass" row for
// a "non-early-bird" price) -3.
func (x *extractor) labelFit(u int, literal string, name, excluded []string) float64 {
	score := 0.0
	label, _, column := strings.Cut(x.c.labelOf(u, literal), " · ")
	if x.c.units[u].Kind == extract.UnitRow && !column {
		label = "" // a table's title heads every figure in it
	}
	for _, t := range nlp.Uniq(nlp.Terms(label)) {
		if slices.Contains(name, t) {
			score += 2
		}
	}
	// The passage's own words: a table row's terms hold its header's too.
	if own := nlp.Terms(x.c.units[u].Text); slices.ContainsFunc(excluded, func(t string) bool { return slices.Contains(own, t) }) {
		score -= 3
	}
	return score
}
