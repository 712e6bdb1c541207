package extractive

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// The values of structured-output fields other than text and names (fields.go): numbers,
// booleans, enum values and arrays, each taken from the field's evidence.

// fillNumber picks, from the field's best passages, the number that fits the schema's bounds and
// reads most like the field (numberFitTerms); ties go to the better passage, then the earlier number.
func (x *extractor) fillNumber(name string, s map[string]any, field string, integer bool) (any, bool, []evidence) {
	excluded := excludedTerms(field)
	ft := slices.DeleteFunc(nlp.Uniq(nlp.Terms(field)), func(t string) bool { return slices.Contains(excluded, t) })
	measure, end := measureOf(field), extreme(field)
	best, bestScore, found := 0.0, math.Inf(-1), false
	var at evidence
	// A passage that gives a figure of the measure asked for (an amount of money, a percentage, a
	// span of time) needs less of the field's words, as one that names an enum value does: the
	// figure is evidence itself ("A frozen month costs 5 euros" for "freeze_fee_eur_per_month").
	floor := fieldFloor
	if measure.money || measure.percent || measure.per > 0 {
		floor = enumFloor
	}
	// A passage without a figure gives none: the five read are the best that hold one (the
	// schedule's "| Monthly rent | £1,275 |" after clauses that only speak of the rent).
	if integer {
		if n, e, ok := x.countedList(field); ok {
			return int64(n), true, []evidence{e}
		}
	}
	var named []string // what a count field counts ("lenders"); a measure is no count
	if !measure.money && !measure.percent && measure.per == 0 && measure.unit == nil && !measure.age {
		named = fieldTerms(strings.SplitN(field, fieldSep, 2)[0])
	}
	ev := slices.DeleteFunc(x.search(field), func(e evidence) bool {
		text := x.c.units[e.U].Text
		if integer && len(countsNamed(text, named)) > 0 {
			return false // "loans from 14 lenders" for number_of_lenders: the count is evidence itself
		}
		return e.Score < floor || !x.namesField(e.U, field) || len(numberLocs(text)) == 0
	})
	for rank, e := range ev[:min(len(ev), 5)] {
		text := x.c.units[e.U].Text
		outlook := reForecast.MatchString(text) && !reForecast.MatchString(field) || reHypothetical.MatchString(text)
		locs, dates := numberLocs(text), dateParts(text)
		counting := countsNamed(text, named) // "14 lenders": the figure counts what the field names
		for i, loc := range locs {
			m := text[loc[0]:loc[1]]
			f, ok := parseNumber(m)
			if !ok || within(dates, loc) && !(extract.IsYear(m) && reYearField.MatchString(name)) || namesANumbered(text, loc[0], ft) {
				continue // "2 November 1893" is no age, "Round 2" no number of awards
			}
			st := statedAs(strings.TrimSpace(strings.ToLower(text[max(0, loc[0]-40):loc[0]])),
				reRangeRest.ReplaceAllString(strings.ToLower(strings.TrimSpace(text[loc[1]:min(len(text), loc[1]+40)])), ""), f).withLabel(x.c.labelOf(e.U, m))
			if !measure.fits(st, integer) {
				continue // "2025" is no price, "120,750 visits" no growth in per cent
			}
			if measure.each != "" && !statesEach(text, loc[0], loc[1], measure.each) {
				continue // "61 million kronor a year" is no cost per meal
			}
			if f = measure.value(f, st); (integer && f != math.Trunc(f)) || !inBounds(s, f) {
				continue
			}
			if loc[0] > 0 && unicode.IsLetter(rune(text[loc[0]-1])) {
				continue // part of a name or code ("CO2", "A320")
			}
			score := numberFitTerms(name, ft, text, loc[0], loc[1], m) + e.Score*2 - float64(rank)*0.5 - float64(i)*0.01
			score += x.labelFit(e.U, m, ft, excluded)
			if measure.unit != nil {
				fit, other := x.inUnit(measure.unit, text[loc[1]:min(len(text), loc[1]+40)], e.U, m)
				if other {
					continue // "1,150 feet long" is no height in metres
				}
				score += fit
			}
			if r := rangeEnd(text, locs, i); r != 0 && end != 0 {
				score += 3 * float64(r*end) // the end of "between 5 °C and 35 °C" asked for
			} else if end == 0 && priorValue(text, loc) && !rePriorField.MatchString(field) {
				score -= 3 // "£2.4 million, up from the £1.6 million": the figure before a change
			}
			if measure.per > 0 && st.seconds > 0 {
				score += 3 // a span of time for a field of one
			}
			if outlook {
				score -= 2
			}
			if integer && slices.Contains(counting, loc[0]) {
				score += 3
			}
			if score > bestScore {
				best, bestScore, found, at = f, score, true, e
			}
		}
	}
	if !found && measure.money {
		return x.freeOfCharge(field, integer)
	}
	if !found {
		return nil, false, nil
	}
	if integer {
		return int64(best), true, []evidence{at}
	}
	return best, true, []evidence{at}
}

// reListCount is a count field of a list's items: "Number of numbered steps in the migration
// procedure", "step_count".
var reListCount = regexp.MustCompile(`(?i)\b(?:number of|how many|count of)\s+(?:\w+\s+)?(steps|stages|items|tasks|actions|phases|rules|conditions|requirements|recommendations|changes|options)\b|\b(step|stage|item|task|action|phase|rule|condition|requirement|recommendation|change|option)s?[ _]count\b`)

// countedList fills a count of a list's items ("migration_step_count": the ten numbered steps
// under "MIGRATION PROCEDURE") from the section whose heading states most of the field's other
// words and holds two items at least: the count is of the items the document lists, however it
// words them.
func (x *extractor) countedList(field string) (int, evidence, bool) {
	text := strings.NewReplacer(fieldSep, " ", "_", " ").Replace(field)
	if !reListCount.MatchString(text) {
		return 0, evidence{}, false
	}
	terms := fieldTerms(field)
	best, bestHits := section{}, 0
	for _, sec := range x.c.sections {
		if x.docs != nil && !x.docs[sec.Doc] {
			continue
		}
		hits := 0
		for _, t := range terms {
			if sec.Head[t] {
				hits++
			}
		}
		if hits > bestHits {
			best, bestHits = sec, hits
		}
	}
	if bestHits == 0 {
		return 0, evidence{}, false
	}
	var items []int
	for _, u := range best.Units {
		if un := x.c.units[u]; un.Kind == extract.UnitItem && !slices.ContainsFunc(items, func(v int) bool { return x.c.units[v].Para == un.Para }) {
			items = append(items, u)
		}
	}
	if len(items) < 2 {
		return 0, evidence{}, false
	}
	return len(items), evidence{U: items[0], Score: fieldFloor}, true
}

// countsNamed: text gives a figure of what a word of the field's name names, the word right after
// it or one word later ("14 lenders", "230 hand-knitted objects"); at: the figures that do.
func countsNamed(text string, named []string) (at []int) {
	for _, loc := range figuresCounting(text, 2, func(w string) bool { return slices.Contains(named, nlp.Stem(w)) }) {
		if r := text[loc[0]]; r >= '0' && r <= '9' {
			at = append(at, loc[0]) // a figure: "two guests" of a couple is no count of guests
		}
	}
	return at
}

// freeOfCharge fills a money field that no figure answers with 0 when one of its best passages
// says the thing costs nothing ("It is free to everyone who is eligible" under "Do I have to pay
// for the vaccine?").
func (x *extractor) freeOfCharge(field string, integer bool) (any, bool, []evidence) {
	// Sources that say "free" seldom say "cost": the passage is the one that best matches the
	// question among those of the documents read that say so and speak of the field ("This service
	// is free for members" of a complaints service is no day pass's price).
	qs := x.c.scorer(x.q)
	best, top := evidence{U: -1}, 0.0
	for u, un := range x.c.units {
		if x.docs != nil && !x.docs[un.Doc] {
			continue
		}
		v := qs.coverage(u)
		top = max(top, v)
		if m := reFree.FindString(un.Text); v > best.Score && m != "" && !reCondition.MatchString(m) && x.aboutField(u, field) {
			best = evidence{u, v}
		}
	}
	if best.U < 0 || best.Score < top/2 {
		return nil, false, nil // "free delivery" in a passage about something else
	}
	if integer {
		return int64(0), true, []evidence{best}
	}
	return 0.0, true, []evidence{best}
}

// aboutField: unit u or its context (its heading, its document's title) states a word of the
// field's name other than its words for money, or a relative of one ("day_pass_price_gbp" is not
// what "the complaints service is free for members" prices); a field named only by money words
// ("cost_gbp") prices what the question asks about.
func (x *extractor) aboutField(u int, field string) bool {
	name, _, _ := strings.Cut(field, fieldSep)
	what := slices.DeleteFunc(fieldTerms(name), func(t string) bool { return reMoneyMeasure.MatchString(t) })
	states := func(t string) bool { return x.c.ownSet[u][t] || x.c.ctx[u][t] }
	return len(what) == 0 || slices.ContainsFunc(what, func(t string) bool { return states(t) || slices.ContainsFunc(relatives(t), states) })
}

// reCondition: a free of charge only on a condition ("or is free if your card was stolen") says
// nothing of what it costs otherwise.
var reCondition = regexp.MustCompile(`(?i)\b(?:if|unless|when|only)$`)

// reFree says that something costs nothing.
var reFree = regexp.MustCompile(`(?i)\b(?:(?:is|are|be|it's|for) free\b|free of charge|at no (?:extra )?cost|no charge|costs? nothing)(?:[^.;]*\b(?:if|unless|when|only)\b)?`)

// priorValue: the figure at loc is what something changed from ("up from the £1.6 million",
// "has risen from £1.6 million to £2.4 million").
func priorValue(text string, loc []int) bool {
	return reFromBefore.MatchString(text[max(0, loc[0]-40):loc[0]])
}

var (
	// reHypothetical: a figure of what would have happened ("keeping one lane open would have
	// stretched the closure to about 30 weeks") is not the one that will.
	reHypothetical = regexp.MustCompile(`(?i)\b(?:would|could|might) have\b`)
	// reFromBefore: a change from a figure ("up from the £1.6 million", "has risen from £1.6
	// million", "to £4.86 million, from £4.46 million"), not a span ("range from 9,000 to 14,000
	// euros").
	reFromBefore = regexp.MustCompile(`(?i)(?:\b(?:up|down|rose|risen|rising|fell|fallen|falling|increased|decreased|grew|grown|dropped|cut|raised|reduced|climbed|jumped|changed|moved)(?:\s+\w+)?|,)\s+from\s+(?:the\s+|a\s+)?[£$€]?\s*$`)
	// rePriorField: a field that asks for the figure before a change.
	rePriorField = regexp.MustCompile(`(?i)(?:^|_|\b)(?:previous|prior|original|initial|old|former|before)(?:$|_|\b)`)
)

// fillBool: true when the field's best evidence states it without negation, false when negated;
// no evidence fills nothing. Evidence under a yes/no question heading ("Does the K2 need a
// boundary wire?") takes the section's own answer when it opens with one ("No. The K2 finds …"):
// the sentences after it may not deny anything.
func (x *extractor) fillBool(field string) (any, bool, []evidence) {
	ev := strong(x.searchIn(field, true, false))
	if len(ev) == 0 {
		return nil, false, nil
	}
	if yes, first, ok := x.c.polarAnswer(ev[0].U); ok {
		return yes, true, []evidence{{U: first, Score: ev[0].Score}}
	}
	if nlp.DeniesAny(x.c.units[ev[0].U].Text) {
		return false, true, ev[:1]
	}
	return true, true, ev[:1]
}

// directions are word families for enum values that name a direction of change, so "increasing"
// is found as "up 12 percent" and "rose".
var directions = func() [][]string {
	fam := [][]string{
		strings.Fields("increase increasing increased increases rise rising rose risen rises grow growing grew grown grows growth up higher gain gained climb climbed raise raised raises expand expanded upward"),
		strings.Fields("decrease decreasing decreased decreases fall falling fell fallen falls decline declined declining declines drop dropped drops down lower lowered lowers shrink shrank reduce reduced downward"),
		strings.Fields("flat stable unchanged steady maintained maintain constant same"),
	}
	out := make([][]string, len(fam))
	for i, f := range fam {
		for _, w := range f {
			out[i] = append(out[i], nlp.Stem(w))
		}
		out[i] = nlp.Uniq(out[i])
	}
	return out
}()

// dashesToSpaces splits enum values and passages at "-" and "_" ("series-b", "on_premise").
var dashesToSpaces = strings.NewReplacer("-", " ", "_", " ")

// valueTerms are the alternatives that evidence an enum value, each a phrase of word stems: the
// value's own words in order ("Series B"), or, for a one-word value that names a direction, any
// word of that direction.
func valueTerms(v string) [][]string {
	vt := wordStems(enumText(v))
	if len(vt) == 1 {
		for _, fam := range directions {
			if slices.Contains(fam, vt[0]) {
				var alts [][]string
				for _, w := range fam {
					alts = append(alts, []string{w})
				}
				return alts
			}
		}
	}
	if len(vt) == 0 {
		return nil
	}
	return [][]string{vt}
}

// pickEnum chooses the value the field's evidence names: each value scores the best fit of a
// passage that states it (all of its words, or a word of its direction); no evidence, no value.
func (x *extractor) pickEnum(enum []any, field string) (any, bool, []evidence) {
	if v, ok, ev := x.pickEnumIn(x.search(field), enum); ok {
		return v, ok, ev
	}
	return x.onlyEnumStated(enum)
}

// onlyEnumStated is the enum value that the documents read state in one passage, when they state
// no other value at all: a job advert's "Location: Tamsford (hybrid)" gives work_pattern "hybrid"
// though it never says "work pattern". A value stated in several passages ("full") may be said of
// anything, and is not taken so.
func (x *extractor) onlyEnumStated(enum []any) (any, bool, []evidence) {
	found, at := -1, -1
	for i, e := range enum {
		if catchAll[strings.ToLower(fmt.Sprint(e))] {
			continue // "other" is said of anything
		}
		alts := valueTerms(fmt.Sprint(e))
		for u, un := range x.c.units {
			if !x.docs[un.Doc] { // no documents read: nothing to state a value
				continue
			}
			text := enumText(un.Text)
			if !slices.ContainsFunc(alts, func(alt []string) bool { return nlp.StatesPhrase(text, alt) }) {
				continue
			}
			if found == i && coded(fmt.Sprint(e)) {
				continue // "TPLO" in the operation note and again in the bill: still the one value
			}
			if (found >= 0 && found != i) || at >= 0 {
				return nil, false, nil // two values, or one value twice
			}
			found, at = i, u
		}
	}
	if found < 0 {
		return nil, false, nil
	}
	return enum[found], true, []evidence{{U: at, Score: enumFloor}}
}

// enumText is text as enum values are looked for in it: dashes as spaces, and an abbreviation's
// point dropped ("Carc. 2" is one phrase, not the end of a clause).
func enumText(text string) string {
	return reAbbrevPoint.ReplaceAllString(dashesToSpaces.Replace(text), "$1 $2")
}

// reAbbrevPoint is a point after a short word before a figure ("Carc. 2", "No. 5").
var reAbbrevPoint = regexp.MustCompile(`\b(\p{L}{2,5})\.\s+(\d)`)

// catchAll are enum values that stand for whatever the others do not name.
var catchAll = map[string]bool{"other": true, "others": true, "unknown": true, "none": true, "n/a": true, "na": true,
	"not stated": true, "not_stated": true, "mixed": true, "various": true, "unspecified": true}

// coded: an enum value written as a code or a name ("TPLO", "A320", "Full to Full" aside): a capital
// after its first letter or a figure, so no ordinary word that may be said of anything.
func coded(v string) bool {
	for i, r := range v {
		if unicode.IsDigit(r) || i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// pickEnumIn is pickEnum over evidence already searched, so an enum array can test each of its
// values against one search of its field.
func (x *extractor) pickEnumIn(ev []evidence, enum []any) (any, bool, []evidence) {
	best, bestScore := -1, 0.0
	var at evidence
	for i, e := range enum {
		alts := valueTerms(fmt.Sprint(e))
		for _, cand := range ev {
			if cand.Score < enumFloor || cand.Score <= bestScore {
				continue
			}
			text := enumText(x.c.units[cand.U].Text)
			if slices.ContainsFunc(alts, func(alt []string) bool { return nlp.StatesPhrase(text, alt) || nlp.StatesAll(text, alt) }) {
				best, bestScore, at = i, cand.Score, cand
				break
			}
		}
	}
	if best < 0 {
		return nil, false, nil
	}
	return enum[best], true, []evidence{at}
}

func (x *extractor) fillArray(name string, s map[string]any, field string) (any, bool, []evidence) {
	items, _ := s["items"].(map[string]any)
	if items == nil {
		items = map[string]any{"type": "string"}
	}
	n := 5
	if v, ok := s["maxItems"].(float64); ok && int(v) < n {
		n = int(v)
	}
	if v, ok := s["minItems"].(float64); ok && int(v) > n {
		n = int(v)
	}
	found := x.search(field)
	var out []any
	var from []evidence // the units the items came from: the field's basis
	seen := map[string]bool{}
	var at *evidence // the unit the next item comes from, when known
	push := func(v any) {
		key := fmt.Sprint(v)
		if !seen[key] && len(out) < n {
			seen[key] = true
			out = append(out, v)
			if at != nil {
				from = append(from, *at)
			}
		}
	}
	if enum, isEnum := items["enum"].([]any); isEnum && len(enum) > 0 {
		for _, e := range enum {
			if v, ok, ev := x.pickEnumIn(found, []any{e}); ok {
				if len(ev) > 0 {
					at = &ev[0]
				}
				push(v)
			}
		}
		v, ok := arrayOrNull(out, s)
		return v, ok, from
	}
	if labels, rows := x.tableItems(field); x.scope == nil && schemaType(items) == "string" && items["format"] == nil && len(rows) > 0 && !answerField(name) {
		// "core_modules" of a modules table whose column of categories marks some "Core": their
		// names, the rows' labels; all of them, a set the table states exactly, unless the
		// schema limits it.
		if _, ok := s["maxItems"].(float64); !ok {
			n = max(n, len(rows))
		}
		for i, e := range rows {
			at = &e
			push(limit(labels[i], items))
		}
		v, ok := arrayOrNull(out, s)
		return v, ok, from
	}
	if list := x.listUnder(field); x.scope == nil && schemaType(items) == "string" && items["format"] == nil && len(list) > 0 && !answerField(name) {
		// "common_side_effects" under "Common side effects (may affect up to 1 in 10 people):":
		// the list a heading or lead-in naming the field introduces, an item each.
		for _, e := range list {
			at = &e
			push(limit(strings.TrimRight(x.c.units[e.U].Text, ";,."), items))
		}
		v, ok := arrayOrNull(out, s)
		return v, ok, from
	}
	ev := strong(found)
	if x.scope == nil && (answerField(name) || len(ev) == 0) {
		// "key_points", "facts", "findings": the answer's own sentences, one item each.
		if ans := x.answerEvidence(); len(ans) > 0 {
			ev = ans
		} else if answerField(name) {
			ev = x.closestEvidence(3)
		}
	}
	for _, e := range ev {
		at = &e
		sub := &extractor{c: x.c, q: x.q, docs: x.docs, scope: []int{e.U}, basis: engine.Basis{}, subject: x.subject}
		switch schemaType(items) {
		case "object":
			if obj := sub.fillObject(items, field, false); len(obj) > 0 {
				push(obj)
			}
		case "integer", "number":
			if v, ok, _ := sub.fillNumber(name, items, field, schemaType(items) == "integer"); ok {
				push(v)
			}
		case "string":
			if reSource.MatchString(name) {
				push(x.c.docs[x.c.units[e.U].Doc].Path)
			} else if v, ok, _ := sub.fillString(name, items, field); ok {
				push(v)
			}
		case "boolean":
			if v, ok, _ := sub.fillBool(field); ok {
				push(v)
			}
		}
	}
	v, ok := arrayOrNull(out, s)
	return v, ok, from
}

// arrayOrNull: an array without a value is no evidence, so null where the schema allows it (as in
// a run without sources); an empty array only where it does not.
func arrayOrNull(out []any, s map[string]any) (any, bool) {
	if len(out) > 0 {
		return out, true
	}
	if nullable(s) {
		return nil, false
	}
	return []any{}, true
}

// countries are names a "country" field takes.
var countries = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Split(`afghanistan,albania,algeria,andorra,angola,argentina,armenia,australia,austria,azerbaijan,bahamas,bahrain,bangladesh,barbados,belarus,belgium,belize,benin,bhutan,bolivia,bosnia and herzegovina,botswana,brazil,brunei,bulgaria,burkina faso,burundi,cambodia,cameroon,canada,cape verde,chad,chile,china,colombia,comoros,congo,costa rica,croatia,cuba,cyprus,czechia,czech republic,denmark,djibouti,dominica,dominican republic,ecuador,egypt,el salvador,eritrea,estonia,eswatini,ethiopia,fiji,finland,france,gabon,gambia,georgia,germany,ghana,greece,grenada,guatemala,guinea,guyana,haiti,honduras,hungary,iceland,india,indonesia,iran,iraq,ireland,israel,italy,jamaica,japan,jordan,kazakhstan,kenya,kiribati,kosovo,kuwait,kyrgyzstan,laos,latvia,lebanon,lesotho,liberia,libya,liechtenstein,lithuania,luxembourg,madagascar,malawi,malaysia,maldives,mali,malta,mauritania,mauritius,mexico,moldova,monaco,mongolia,montenegro,morocco,mozambique,myanmar,namibia,nepal,netherlands,new zealand,nicaragua,niger,nigeria,north korea,north macedonia,norway,oman,pakistan,palau,panama,papua new guinea,paraguay,peru,philippines,poland,portugal,qatar,romania,russia,rwanda,samoa,san marino,saudi arabia,senegal,serbia,seychelles,sierra leone,singapore,slovakia,slovenia,somalia,south africa,south korea,south sudan,spain,sri lanka,sudan,suriname,sweden,switzerland,syria,taiwan,tajikistan,tanzania,thailand,togo,tonga,tunisia,turkey,turkmenistan,uganda,ukraine,united arab emirates,united kingdom,united states,uruguay,uzbekistan,vanuatu,venezuela,vietnam,yemen,zambia,zimbabwe,england,scotland,wales,usa,uk`, ",") {
		m[c] = true
	}
	return m
}()

var reNumberWords = regexp.MustCompile(`(?i)\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\b`)

// numberLocs are the figures of a text: digits, and numbers written as words ("Fourteen").
func numberLocs(text string) [][]int {
	locs := reNumber.FindAllStringIndex(text, -1)
	locs = append(locs, reNumberWords.FindAllStringIndex(text, -1)...)
	slices.SortFunc(locs, func(a, b []int) int { return a[0] - b[0] })
	return locs
}

var smallNumbers = func() map[string]float64 {
	m := map[string]float64{}
	for i, w := range strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen") {
		m[w] = float64(i)
	}
	for i, w := range strings.Fields("twenty thirty forty fifty sixty seventy eighty ninety") {
		m[w] = float64(20 + 10*i)
	}
	return m
}()

// parseNumber reads "1,140", "48.2" or "eighty-one".
func parseNumber(s string) (float64, bool) {
	if f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64); err == nil {
		return f, true
	}
	tens, unit, _ := strings.Cut(strings.ToLower(s), "-")
	f, ok := smallNumbers[tens]
	if unit != "" {
		u, ok2 := smallNumbers[unit]
		return f + u, ok && ok2
	}
	return f, ok
}

// listUnder is the list items of the section whose heading best states the field's words (at
// least the field floor of their weight), in the documents read; none when no heading does or
// its section holds fewer than two items.
func (x *extractor) listUnder(field string) []evidence {
	present, ok := x.spokenField(field)
	if !ok {
		return nil
	}
	total := 0.0
	for _, t := range present {
		total += x.c.idf(t)
	}
	var best []evidence
	bestCov := fieldFloor
	for _, sec := range x.c.sections {
		if x.docs != nil && !x.docs[sec.Doc] {
			continue
		}
		cov := 0.0
		for _, t := range present {
			if sec.Head[t] {
				cov += x.c.idf(t) / total
			}
		}
		var items []evidence
		for _, u := range sec.Units {
			if x.c.units[u].Kind == extract.UnitItem && x.c.mentions(u, x.subject) {
				items = append(items, evidence{u, cov})
			}
		}
		if cov >= bestCov && len(items) >= 2 && (best == nil || cov > bestCov) {
			best, bestCov = items, cov
		}
	}
	return best
}
