package extractive

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Candidate features: what the answer model (model.go) reads about one unit for one question.
// Each is a plain measurement in about [0, 1]; the weights that combine them are fitted from data
// (cmd/trainanswer), never set by hand. The order is the model's: featureNames names them, and the
// committed weights file is checked against it when it is loaded.
var featureNames = []string{
	"coverage",         // idf-weighted share of the question's terms the unit states itself
	"context_coverage", // the same, counting what its context states (heading, title, sentence before)
	"coverage_vs_best", // coverage over the best coverage of any unit (1 for the best)
	"coverage_rank",    // 1/(1+rank) of the unit by context coverage
	"terms_share",      // unweighted share of the question's distinct terms the unit states
	"bigrams",          // share of the question's adjacent term pairs the unit has adjacent too
	"proximity",        // matched terms over the width of the window they span in the unit
	"typed",            // the question asks for a value of a known type
	"type_hit",         // the unit holds a value of that type that the question does not
	"novel",            // share of the unit's terms the question lacks (an answer adds something)
	"names_missing_doc",
	"names_missing_unit",
	"numbers_missing",
	"rarest_missing", // idf of the rarest question term the unit and its context lack, over the corpus's largest
	"absent_corpus",  // share of question term weight no unit of any source states
	"name_absent",    // a name of the question that no source states (a word, or a name of several as written)
	"doc_relevance",  // the unit's document's BM25 over the best document's
	"neighbour",      // the best context coverage of the sentence before or after
	"first_in_para",  // the unit opens its paragraph
	"length",         // log of its word count, over log 50
	"short",          // fewer than five words
	"attribute",      // it states what is asked about (1 when the question names nothing)
	"open_question",  // why/how questions: the outcome often follows the match
	"table_row",      // a table row or a "Label: value" line
	"context_only",   // what the context adds to the unit's own coverage
	"density",        // matched term weight over the unit's length in terms
	"name_novel",     // the unit holds a capitalised name the question lacks
	"number_novel",   // the unit holds a number the question lacks
	"year_novel",     // the unit holds a year or date the question lacks
	"wants_person",   // the expected answer type, one flag each
	"wants_place",
	"wants_org",
	"wants_time",
	"wants_quantity",
	"shape_factoid", // the question's shape: one fact, or a definition/reason/list/comparison/briefing
	"shape_reason",
	"shape_list",
	"type_near",         // a value of the expected type stands within four words of a matched term
	"passage",           // the BM25 score of the unit's paragraph over the best paragraph's
	"passage_top",       // the unit's paragraph is the best-scoring one
	"opposite",          // the unit states the opposite of a question word ("oldest" for "youngest") and not the word
	"number_absent",     // a number of the question that no source states
	"names_unbridged",   // share of the question's names neither the unit (with its context) nor another document states
	"negation_question", // the question denies something ("not", "never", "n't") and the unit denies nothing
	"related",           // weighted share of the question's terms the unit states only by a WordNet relative ("payment" for "pay")
	"similar",           // the same for a word of similar meaning by word vectors (cosine ≥ 0.5), weighted by the cosine
	"vector_cosine",     // cosine of the idf-weighted mean word vectors of the question's terms and the unit's
	"unsupported",       // weighted share of the question's terms its document states elsewhere but neither the unit (in any way) nor another document states
	"negation_unit",     // the unit denies something and the question denies nothing (an answer may: "has not released an SDK")
	"attribute_unnamed", // the question asks for a thing by name ("which refrigerant") that no document naming its subject states
	"substitute",        // weighted share of the question's terms the unit states only by a word of similar use that is no WordNet relative ("rain" for "snow")
	"focus_coverage",    // coverage of the question's terms that its document's title and byline lack: what is asked, not what the whole document is about
}

// numFeatures is the length of a feature vector.
var numFeatures = len(featureNames)

// questionStats are the per-question measurements every candidate's features are relative to.
type questionStats struct {
	bestCov     float64
	maxIdf      float64
	absent      float64 // share of term weight absent from every unit
	nameGone    float64 // 1 when a name of the question is in no unit, or no source writes it
	numberGone  float64 // 1 when a number of the question is in no document
	bigrams     [][2]string
	docRel      []float64       // per document: BM25 over the best document's
	paraRel     map[int]float64 // per paragraph: BM25 over the best paragraph's
	ctxCov      []float64       // per unit: context coverage (computed once for ranking)
	rank        []int           // per unit: rank by ctxCov
	typed       float64
	hasAttrib   bool
	attrUnnamed float64   // 1 when the question asks for a thing by name that no document naming its subject states
	qVec        []float32 // the question's terms' idf-weighted vector (vectorCosine)
}

// stats measures the question against the whole corpus.
func (s *scorer) stats() *questionStats {
	c, q := s.c, s.q
	st := &questionStats{ctxCov: make([]float64, len(c.units)), rank: make([]int, len(c.units))}
	for u := range c.units {
		st.ctxCov[u] = s.coverage(u)
		if v := s.ownCoverage(u); v > st.bestCov {
			st.bestCov = v
		}
	}
	order := make([]int, len(c.units))
	for i := range order {
		order[i] = i
	}
	sortByScore(order, st.ctxCov)
	for r, u := range order {
		st.rank[u] = r
	}
	st.maxIdf = c.idf("\x00") // a term no unit states has the largest idf
	for _, t := range q.Terms {
		if c.df[t] == 0 && !s.inSources(t) {
			st.absent += s.w[t]
		}
	}
	if s.total > 0 {
		st.absent /= s.total
	}
	for _, n := range q.Names {
		if c.df[n] == 0 && !s.inSources(n) { // a name may be only in a title or file name
			st.nameGone = 1
		}
	}
	if len(s.unwrittenNames()) > 0 {
		st.nameGone = 1
	}
	for _, n := range q.Numbers {
		if !slices.ContainsFunc(c.docNums, func(nums map[string]bool) bool { return nums[n] }) {
			st.numberGone = 1
		}
	}
	for i := 0; i+1 < len(q.Ordered); i++ {
		st.bigrams = append(st.bigrams, [2]string{q.Ordered[i], q.Ordered[i+1]})
	}
	st.docRel = s.docRelevance()
	st.paraRel = s.paragraphRelevance()
	if q.Type != typeAny {
		st.typed = 1
	}
	st.hasAttrib = len(q.Attribute) > 0
	st.attrUnnamed = flag(s.attributeUnnamed())
	st.qVec = s.meanVector(q.Terms)
	return st
}

// sortByScore orders unit indexes by descending score, ties in source order.
func sortByScore(order []int, score []float64) {
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return a - b
	})
}

// ownCoverage is coverage counting only what the unit states itself.
func (s *scorer) ownCoverage(u int) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.q.Terms {
		if m := s.match(u, t); m != contextWeight {
			got += s.w[t] * m
		}
	}
	return got / s.total
}

// focusCoverage is ownCoverage over the question's terms that u's document's title and byline do
// not state: in a tenancy agreement about Flat 4B, "Wrenfield Court" is what every clause is about,
// and the clause that answers is the one stating "deposit". A document that does not mention the
// question's names has no focus: a database guide's "wait two hours … before you switch it on" is
// not about the Kestrel HD8.
func (s *scorer) focusCoverage(u int) float64 {
	d := s.c.units[u].Doc
	if !s.c.mentionsAll(d, s.q.Names) {
		return 0 // what is asked counts in a document about the question's subject
	}
	title := s.c.titleTerms[d]
	total, got := 0.0, 0.0
	for _, t := range s.q.Terms {
		if title[t] {
			continue
		}
		total += s.w[t]
		if m := s.match(u, t); m != contextWeight {
			got += s.w[t] * m
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// features measures unit u for the question.
func (s *scorer) features(u int, st *questionStats) []float64 {
	c, q := s.c, s.q
	un := c.units[u]
	x := make([]float64, numFeatures)
	own := s.ownCoverage(u)
	x[0] = own
	x[1] = st.ctxCov[u]
	if st.bestCov > 0 {
		x[2] = own / st.bestCov
	}
	x[3] = 1 / float64(1+st.rank[u])
	matched, rarest := 0, 0.0
	for _, t := range q.Terms {
		switch m := s.match(u, t); {
		case m > 0 && m != contextWeight:
			matched++
		case m == 0:
			rarest = max(rarest, c.idf(t))
		}
	}
	if len(q.Terms) > 0 {
		x[4] = float64(matched) / float64(len(q.Terms))
	}
	x[5] = s.bigramShare(u, st)
	x[6] = s.proximity(u)
	x[7] = st.typed
	if st.typed == 1 && s.typeHit(un.Text) {
		x[8] = 1
	}
	x[9] = s.novelty(u)
	x[10], x[11] = s.namesMissing(u)
	x[12] = s.numbersMissing(u)
	if st.maxIdf > 0 {
		x[13] = rarest / st.maxIdf
	}
	x[14] = st.absent
	x[15] = st.nameGone
	x[16] = st.docRel[un.Doc]
	x[17] = s.neighbour(u, st)
	if un.Prev < 0 {
		x[18] = 1
	}
	n := len(strings.Fields(un.Text))
	x[19] = min(math.Log(1+float64(n))/math.Log(50), 1.5)
	if n < 5 {
		x[20] = 1
	}
	x[21] = 1
	if st.hasAttrib && !s.statesAttribute(u) {
		x[21] = 0
	}
	if q.Open {
		x[22] = 1
	}
	if un.Kind == extract.UnitRow || un.Kind == extract.UnitField {
		x[23] = 1
	}
	x[24] = max(st.ctxCov[u]-own, 0)
	if n := len(c.own[u]); n > 0 {
		x[25] = own * float64(len(q.Terms)) / float64(n)
	}
	names, nums, years := s.novelValues(un.Text)
	x[26], x[27], x[28] = flag(names), flag(nums), flag(years)
	switch q.Type {
	case typePerson:
		x[29] = 1
	case typePlace:
		x[30] = 1
	case typeOrg:
		x[31] = 1
	case typeTime:
		x[32] = 1
	case typeNumber, typeMoney, typePercent, typeTemperature:
		x[33] = 1
	}
	switch q.Shape {
	case shapeFactoid:
		x[34] = 1
	case shapeReason:
		x[35] = 1
	case shapeList, shapeCompare, shapeBrief:
		x[36] = 1
	}
	x[37] = flag(st.typed == 1 && s.typeNear(u))
	x[38] = st.paraRel[un.Para]
	x[39] = flag(st.paraRel[un.Para] == 1)
	x[40] = flag(s.statesOpposite(u))
	x[41] = st.numberGone
	x[42] = s.namesUnbridged(u)
	unitNegated := nlp.Negated(un.Text)
	// "Why won't the council keep a lane open?" asks the reason for a refusal: the answer gives the
	// reason without denying anything again.
	x[43] = flag(s.q.Negated && !unitNegated && s.q.Shape != shapeReason)
	x[48] = flag(unitNegated && !s.q.Negated)
	x[44], x[45], x[47], x[50] = s.meaning(u)
	x[46] = s.vectorCosine(u, st.qVec)
	x[49] = st.attrUnnamed
	x[51] = s.focusCoverage(u)
	return x
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// novelValues: the text holds a capitalised name, a number, a year or date the question lacks.
func (s *scorer) novelValues(text string) (names, nums, years bool) {
	for _, n := range capitalisedRuns(text) {
		if !s.inQuestion(n) {
			names = true
			break
		}
	}
	for n := range numbersIn(text) {
		if !s.inQuestion(n) {
			if extract.IsYear(n) {
				years = true
			} else {
				nums = true
			}
		}
	}
	if !years {
		for _, m := range reTime.FindAllString(text, -1) {
			if !s.inQuestion(m) {
				years = true
				break
			}
		}
	}
	return names, nums, years
}

// typeNear: a word holding a value of the expected type stands within four words of a word that
// states a question term.
func (s *scorer) typeNear(u int) bool {
	toks := strings.Fields(s.c.units[u].Text)
	var vals, hits []int
	qs := map[string]bool{}
	for _, t := range s.q.Terms {
		qs[t] = true
	}
	for i, tok := range toks {
		if s.typeHit(tok) || (s.q.Type != typeTime && i > 0 && s.typeHit(toks[i-1]+" "+tok)) {
			vals = append(vals, i)
		}
		for _, t := range nlp.TermsBy(tok, nlp.Stem) {
			if qs[t] {
				hits = append(hits, i)
				break
			}
		}
	}
	for _, v := range vals {
		for _, h := range hits {
			if d := v - h; d != 0 && d >= -4 && d <= 4 {
				return true
			}
		}
	}
	return false
}

// seq is unit u's terms in order.
func (c *corpus) seq(u int) []string { return c.seqs[u] }

// bigramShare is the share of the question's adjacent term pairs that are adjacent in the unit.
func (s *scorer) bigramShare(u int, st *questionStats) float64 {
	if len(st.bigrams) == 0 {
		return 0
	}
	ts := s.c.seq(u)
	have := map[[2]string]bool{}
	for i := 0; i+1 < len(ts); i++ {
		have[[2]string{ts[i], ts[i+1]}] = true
	}
	n := 0
	for _, b := range st.bigrams {
		if have[b] {
			n++
		}
	}
	return float64(n) / float64(len(st.bigrams))
}

// proximity is the number of distinct question terms in the unit over the width of the shortest
// run of its terms that holds them all (1 when they stand together).
func (s *scorer) proximity(u int) float64 {
	ts := s.c.seq(u)
	want := map[string]bool{}
	for _, t := range s.q.Terms {
		if s.c.ownSet[u][t] {
			want[t] = true
		}
	}
	if len(want) < 2 {
		return float64(len(want))
	}
	// The shortest window holding every wanted term (two pointers over the sequence).
	count := map[string]int{}
	have, best, lo := 0, len(ts)+1, 0
	for hi, t := range ts {
		if !want[t] {
			continue
		}
		if count[t] == 0 {
			have++
		}
		count[t]++
		for have == len(want) {
			if hi-lo+1 < best {
				best = hi - lo + 1
			}
			if l := ts[lo]; want[l] {
				count[l]--
				if count[l] == 0 {
					have--
				}
			}
			lo++
		}
	}
	if best > len(ts) {
		return 0
	}
	return float64(len(want)) / float64(best)
}

// reCalendar is a day or month: capitalised, but no name of a person, place or organisation.
var reCalendar = regexp.MustCompile(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|September|October|November|December)$`)

// typeHit: text holds a value of the asked-for type that the question itself does not hold.
func (s *scorer) typeHit(text string) bool {
	q := s.q
	switch q.Type {
	case typePerson, typePlace, typeOrg:
		for _, n := range capitalisedRuns(text) {
			if !s.inQuestion(n) && !reCalendar.MatchString(n) {
				return true
			}
		}
		return false
	case typeNumber, typeMoney, typePercent, typeTemperature:
		if q.Often {
			return reFrequency.MatchString(text)
		}
		if q.Count {
			// "How many" counts things: an amount of money or a percentage is not a count.
			text = reNotCount.ReplaceAllString(text, " ")
		}
		if !q.Type.satisfies(text) {
			return false
		}
		for n := range numbersIn(text) {
			if !s.inQuestion(n) {
				return true
			}
		}
		return reNumberWord.MatchString(text)
	case typeTime:
		for _, m := range reTime.FindAllString(text, -1) {
			if !s.inQuestion(m) {
				return true
			}
		}
		return false
	}
	return false
}

// reNotCount matches amounts of money and percentages.
var reNotCount = regexp.MustCompile(`(?i)(?:[$€£¥]|\b(?:usd|eur|gbp|nok|sek|dkk|chf|jpy)\b)\s?\d[\d,.]*(?:\s?(?:million|billion|bn|m|k)\b)?|\d[\d,.]*\s?(?:(?:thousand|million|billion|trillion|bn|m|k)\s)?(?:%|per ?cent\b|percent\b|(?:usd|eur|gbp|nok|sek|dkk|chf|jpy|dollars?|euros?|pounds?|kroner|yen)\b)`)

// reFrequency is how often something happens: "two days a week", "twice a year", "every 20
// minutes", "daily", "once a month", "three times per season".
var reFrequency = regexp.MustCompile(`(?i)\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|annually|yearly|biennially|once|twice|thrice)\b|` +
	`\bevery\s+(?:(?:\d+|other|two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+)?(?:second|minute|hour|day|night|week|fortnight|month|year|season|decade|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b|` +
	`\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|several)\s+(?:times|days|nights|evenings|mornings|hours|sessions)\s+(?:a|per|each|every)\s+(?:day|week|month|year|season)\b`)

// inQuestion: every word of v is a word of the question.
func (s *scorer) inQuestion(v string) bool {
	qs := strings.ToLower(s.q.Text)
	for _, w := range nlp.Words(v) {
		if !strings.Contains(qs, w) {
			return false
		}
	}
	return true
}

// capitalisedRuns are runs of capitalised words that do not open the text (names, places,
// organisations, titles).
func capitalisedRuns(text string) []string {
	var out, run []string
	flush := func() {
		if len(run) > 0 {
			out = append(out, strings.Join(run, " "))
		}
		run = nil
	}
	for i, f := range strings.Fields(text) {
		w := strings.Trim(f, `.,;:()"'“”‘’!?[]`)
		r, _ := utf8.DecodeRuneInString(w)
		if w == "" || !unicode.IsUpper(r) || (i == 0) || nlp.IsStopword(strings.ToLower(w)) {
			flush()
			continue
		}
		run = append(run, w)
		if strings.ContainsAny(f, ",;:.)") {
			flush()
		}
	}
	flush()
	return out
}

// novelty is the share of the unit's terms the question lacks.
func (s *scorer) novelty(u int) float64 {
	own := s.c.own[u]
	if len(own) == 0 {
		return 0
	}
	qs := map[string]bool{}
	for _, t := range s.q.Terms {
		qs[t] = true
	}
	n := 0
	for _, t := range own {
		if !qs[t] {
			n++
		}
	}
	return float64(n) / float64(len(own))
}

// namesMissing are the shares of the question's names absent from the unit's document and from
// the unit with its context.
func (s *scorer) namesMissing(u int) (doc, unit float64) {
	q, c := s.q, s.c
	if len(q.Names) == 0 {
		return 0, 0
	}
	for _, n := range q.Names {
		if !c.docTerms[c.units[u].Doc][n] {
			doc++
		}
		if !c.ownSet[u][n] && !c.ctx[u][n] {
			unit++
		}
	}
	k := float64(len(q.Names))
	return doc / k, unit / k
}

// namesUnbridged is the share of the question's names that the unit and its context lack and that
// no other document states either: a name another document states can be bridged to (a
// multi-document question names things that different documents describe: "the director of X" in
// one, the director's own page in another).
func (s *scorer) namesUnbridged(u int) float64 {
	q, c := s.q, s.c
	if len(q.Names) == 0 {
		return 0
	}
	n := 0
	for _, name := range q.Names {
		if c.ownSet[u][name] || c.ctx[u][name] {
			continue
		}
		d := c.units[u].Doc
		if !slices.ContainsFunc(c.docTerms, func(terms map[string]bool) bool { return terms[name] }) ||
			(c.docTerms[d][name] && c.docFreq[name] == 1) {
			n++
		}
	}
	return float64(n) / float64(len(q.Names))
}

// numbersMissing is the share of the question's numbers, in figures or in words, the unit and its
// context lack.
func (s *scorer) numbersMissing(u int) float64 {
	total := len(s.q.Numbers) + len(s.q.Counted)
	if total == 0 {
		return 0
	}
	n := 0
	for _, nums := range [2][]string{s.q.Numbers, s.q.Counted} {
		for _, x := range nums {
			if !s.c.nums[u][x] {
				n++
			}
		}
	}
	return float64(n) / float64(total)
}

// neighbour is the better context coverage of the units just before and after u in its paragraph.
func (s *scorer) neighbour(u int, st *questionStats) float64 {
	c := s.c
	best := 0.0
	if p := c.units[u].Prev; p >= 0 {
		best = st.ctxCov[p]
	}
	if n := u + 1; n < len(c.units) && c.units[n].Prev == u {
		best = max(best, st.ctxCov[n])
	}
	return best
}
