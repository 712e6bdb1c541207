package engine

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	docs    map[int]bool // documents read for the question (nil: all)
	scope   []int        // when set, only these units (one array item per unit)
	notes   []string
	basis   Basis    // top-level field → its basis
	subject []string // terms every evidence unit must mention (subQuestion.Subject)
	// best is the answer model's confidence in the question's answer (its findings' best), the
	// confidence of fields taken from the answer itself.
	best float64
}

func newExtractor(c *corpus, question string, found []finding, sources int) *extractor {
	x := &extractor{c: c, q: analyze(question), basis: Basis{}}
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
		x.docs = docs
	}
	return x
}

// evidence is a unit's fit to a field.
type evidence struct {
	U     int
	Score float64
}

// formatWords say what form a field's value takes (a name, a number, a currency, a qualifier
// such as "minimum"), not what it is about: they are not searched for.
var formatWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`name names number numbers count amount total percent percentage pct version
		date value id code type kind country city place location located where whether description summary
		eur usd gbp euro euros dollar dollars pound pounds million millions billion billions thousand km
		minimum maximum lowest highest min max average mean annual yearly quarterly monthly daily current
		latest first last`) {
		m[stem(w)] = true
	}
	return m
}()

// fieldTerms are the words a field is searched by: its name, title and description less format
// words.
func fieldTerms(field string) []string {
	var out []string
	for _, t := range uniq(terms(field)) {
		if !formatWords[t] {
			out = append(out, t)
		}
	}
	return out
}

// search ranks the units of the read documents for a field. Only the field's words that the read
// documents contain are scored (a description says things its own way), but when those are less
// than half of the field's weight the sources do not speak of it and there is no evidence
// ("dividend per share" in a report that never mentions dividends). The question's own words
// break ties.
func (x *extractor) search(field string) []evidence { return x.searchIn(field, false) }

// searchIn is search; with headings, a passage may be evidence through its section heading
// alone (a "Breaking changes" list says the release has breaking changes).
func (x *extractor) searchIn(field string, headings bool) []evidence {
	present, ok := x.spoken(fieldTerms(field))
	if !ok {
		if name, _, found := strings.Cut(field, fieldSep); found {
			present, ok = x.spoken(fieldTerms(name))
		}
	}
	if !ok {
		return nil
	}
	fq := query{Terms: present}
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
		section := map[string]bool{}
		if headings {
			for _, t := range terms(un.Section) {
				section[t] = true
			}
		}
		if v <= 0 || !slices.ContainsFunc(present, func(t string) bool { return x.c.ownSet[u][t] || section[t] }) {
			continue
		}
		if x.otherYear(u, years) {
			v /= 2
		}
		out = append(out, evidence{u, v + 0.1*qs.coverage(u)})
	}
	sortEvidence(out)
	return out
}

// yearsIn are the figures of s that read as years.
func yearsIn(s string) []string {
	var out []string
	for _, f := range figures(s) {
		if n, err := strconv.Atoi(f); err == nil && n >= 1000 && n <= 2200 {
			out = append(out, f)
		}
	}
	return out
}

// otherYear: the field or question asks about years and unit u is about another one (it states a
// year, and neither it nor its context states one asked for): "a margin of around 9 per cent in
// 2025" is no evidence for "the margin for 2024".
func (x *extractor) otherYear(u int, asked []string) bool {
	if len(asked) == 0 || slices.ContainsFunc(asked, func(y string) bool { return x.c.nums[u][y] }) {
		return false
	}
	return len(yearsIn(x.c.units[u].Text)) > 0
}

func sortEvidence(out []evidence) {
	slices.SortStableFunc(out, func(a, b evidence) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.U - b.U
	})
}

// spoken returns the terms the read documents contain, and whether they carry at least half of
// the terms' weight (the documents speak of the field).
func (x *extractor) spoken(all []string) ([]string, bool) {
	var present []string
	total, have := 0.0, 0.0
	for _, t := range all {
		w := x.c.idf(t)
		total += w
		for d := range x.c.docs {
			if (x.docs == nil || x.docs[d]) && x.c.docTerms[d][t] {
				present = append(present, t)
				have += w
				break
			}
		}
	}
	return present, len(present) > 0 && have >= 0.5*total
}

// reTextField: fields that ask for the answer itself, in prose, whatever their description.
var reTextField = regexp.MustCompile(`(?i)^(?:summary|answer|answers|result|results|response|description|overview|abstract|conclusion|conclusions|explanation|reason|reasons|rationale|finding|findings|fact|facts|statement|statements|text|notes?|details?|highlights?|key points?|main points?|points|takeaways?|key findings?|key facts?|bullets?|brief|briefing)$`)

// answerField: the field asks for the answer itself (its name, with or without its description).
func answerField(name string) bool {
	return reTextField.MatchString(strings.TrimSpace(humanName(name)))
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
		out = append(out, evidence{u, x.best})
	}
	return out
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
	required := requiredFields(schema)
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			ps = map[string]any{}
		}
		field := strings.TrimSpace(context+" "+humanName(name)) + fieldSep + str(ps["title"]) + " " + str(ps["description"])
		v, ok, from := x.fillValue(name, ps, field)
		switch {
		case ok:
			out[name] = v
			if top {
				x.basis[name] = x.basisOf(from)
			}
		case nullable(ps):
			out[name] = nil
			if top {
				x.basis[name] = FieldBasis{Citations: []BasisCitation{}, Confidence: ConfidenceLow}
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
	if h := humanName(name); h != "confidence" && h != "certainty" && h != "confidence level" || x.scope != nil {
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
		return ConfidenceHigh
	case p >= t:
		return ConfidenceMedium
	}
	return ConfidenceLow
}

// answerText joins the evidence units' sentences: the answer as the report states it.
func (x *extractor) answerText(ev []evidence) string {
	parts := make([]string, 0, len(ev))
	for _, e := range ev {
		if un := x.c.units[e.U]; un.Kind == unitRow {
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
func (x *extractor) basisOf(from []evidence) FieldBasis {
	b := FieldBasis{Citations: []BasisCitation{}, Confidence: ConfidenceLow}
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
		b.Citations = append(b.Citations, BasisCitation{Source: x.c.docs[u.Doc].Path, Quote: u.Text})
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

var (
	reVersion     = regexp.MustCompile(`\b\d+(?:\.\d+)+\b`)
	reMinimumCue  = regexp.MustCompile(`(?i)^\s*(?:or (?:later|newer|above|higher|more|greater)|\+)`)
	reMinimumWord = regexp.MustCompile(`(?i)\b(?:minimum|lowest|least|min|earliest|oldest)\b`)
	reNameField   = regexp.MustCompile(`(?i)\b(?:name|company|organi[sz]ation|firm|business|startup|vendor|manufacturer|brand|maker|operator|supplier|person|ceo|executive|chief|director|founder|author|chair|president|mayor|manager|leader|spokesperson|city|country|place|location|region|town|headquarters|builder|shipyard|owner|customer|investor|lender|developer|buyer|seller|partner|sponsor|publisher|contractor|client|agency)\b`)
	// reSubjectField: the organisation a question is about ("company"); reRoleField: another party
	// to it ("lead investor", "developer"), so not the question's own subject.
	reSubjectField = regexp.MustCompile(`(?i)^\s*(?:\w+\s+)?(?:company|organi[sz]ation|firm|business|startup|name)\b`)
	reRoleField    = regexp.MustCompile(`(?i)\b(?:investor|lender|developer|buyer|seller|partner|sponsor|publisher|contractor|client|customer|supplier|vendor|builder|shipyard|maker|manufacturer|operator|agency|owner)s?\b`)
	rePersonField  = regexp.MustCompile(`(?i)\b(?:person|ceo|executive|chief|director|founder|author|chair|president|mayor|manager|leader|spokesperson|who)\b`)
	reCountry      = regexp.MustCompile(`(?i)\bcountry|nation\b`)
	reNameSpan     = regexp.MustCompile(`\p{Lu}[\p{L}\p{N}'’&.-]*(?:\s+(?:of|de|van|von|der|du|la|and|&)?\s*\p{Lu}[\p{L}\p{N}'’&.-]*)*`)
)

func (x *extractor) fillString(name string, s map[string]any, field string) (any, bool, []evidence) {
	var re *regexp.Regexp
	switch str(s["format"]) {
	case "date":
		for _, e := range x.search(field) {
			if d, ok := findDate(x.c.units[e.U].Text); ok {
				return d, true, []evidence{e}
			}
		}
		return nil, false, nil
	case "date-time":
		re = reDateTime
	case "email":
		re = reEmail
	case "uri", "url", "iri":
		re = reURL
	}
	ev := x.search(field)
	if re != nil {
		for _, e := range ev {
			if m := re.FindString(x.c.units[e.U].Text); m != "" {
				return m, true, []evidence{e}
			}
		}
		return nil, false, nil
	}
	if answerField(name) {
		// "answer", "summary", "explanation": the report's answer, in its own sentences. When the
		// sources do not answer, neither does the field (null where the schema allows it).
		if ev := x.answerEvidence(); len(ev) > 0 {
			return limit(x.answerText(ev), s), true, ev
		}
		return nil, false, nil
	}
	ev = strong(ev)
	isName := reNameField.MatchString(humanName(name)) || reNameField.MatchString(str(s["description"]))
	if len(ev) == 0 && isName && !rePersonField.MatchString(humanName(name)+" "+str(s["description"])) && len(x.q.Names) > 0 {
		// "name of the company" in sources that never say "company": the organisation the
		// question is about, as the sources spell it.
		if v, e, ok := x.pickName(x.questionEvidence(), name, s, uniq(terms(field)), true); ok {
			return limit(v, s), true, []evidence{e}
		}
	}
	if len(ev) == 0 {
		return nil, false, nil
	}
	if reSource.MatchString(name) {
		return x.c.docs[x.c.units[ev[0].U].Doc].Path, true, ev[:1]
	}
	ft := uniq(terms(field))
	if strings.Contains(strings.ToLower(name), "version") {
		if v, e, ok := x.pickVersion(ev, field); ok {
			return v, true, []evidence{e}
		}
	}
	if isName {
		if v, e, ok := x.pickName(ev, name, s, ft, false); ok {
			return limit(v, s), true, []evidence{e}
		}
		return nil, false, nil
	}
	return limit(x.c.units[ev[0].U].Text, s), true, ev[:1]
}

// limit cuts a string to the schema's maxLength.
func limit(v string, s map[string]any) string {
	if n, ok := s["maxLength"].(float64); ok && n >= 1 && len([]rune(v)) > int(n) {
		v = truncate(v, int(n))
		if len([]rune(v)) > int(n) {
			v = string([]rune(v)[:int(n)])
		}
	}
	return v
}

// pickVersion takes a version number from the field's best passages: the one nearest the field's
// words, preferring "X or later" for a minimum.
func (x *extractor) pickVersion(ev []evidence, field string) (string, evidence, bool) {
	minimum := reMinimumWord.MatchString(field)
	best, bestScore, at := "", math.Inf(-1), evidence{}
	for rank, e := range ev[:min(len(ev), 5)] {
		text := x.c.units[e.U].Text
		for _, loc := range reVersion.FindAllStringIndex(text, -1) {
			score := e.Score*4 - float64(rank)*0.01 - float64(loc[0])*0.0001
			if minimum && reMinimumCue.MatchString(text[loc[1]:]) {
				score += 2
			}
			if score > bestScore {
				best, bestScore, at = text[loc[0]:loc[1]], score, e
			}
		}
	}
	return best, at, best != ""
}

// pickName takes a proper name from the field's best passages: not one of the field's own words
// ("Chief Executive Officer"), a person's two-word name for a person field, a country for a
// country field, a name the question mentions for an organisation field, the nearest to the
// field's words otherwise.
func (x *extractor) pickName(ev []evidence, name string, s map[string]any, field []string, mustName bool) (string, evidence, bool) {
	desc := humanName(name) + " " + str(s["description"])
	person := rePersonField.MatchString(desc)
	country := reCountry.MatchString(desc)
	fieldSet := map[string]bool{}
	for _, t := range field {
		fieldSet[t] = true
	}
	qnames := map[string]bool{}
	for _, n := range x.q.Names {
		qnames[n] = true
	}
	subject := !person && !country && reSubjectField.MatchString(humanName(name)) && !reRoleField.MatchString(desc)
	role := !person && !country && reRoleField.MatchString(desc)
	cands := ev[:min(len(ev), 5)]
	if subject {
		// The organisation a question is about is named where the question's words are.
		qe := x.questionEvidence()
		cands = append(slices.Clone(cands), qe[:min(len(qe), 3)]...)
	}
	total := 0.0
	for _, t := range field {
		total += x.c.idf(t)
	}
	best, bestScore, at := "", math.Inf(-1), evidence{}
	for rank, e := range cands {
		text := x.c.units[e.U].Text
		// A name answers a field in the sentence that itself says what the field is about.
		own := 0.0
		for _, t := range field {
			if x.c.ownSet[e.U][t] {
				own += x.c.idf(t)
			}
		}
		if total > 0 {
			own /= total
		}
		near := fieldPositions(text, fieldSet)
		for _, loc := range reNameSpan.FindAllStringIndex(text, -1) {
			for _, span := range splitSpan(text[loc[0]:loc[1]], fieldSet) {
				st := terms(span)
				if len(st) == 0 || (country && !countries[strings.ToLower(span)]) {
					continue
				}
				isQ := slices.ContainsFunc(st, func(t string) bool { return qnames[t] })
				if mustName && !isQ {
					continue
				}
				score := own*3 + e.Score - float64(rank)*0.5
				switch {
				case person && len(strings.Fields(span)) >= 2 && !isQ:
					score += 3
				case person:
					score -= 3
				case subject && isQ:
					score += 3
				case role && isQ:
					score -= 3 // the question's own subject is not its investor or developer
				}
				// A name next to the field's word ("led by Harbor Peak Ventures", "the developer,
				// Brightfield Energy") is the one the field asks for.
				if pos := strings.Index(text[loc[0]:], span) + loc[0]; nearAny(text, pos, pos+len(span), near) {
					score += 2
				}
				if loc[0] == 0 && len(strings.Fields(span)) == 1 && !x.capitalisedElsewhere(span) {
					score -= 5 // a sentence's first word, not a name
				}
				if score > bestScore {
					best, bestScore, at = span, score, e
				}
			}
		}
	}
	return best, at, best != ""
}

// fieldPositions are the byte spans of the words of text whose stems are field terms.
func fieldPositions(text string, field map[string]bool) [][2]int {
	var out [][2]int
	for _, loc := range reWordToken.FindAllStringIndex(text, -1) {
		for _, t := range wordStems(text[loc[0]:loc[1]]) {
			if field[t] {
				out = append(out, [2]int{loc[0], loc[1]})
			}
		}
	}
	return out
}

// nearAny: the span [a, b) is within three words of one of the positions.
func nearAny(text string, a, b int, pos [][2]int) bool {
	for _, p := range pos {
		var gap string
		switch {
		case p[1] <= a:
			gap = text[p[1]:a]
		case p[0] >= b:
			gap = text[b:p[0]]
		default:
			continue
		}
		if len(strings.Fields(gap)) <= 3 {
			return true
		}
	}
	return false
}

// splitSpan cuts a capitalised run at words of the field ("Chief Executive Officer of Northwind
// Robotics" → "Northwind Robotics") and trims possessives and connectors at its ends.
func splitSpan(span string, field map[string]bool) []string {
	var out, cur []string
	flush := func() {
		for len(cur) > 0 && connector(cur[len(cur)-1]) {
			cur = cur[:len(cur)-1]
		}
		for len(cur) > 0 && connector(cur[0]) {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			out = append(out, strings.TrimRight(strings.Join(cur, " "), ".,'’"))
		}
		cur = nil
	}
	for _, w := range strings.Fields(span) {
		if ts := terms(w); len(ts) == 1 && field[ts[0]] {
			flush()
			continue
		}
		cur = append(cur, strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s"))
	}
	flush()
	return out
}

func connector(w string) bool {
	switch strings.ToLower(w) {
	case "of", "de", "van", "von", "der", "du", "la", "and", "&":
		return true
	}
	return false
}

// capitalisedElsewhere: the word appears capitalised inside a sentence somewhere in the sources.
func (x *extractor) capitalisedElsewhere(w string) bool {
	for _, u := range x.c.units {
		if i := strings.Index(u.Text, w); i > 0 {
			return true
		}
	}
	return false
}
