package extractive

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Structured output without a model. Each field of the caller's schema is a small question: its
// name, title and description are searched in the documents the run read for the question, and
// the value is taken from the best passages by the field's type: a number that fits its unit and
// words, an enum value the evidence names, a name from a sentence about the field, a boolean from
// whether that sentence negates it. A field with no evidence is null when the schema allows it;
// otherwise an array is empty and any other field is left out (a required one then fails
// validation, which names it). Every filled field records its basis: the quotes it came from and
// a confidence.

// fieldSep separates a field's name (with its parents') from its title and description in the
// text a field is searched by: the name alone decides when the description is worded unlike the
// sources ("magnitude of the main shock").
const fieldSep = "\x1f"

// fieldFloor is the share of a field's term weight a passage must cover to be evidence for it;
// a passage that names an enum value needs less (the value itself is evidence).
const (
	fieldFloor = 0.5
	enumFloor  = 0.3
)

type extractor struct {
	c       *corpus
	q       query
	answers []int        // units that answer the question (its findings' answers, then their evidence)
	docs    map[int]bool // documents evidence is taken from: those read for the question that name its names (nil: all)
	read    map[int]bool // documents read for the question (nil: all), where a field's words are looked for (spoken)
	scope   []int        // when set, only these units (one array item per unit)
	notes   []string
	basis   engine.Basis // top-level field → its basis
	subject []string     // terms every evidence unit must mention (subQuestion.Subject)
	// best is the answer model's confidence in the question's answer (its findings' best), the
	// confidence of fields taken from the answer itself.
	best float64
	// closest is the confidence in the best passage of any finding, answered or not: 0 when every
	// part was refused by rule (a name or figure no source states), below the threshold when the
	// sources only may answer.
	closest float64
	// demanded: the field being filled is required and may not be null, so the run fails without
	// a value.
	demanded bool
	// relaxed: a demanded field found no evidence by the usual rules and is looked for again
	// through section headings and words of related meaning, a party by its name without its role
	// stated ("Tregarthen Roofing" for roofing_contractor); its basis is then of low confidence.
	relaxed bool
}

func newExtractor(c *corpus, question string, found []finding, sources int) *extractor {
	x := &extractor{c: c, q: analyze(c.respell(question)), basis: engine.Basis{}}
	if len(found) > 0 {
		x.subject = found[0].Sub.Subject // the same for every sub-question of an assignment
	}
	docs := map[int]bool{}
	for _, f := range found {
		for _, d := range f.Read {
			docs[d] = true
		}
		x.answers = append(x.answers, f.Answer...)
		if f.answered() {
			x.best = max(x.best, f.Best)
		}
		x.closest = max(x.closest, f.Best)
	}
	for _, f := range found {
		x.answers = append(x.answers, f.Support...)
	}
	if len(docs) == 0 {
		// The question found no answer of its own: the documents that best match its words and
		// mention its names.
		for _, e := range x.questionEvidence() {
			if d := c.units[e.U].Doc; !docs[d] && len(docs) < sources {
				docs[d] = true
			}
		}
	}
	if len(docs) > 0 {
		x.read = maps.Clone(docs)
	}
	x.keepNaming(docs)
	if len(docs) > 0 {
		x.docs = docs
	}
	return x
}

// keepNaming drops from docs those that do not mention every name of the question, when some
// do: a document read for its ordinary words ("contractor", "firm") is about something else, and
// its names and figures answer no field of this question.
func (x *extractor) keepNaming(docs map[int]bool) {
	if len(x.q.Names) == 0 {
		return
	}
	naming := maps.Clone(docs)
	maps.DeleteFunc(naming, func(d int, _ bool) bool { return !x.c.mentionsAll(d, x.q.Names) })
	if len(naming) > 0 {
		maps.DeleteFunc(docs, func(d int, _ bool) bool { return !naming[d] })
	}
}

// evidence is a unit's fit to a field.
type evidence struct {
	U     int
	Score float64
}

// formatWords say what form a field's value takes (a name, a number, a currency, a qualifier
// such as "minimum"), not what it is about: they are not searched for.
var formatWords = stemSet(strings.Fields(`name names number numbers count amount total percent percentage pct version
	date value id code type kind country city place location located where whether description summary
	eur usd gbp euro euros dollar dollars pound pounds million millions billion billions thousand km
	minimum maximum lowest highest min max average mean annual yearly quarterly monthly daily current
	latest first last possible allowed permitted available supported enabled included`)...)

// fieldTerms are the words a field is searched by: its name, title and description less format
// words.
func fieldTerms(field string) []string {
	var out []string
	not := excludedTerms(field)
	for _, t := range nlp.Uniq(nlp.Terms(field)) {
		if !formatWords[t] && !slices.Contains(not, t) {
			out = append(out, t)
		}
	}
	return out
}

// reExcluded is what a field's words rule out: "Standard (non-concession, non-early-bird) weekend
// pass price" asks for none of the concession or early-bird prices.
var reExcluded = regexp.MustCompile(`(?i)\bnon-(\p{L}+(?:-\p{L}+)*)`)

// excludedTerms are the terms of what a field's words rule out.
func excludedTerms(field string) []string {
	var out []string
	for _, m := range reExcluded.FindAllStringSubmatch(field, -1) {
		out = append(out, nlp.Terms(strings.ReplaceAll(m[1], "-", " "))...)
	}
	return out
}

// search ranks the units of the read documents for a field. Only the field's words that the read
// documents contain are scored (a description says things its own way), but when those are less
// than half of the field's weight the sources do not speak of it and there is no evidence
// ("dividend per share" in a report that never mentions dividends). The question's own words
// break ties.
func (x *extractor) search(field string) []evidence { return x.searchIn(field, x.relaxed, x.relaxed) }

// searchIn is search; with headings, a passage may be evidence through its section heading
// alone (a "Breaking changes" list says the release has breaking changes); with related, through
// a WordNet relative of a word of the field's name ("will close … from Monday 20 April" for
// closure_start_date: a date is evidence itself, as a figure of the measure asked is), or through
// the context of a document's opening (a festival page's "Friday 11 – Sunday 13 September 2026"
// under its title): a page states the dates of what it is about at its top.
func (x *extractor) searchIn(field string, headings, related bool) []evidence {
	present, ok := x.spokenField(field)
	if !ok {
		return nil
	}
	fq := query{Terms: present, Syn: map[string][]string{}}
	for _, t := range present {
		fq.Syn[t] = relatives(t) // "grew" for "growth"
	}
	s := x.c.scorer(fq)
	years := yearsIn(field + " " + x.q.Text)
	qs := x.c.scorer(x.q)
	var out []evidence
	for u, un := range x.c.units {
		if x.docs != nil && !x.docs[un.Doc] {
			continue
		}
		if x.scope != nil && !slices.Contains(x.scope, u) || !x.c.mentions(u, x.subject) {
			continue
		}
		v := s.coverage(u)
		if v <= 0 && x.relaxed && slices.ContainsFunc(present, func(t string) bool { return x.paraStates(s, u, t) }) {
			// Looked for again: a passage whose paragraph states the field ("On 18 June 2025
			// Juniper had a TPLO …" then "In this operation …" for surgery_date).
			v = 0.5 * max(x.paraCoverage(s, u), fieldFloor)
		}
		section := map[string]bool{}
		if headings || headedValue(un) {
			for _, t := range nlp.Terms(un.Section) {
				section[t] = true
			}
		}
		if v <= 0 || !slices.ContainsFunc(present, func(t string) bool {
			return x.c.ownSet[u][t] || section[t] || related && (x.c.opening(u) && x.c.ctx[u][t] || slices.ContainsFunc(fq.Syn[t], func(r string) bool { return x.c.ownSet[u][r] })) ||
				x.relaxed && x.paraStates(s, u, t)
		}) {
			continue
		}
		if x.otherYear(u, years) {
			continue
		}
		out = append(out, evidence{u, v + 0.1*qs.coverage(u) + 0.05*x.statesFormat(u, field)})
	}
	sortEvidence(out)
	return out
}

// paraCoverage is the best coverage of the field's words by a unit of u's paragraph.
func (x *extractor) paraCoverage(s *scorer, u int) float64 {
	best := 0.0
	for _, v := range x.c.paragraph(u) {
		best = max(best, s.coverage(v))
	}
	return best
}

// paraStates: a unit of u's paragraph states term t, a WordNet relative of it or a word of similar
// meaning by word vectors.
func (x *extractor) paraStates(s *scorer, u int, t string) bool {
	rel := relatives(t)
	return slices.ContainsFunc(x.c.paragraph(u), func(v int) bool {
		return x.c.ownSet[v][t] || slices.ContainsFunc(rel, func(r string) bool { return x.c.ownSet[v][r] }) ||
			s.similarIn(v, t) >= minSimilarity // "operation" for "surgery"
	})
}

// headedValue: the unit is a bare value under its heading, as a description list gives one
// ("Recall reference" / "BW-RC-2025-04"): a few words, no sentence, no label of its own; the
// heading says what it is.
func headedValue(un extract.Unit) bool {
	return un.Kind == extract.UnitSentence && un.Prev < 0 && un.Heading != "" && len(strings.Fields(un.Text)) <= 6 &&
		!extract.EndsSentence(un.Text) && !strings.Contains(un.Text, ":")
}

// participles are the irregular participles of verbs WordNet relates to a field's words by their
// base form ("birth" to "bear"). They are not read as their verb everywhere, as nlp's irregular
// forms are: reading "born" as "bear" in every question cost the answer model (BENCHMARKS.md,
// seventeenth pass).
var participles = map[string]string{"bear": "born"}

// relatives are a field word's WordNet relatives, with their irregular participles ("born" for
// "birth", by "bear").
func relatives(t string) []string {
	out := nlp.Related(t)
	for _, r := range out {
		if p, ok := participles[r]; ok {
			out = append(slices.Clip(out), p)
		}
	}
	return out
}

// opening: unit u is one of the first three of its document.
func (c *corpus) opening(u int) bool {
	return u < 3 || c.units[u-3].Doc != c.units[u].Doc
}

// statesFormat is how many of the field's format words ("monthly" of monthly_rent_gbp) unit u
// states: they are not searched for, but of two passages on the rent, the one that says monthly
// is the closer.
func (x *extractor) statesFormat(u int, field string) float64 {
	n := 0.0
	for _, t := range nlp.Uniq(nlp.Terms(field)) {
		if formatWords[t] && x.c.ownSet[u][t] {
			n++
		}
	}
	return n
}

// yearsIn are the figures of s that read as years.
func yearsIn(s string) []string {
	var out []string
	for _, f := range figures(s) {
		if extract.IsYear(f) {
			out = append(out, f)
		}
	}
	return out
}

// otherYear: the field or question asks about years and unit u states only others: "a margin of
// around 9 per cent in 2025" is no evidence for "the margin for 2024". (Its context is not asked: a
// report's title names its year above every sentence.) A year it compares with is not the year
// it states a figure for: "rose to £4.86 million, from £4.46 million in the third quarter of
// 2024" is about the report's own quarter.
func (x *extractor) otherYear(u int, asked []string) bool {
	stated := yearsIn(reComparedWith.ReplaceAllString(x.c.units[u].Text, ""))
	return len(asked) > 0 && len(stated) > 0 && !slices.ContainsFunc(stated, func(y string) bool { return slices.Contains(asked, y) })
}

// reComparedWith is a figure's comparison with another year: "from £4.46 million in 2024",
// "against NOK 2.40 for 2023", "compared with 2022", "a year earlier".
var reComparedWith = regexp.MustCompile(`(?i)\b(?:from|against|compared (?:with|to)|than|versus|vs\.?)\b(?:[^.;:]|\.\d){0,60}?\b(?:19|20)\d\d\b`)

func sortEvidence(out []evidence) {
	slices.SortStableFunc(out, func(a, b evidence) int { return cmp.Or(cmp.Compare(b.Score, a.Score), a.U-b.U) })
}

// spokenField is spoken for a field's words, or, when the sources do not speak of them all, for
// its name's alone (the name decides when a description is worded unlike the sources).
// Either way the sources must use a word of the name: a description alone ("names of the
// Tidewater maintainers") does not make a field about maintainers spoken of.
func (x *extractor) spokenField(field string) ([]string, bool) {
	name, _, _ := strings.Cut(field, fieldSep)
	if len(fieldTerms(field)) == 0 {
		// Nothing but words of form ("current_version"): they are what the field is about.
		present, share := x.spoken(nlp.Uniq(nlp.Terms(name)))
		return present, share >= 0.5
	}
	named, share := x.spoken(fieldTerms(name))
	if len(named) == 0 && len(fieldTerms(name)) > 0 {
		return nil, false
	}
	if present, all := x.spoken(fieldTerms(field)); all >= 0.5 {
		return present, true
	}
	return named, share >= 0.5
}

// spoken returns the terms the read documents contain (themselves or by a WordNet relative), and
// the share of the terms' weight they carry (at least half: the documents speak of the field).
//
// A word no source uses weighs as much as the rarest word that one does, not more: its idf (the
// largest there is) says nothing of how much it matters to the field, and a qualifier the sources
// word otherwise ("fixed" of "fixed firmware version") would outweigh the rest.
func (x *extractor) spoken(all []string) ([]string, float64) {
	var present []string
	have, rarest, absent := 0.0, 0.0, 0
	for _, t := range all {
		related := relatives(t)
		found := false
		for d := range x.c.docs {
			if (x.read == nil || x.read[d]) && (x.c.docTerms[d][t] || slices.ContainsFunc(related, func(r string) bool { return x.c.docTerms[d][r] })) {
				found = true
				break
			}
		}
		if !found {
			absent++
			continue
		}
		w := x.c.idf(t)
		present = append(present, t)
		have += w
		rarest = max(rarest, w)
	}
	if len(present) == 0 {
		return nil, 0
	}
	return present, have / (have + float64(absent)*rarest)
}

// namesField: unit u, with its context, states a word of the field's name, itself or by a
// WordNet relative ("costs" for "price", "grew" for "growth"); a description only helps find it:
// "The pilot cost 61 million kronor" is evidence for "cost_per_pupil", "Net debt was £2.3
// million" none for "dividend_per_share_gbp" whatever its description says.
func (x *extractor) namesField(u int, field string) bool {
	name, _, _ := strings.Cut(field, fieldSep)
	terms := fieldTerms(name)
	return len(terms) == 0 || slices.ContainsFunc(terms, func(t string) bool {
		return x.c.ownSet[u][t] || x.c.ctx[u][t] || slices.ContainsFunc(relatives(t), func(r string) bool { return x.c.ownSet[u][r] })
	})
}

// reTextField: fields that ask for the answer itself, in prose, whatever their description.
var reTextField = regexp.MustCompile(`(?i)^(?:summary|answer|answers|result|results|response|description|overview|abstract|conclusion|conclusions|explanation|reason|reasons|cause|causes|rationale|finding|findings|fact|facts|statement|statements|text|notes?|details?|highlights?|key points?|main points?|points|takeaways?|key findings?|key facts?|bullets?|brief|briefing)$`)

// answerField: the field asks for the answer itself (its name, with or without its description).
func answerField(name string) bool {
	return reTextField.MatchString(strings.TrimSpace(nlp.HumanName(name)))
}

// answerEvidence is the question's own answer as evidence: the units its findings answered with,
// then those they quoted as support, at the answer's confidence; nothing when the sources do not
// answer the question.
func (x *extractor) answerEvidence() []evidence {
	var out []evidence
	if x.scope != nil { // an array item: its own passage
		for _, u := range x.scope {
			out = append(out, evidence{u, 1})
		}
		return out
	}
	for _, u := range x.answers {
		if !slices.ContainsFunc(out, func(e evidence) bool { return e.U == u }) { // "Stated above"
			out = append(out, evidence{u, x.best})
		}
	}
	return out
}

// closestEvidence is what an answer field the caller demands (required, not nullable) takes when
// the report does not answer, rather than fail the run: the passages most likely to answer the
// question, as the answer model ranks them, each at its own (low) confidence, which the field's
// basis reports. Nothing when the question was refused by rule (it names something no source
// states) or the field may be null or left out.
func (x *extractor) closestEvidence(n int) []evidence {
	if !x.demanded || x.closest <= 0 || x.scope != nil {
		return nil
	}
	ev := x.questionEvidence()
	return ev[:min(len(ev), n)]
}

// questionEvidence ranks the read documents' units by the question itself, as the answer model
// scores them (Score: the calibrated probability that the unit answers it).
func (x *extractor) questionEvidence() []evidence {
	s := x.c.scorer(x.q)
	var out []evidence
	allowed := func(u int) bool {
		un := x.c.units[u]
		return (x.docs == nil || x.docs[un.Doc]) && x.c.mentions(u, x.subject)
	}
	for _, r := range s.candidates(defaultModel(), 40, allowed) {
		out = append(out, evidence{r.U, r.Score})
	}
	return out
}

// questionDocs are the documents of the question's best passages, best first.
func (x *extractor) questionDocs() []int {
	var out []int
	for _, e := range x.questionEvidence() {
		if d := x.c.units[e.U].Doc; !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// strong keeps the evidence at or above the field floor (scores carry a 0.1 question bonus).
func strong(ev []evidence) []evidence {
	var out []evidence
	for _, e := range ev {
		if e.Score >= fieldFloor {
			out = append(out, e)
		}
	}
	return out
}

func nullable(s map[string]any) bool {
	if s["nullable"] == true {
		return true
	}
	if ts, ok := s["type"].([]any); ok && slices.Contains(ts, any("null")) {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] == "null" {
					return true
				}
			}
		}
	}
	return false
}

// fillObject fills an object schema's properties in name order. top records each field's basis.
func (x *extractor) fillObject(schema map[string]any, context string, top bool) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	required := engine.RequiredFields(schema)
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			ps = map[string]any{}
		}
		field := x.c.unjoin(strings.TrimSpace(context+" "+nlp.HumanName(name))) + fieldSep + str(ps["title"]) + " " + str(ps["description"])
		x.demanded = top && required[name] && !nullable(ps)
		v, ok, from := x.fillValue(name, ps, field)
		weak := false
		if !ok && x.demanded {
			// The schema says the value is there: rather than fail the run, look again more widely.
			x.relaxed = true
			v, ok, from = x.fillValue(name, ps, field)
			x.relaxed = false
			if weak = ok; weak {
				x.notes = append(x.notes, fmt.Sprintf("%q from weaker evidence (headings, related words): low confidence", name))
			}
		}
		switch {
		case ok:
			out[name] = v
			if top {
				x.basis[name] = x.basisOf(from)
				if weak {
					b := x.basis[name]
					b.Confidence = engine.ConfidenceLow
					x.basis[name] = b
				}
			}
		case nullable(ps):
			out[name] = nil
			if top {
				x.basis[name] = engine.FieldBasis{Citations: []engine.BasisCitation{}, Confidence: engine.ConfidenceLow}
			}
			x.notes = append(x.notes, fmt.Sprintf("no evidence for %q: null", name))
		case required[name]:
			x.notes = append(x.notes, fmt.Sprintf("no evidence for required field %q", name))
		}
	}
	return out
}

// confidenceValue fills a field that asks how sure the answer is ("confidence": high, medium or
// low; or a number from 0 to 1) from the answer model's calibrated confidence in the question's
// answer. An unanswered question's confidence is low (or 0).
func (x *extractor) confidenceValue(name string, s map[string]any) (any, bool) {
	if h := nlp.HumanName(name); h != "confidence" && h != "certainty" && h != "confidence level" || x.scope != nil {
		return nil, false
	}
	level := x.confidenceLevel(x.best)
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if v, ok := e.(string); ok && strings.EqualFold(v, level) {
				return v, true
			}
		}
		return nil, false
	}
	switch schemaType(s) {
	case "number":
		if hi, ok := s["maximum"].(float64); ok && hi <= 1 {
			return math.Round(x.best*100) / 100, true
		}
	case "string":
		return level, true
	}
	return nil, false
}

// confidenceLevel names a calibrated probability: high at or above midway between the abstention
// threshold and certainty, medium at or above the threshold, low below.
func (x *extractor) confidenceLevel(p float64) string {
	t := defaultModel().Threshold
	switch {
	case p >= (1+t)/2:
		return engine.ConfidenceHigh
	case p >= t:
		return engine.ConfidenceMedium
	}
	return engine.ConfidenceLow
}

// answerText joins the evidence units' sentences: the answer as the report states it.
func (x *extractor) answerText(ev []evidence) string {
	parts := make([]string, 0, len(ev))
	for _, e := range ev {
		if un := x.c.units[e.U]; un.Kind == extract.UnitRow {
			parts = append(parts, x.c.scorer(x.q).rowSentence(e.U))
		} else {
			parts = append(parts, un.Text)
		}
	}
	return strings.Join(parts, " ")
}

// basisOf cites the units a value came from. Its confidence is the answer model's calibrated
// probability where the value came from the answer (high at or above midway between the
// abstention threshold and certainty, medium above the threshold, low below); for a value found by
// the field's own words, high when the best passage covers most of the field, medium at the floor.
func (x *extractor) basisOf(from []evidence) engine.FieldBasis {
	b := engine.FieldBasis{Citations: []engine.BasisCitation{}, Confidence: engine.ConfidenceLow}
	t := defaultModel().Threshold
	for i, e := range from {
		if i == 0 {
			switch {
			case e.Score >= max(0.8, (1+t)/2):
				b.Confidence = "high"
			case e.Score >= min(fieldFloor, t):
				b.Confidence = "medium"
			}
		}
		u := x.c.units[e.U]
		b.Citations = append(b.Citations, engine.BasisCitation{Source: x.c.docs[u.Doc].Path, Quote: u.Text})
	}
	return b
}

// fillValue fills one field; from is the evidence the value came from.
func (x *extractor) fillValue(name string, s map[string]any, field string) (any, bool, []evidence) {
	if c, ok := s["const"]; ok {
		return c, true, nil
	}
	if v, ok := x.confidenceValue(name, s); ok {
		return v, true, x.answerEvidence()
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return x.pickEnum(enum, field)
	}
	switch schemaType(s) {
	case "string":
		return x.fillString(name, s, field)
	case "integer", "number":
		return x.fillNumber(name, s, field, schemaType(s) == "integer")
	case "boolean":
		return x.fillBool(field)
	case "array":
		return x.fillArray(name, s, field)
	case "object":
		obj := x.fillObject(s, field, false)
		return obj, len(obj) > 0, nil
	case "null":
		return nil, true, nil
	}
	return nil, false, nil
}
