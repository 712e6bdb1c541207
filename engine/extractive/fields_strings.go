package extractive

import (
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// String fields: a version, a name (of a person, an organisation or a place), or a span of the
// evidence that matches the field's format.

var (
	reVersion     = regexp.MustCompile(`\b\d+(?:\.\d+)+\b`)
	reMinimumCue  = regexp.MustCompile(`(?i)^\s*(?:or (?:later|newer|above|higher|more|greater)|\+)`)
	reMinimumWord = regexp.MustCompile(`(?i)\b(?:minimum|lowest|least|min|earliest|oldest)\b`)
	reNameField   = regexp.MustCompile(`(?i)\b(?:name|company|organi[sz]ation|firm|business|startup|vendor|manufacturer|brand|maker|operator|supplier|person|ceo|executive|chief|director|founder|author|chair|president|mayor|manager|leader|spokesperson|city|country|place|location|region|town|headquarters|builder|shipyard|owner|customer|investor|lender|developer|buyer|seller|partner|sponsor|publisher|contractor|client|agency)\b`)
	// reSubjectField: the organisation a question is about ("company"); reRoleField: another party
	// to it ("lead investor", "developer"), so not the question's own subject.
	reSubjectField = regexp.MustCompile(`(?i)^\s*(?:\w+\s+)?(?:company|organi[sz]ation|firm|business|startup|name)\b`)
	reRoleField    = regexp.MustCompile(`(?i)\b(?:investor|lender|developer|buyer|seller|partner|sponsor|publisher|contractor|client|customer|supplier|vendor|builder|shipyard|maker|manufacturer|operator|agency|owner)s?\b`)
	// reRoleNoun: a party named by its role, not the thing the question is about.
	reRoleNoun    = regexp.MustCompile(`(?i)\b(?:ceo|executive|director|founder|author|chair|chairman|chairwoman|chairperson|president|mayor|manager|leader|spokesperson|builder|owner|investor|lender|developer|buyer|seller|partner|sponsor|publisher|contractor|supplier|vendor|manufacturer|operator|architect|engineer|designer|commander|editor|supervisor)\b`)
	rePersonField = regexp.MustCompile(`(?i)\b(?:person|ceo|executive|chief|director|founder|author|chair|president|mayor|manager|leader|spokesperson|who)\b`)
	reCountry     = regexp.MustCompile(`(?i)\bcountry|nation\b`)
	reNameSpan    = regexp.MustCompile(`\p{Lu}[\p{L}\p{N}'’&.-]*(?:\s+(?:of|de|van|von|der|du|la|and|&)?\s*\p{Lu}[\p{L}\p{N}'’&.-]*)*`)
)

func (x *extractor) fillString(name string, s map[string]any, field string) (any, bool, []evidence) {
	var re *regexp.Regexp
	switch str(s["format"]) {
	case "date":
		return x.fillDate(field)
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
		if ev := x.closestEvidence(1); len(ev) > 0 {
			return limit(x.answerText(ev), s), true, ev
		}
		return nil, false, nil
	}
	if v, e, ok := x.titleField(name); ok {
		return limit(v, s), true, []evidence{e}
	}
	if e, ok := x.labelled(ev, name); ok {
		// "**Recall reference:** BW-RC-2025-04" for recall_reference, "**Renter:** Imogen Farrant"
		// for renter_name: the value its label names, however weakly the rest of the field matches.
		return limit(extract.FieldValue(x.c.units[e.U].Text), s), true, []evidence{e}
	}
	ev = strong(ev)
	isName := reNameField.MatchString(nlp.HumanName(name)) || reNameField.MatchString(str(s["description"]))
	role := reRoleNoun.FindString(nlp.HumanName(name))
	if isName && role != "" && !x.relaxed {
		// "contractor_name", "chair": a party named by its role. A passage that does not state
		// the role ("contractor") names someone else: the field is not given.
		t := nlp.Stem(strings.ToLower(role))
		ev = slices.DeleteFunc(ev, func(e evidence) bool { return !x.c.ownSet[e.U][t] && !x.c.ctx[e.U][t] })
	}
	if len(ev) == 0 && isName && role == "" && !rePersonField.MatchString(nlp.HumanName(name)+" "+str(s["description"])) && len(x.q.Names) > 0 {
		// "name of the company" in sources that never say "company": the organisation the
		// question is about, as the sources spell it.
		if v, e, ok := x.pickName(x.questionEvidence(), name, s, nlp.Uniq(nlp.Terms(field)), true); ok {
			return limit(v, s), true, []evidence{e}
		}
	}
	if len(ev) == 0 {
		return nil, false, nil
	}
	if reSource.MatchString(name) {
		return x.c.docs[x.c.units[ev[0].U].Doc].Path, true, ev[:1]
	}
	ft := nlp.Uniq(nlp.Terms(field))
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
	if un := x.c.units[ev[0].U]; un.Kind == extract.UnitField && extract.FieldValue(un.Text) != "" &&
		slices.ContainsFunc(nlp.Terms(extract.FieldLabel(un.Text)), func(t string) bool { return slices.Contains(ft, t) }) {
		// A field line that states a word of the field leads: its value, without its label.
		return limit(extract.FieldValue(un.Text), s), true, ev[:1]
	}
	return limit(x.c.units[ev[0].U].Text, s), true, ev[:1]
}

// titleField: a field asking for a title ("exhibition_title", "title") takes the title of the
// document the question is about, from a passage that states it whole (a web page's <title>, a
// paper's title line): of the documents of the question's best passages, the first with one.
func (x *extractor) titleField(name string) (string, evidence, bool) {
	words := strings.Fields(nlp.HumanName(name))
	if len(words) == 0 || len(words) > 2 || !strings.EqualFold(words[len(words)-1], "title") {
		return "", evidence{}, false
	}
	for _, d := range x.questionDocs() {
		title := x.c.headings[d]
		if len(strings.Fields(title)) < 2 {
			continue
		}
		for u, un := range x.c.units {
			if un.Doc == d && strings.Contains(un.Text, title) {
				return title, evidence{U: u, Score: fieldFloor}, true
			}
		}
	}
	return "", evidence{}, false
}

// labelled is the first of the best evidence (labelReach) that is a field line whose label the
// field's name states every word of ("Renter" of renter_name), with a value.
func (x *extractor) labelled(ev []evidence, name string) (evidence, bool) {
	own := fieldTerms(x.c.unjoin(nlp.HumanName(name)))
	for _, e := range ev[:min(len(ev), labelReach)] {
		un := x.c.units[e.U]
		if un.Kind != extract.UnitField || extract.FieldValue(un.Text) == "" {
			continue
		}
		label := nlp.Terms(extract.FieldLabel(un.Text))
		if len(label) > 0 && !slices.ContainsFunc(label, func(t string) bool { return !slices.Contains(own, t) }) {
			return e, true
		}
	}
	return evidence{}, false
}

// labelReach is how far down a field's evidence a field line naming it is looked for.
const labelReach = 5

var (
	// reFromVersion and reToVersion are version fields of where an upgrade starts and where it ends.
	reFromVersion = regexp.MustCompile(`(?i)\b(?:current|installed|existing|old|previous|running)\b`)
	reToVersion   = regexp.MustCompile(`(?i)\b(?:recommended|target|new|newest|latest|next)\b`)
	reToBefore    = regexp.MustCompile(`\b(?:to|to version|version)\s+$`)
)

// limit cuts a string to the schema's maxLength.
func limit(v string, s map[string]any) string {
	if n, ok := s["maxLength"].(float64); ok && n >= 1 && len([]rune(v)) > int(n) {
		v = nlp.Truncate(v, int(n))
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
	name, _, _ := strings.Cut(field, fieldSep)
	from, to := reFromVersion.MatchString(name) && !minimum, reToVersion.MatchString(name) && !minimum
	best, bestScore, at := "", math.Inf(-1), evidence{}
	for rank, e := range ev[:min(len(ev), 5)] {
		text := x.c.units[e.U].Text
		for _, loc := range reVersion.FindAllStringIndex(text, -1) {
			score := e.Score*4 - float64(rank)*0.01 - float64(loc[0])*0.0001
			if minimum && reMinimumCue.MatchString(text[loc[1]:]) {
				score += 2
			}
			before := strings.ToLower(text[max(0, loc[0]-12):loc[0]])
			if from && strings.HasSuffix(before, "from ") || to && reToBefore.MatchString(before) {
				score += 2 // "upgrade from 11.4.7 to 12.1.2": the current version, then the one to go to
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
	desc := nlp.HumanName(name) + " " + str(s["description"])
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
	subject := !person && !country && reSubjectField.MatchString(nlp.HumanName(name)) && !reRoleField.MatchString(desc)
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
				st := nlp.Terms(span)
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
		if ts := nlp.Terms(w); len(ts) == 1 && field[ts[0]] {
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
