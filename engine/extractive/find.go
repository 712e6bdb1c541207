package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// itemShare is the share of the best candidate's probability another sentence needs to join a
// list, comparison, reason or briefing as a further point.
const itemShare = 0.3

// nearRepeat is the share of terms two sentences may have in common before the second is a near
// repeat of the first (Jaccard over their distinct terms).
const nearRepeat = 0.6

// finding is what the sources say about one sub-question.
type finding struct {
	Sub     subQuestion
	Q       query
	Answer  []int       // units that state the answer, best first
	Parts   []string    // per answer unit, the part of the question it answers ("" or nil: the whole)
	Compare *comparison // a table comparison that answers it
	Support []int       // further units quoted as evidence
	Missing string      // why it is not answered, naming what the sources lack
	Read    []int       // documents read closely for it, best first
	Best    float64     // the model's confidence that the best unit answers it
	Respelt []string    // words of the question read as the sources write them (“NYC” as “New York City”)
}

func (f finding) answered() bool { return len(f.Answer) > 0 || f.Compare != nil }

// findOptions is how far one search goes (set by effort).
type findOptions struct {
	Candidates int              // units scored by the answer model (the best by retrieval)
	Sources    int              // documents read closely: evidence comes from the best ones only
	Answers    int              // answer sentences at most for a factoid; lists, reasons and briefings take Items
	Items      int              // sentences at most for a list, comparison, reason or briefing
	Hop        bool             // search again with the names the best passage introduces (a multi-document question)
	Support    int              // further quotes at most
	Skip       func(u int) bool // units not to quote again (already quoted in this or a prior report)
}

// find answers one sub-question from the corpus: candidates are retrieved and scored by the answer
// model; the question is answered when the model's confidence in the best clears the calibrated
// threshold. A factoid leads with its best sentence; a list, comparison, reason or briefing gathers
// several sentences that make distinct points.
func (c *corpus) find(sub subQuestion, o findOptions) finding {
	text, respelt := c.respelt(sub.Text)
	q := analyze(text)
	var own []string // the question's own words, when it carries another's subject
	if len(sub.Carry) > 0 || len(sub.Subject) > 0 {
		own = q.Terms
	}
	q.Terms = nlp.Uniq(append(append(q.Terms, sub.Carry...), sub.Subject...))
	if sub.Part {
		q.part, q.partOf = true, sub.Subject
		q.carried = slices.DeleteFunc(slices.Clone(sub.Carry), func(t string) bool { return slices.Contains(own, t) })
	}
	if q.measure != "" && c.measureNamed(q) {
		q.Terms = nlp.Uniq(append(q.Terms, q.measure)) // "depth" when the sources say "Depth: 12 km"
	}
	s := c.scorer(q)
	m := defaultModel()
	ranked := s.candidates(m, o.Candidates, func(u int) bool { return (o.Skip == nil || !o.Skip(u)) && c.mentions(u, sub.Subject) })
	lead, valued := s.valueLead(ranked)
	if lead > 0 {
		// The passage that gives the value asked for is the answer, and whether it answers is
		// judged on it.
		ranked = slices.Concat([]scored{ranked[lead]}, ranked[:lead], ranked[lead+1:])
	}
	if i, ok := c.pointedLead(ranked); ok {
		// "Accepted solution: see post #7" matched; post #7 answers.
		ranked = slices.Concat([]scored{ranked[i]}, ranked[:i], ranked[i+1:])
	}
	f := finding{Sub: sub, Q: q, Best: m.confidence(ranked), Respelt: respelt}
	seen := map[int]bool{}
	for _, r := range ranked {
		if d := c.units[r.U].Doc; !seen[d] && len(f.Read) < o.Sources {
			seen[d] = true
			f.Read = append(f.Read, d)
		}
	}
	if cmp, ok := s.compare(nil); ok {
		f.Compare = &cmp
		if d := c.tables[cmp.Table].Doc; !seen[d] {
			f.Read = append([]int{d}, f.Read...)
			seen[d] = true
		}
	}
	_, echoed := s.echoedSection(func(u int) bool { return o.Skip == nil || !o.Skip(u) })
	if len(ranked) > 0 && !echoed && (focusAbsent(ranked[0].X) || !s.statesAny(ranked[0].U, own) || !valued) {
		// The question names something (a name, a figure) that no source mentions: whatever
		// matches its other words is about something else. Or the best passage matches only the
		// subject carried into the question ("their" benefits, a record's name) and none of its
		// own words: it answers another question about the same subject. Or it asks for a price
		// and no passage near the best gives one.
		f.Best = 0
	}
	if sub.Part && (q.Shape == shapeFactoid || q.Shape == shapeDefinition) {
		s.q.Shape = shapeBrief // a part of a briefing ("when to go") is briefed on, from its section
	}
	if f.Compare == nil && f.Best > 0 {
		// A question an FAQ heading asks is answered by its section.
		if answer, ok := c.faqAnswer(s, o); ok {
			f.Answer, f.Best = answer, max(f.Best, m.Threshold)
		}
	}
	if f.Compare == nil && f.Answer == nil && f.Best > 0 {
		// A list or comparison of a table's rows: the rows it names, or marks with its category.
		if rows, ok := s.tableRows(ranked, func(u int) bool { return o.Skip == nil || !o.Skip(u) }); ok {
			f.Answer, f.Best = rows, max(f.Best, m.Threshold)
		}
	}
	if f.Compare == nil && f.Answer == nil && s.q.Shape != shapeFactoid && s.q.Shape != shapeDefinition && (f.Best > 0 || echoed) {
		// A heading that names what a list, reason, comparison or briefing asks for, in a
		// document that names its subject, answers it.
		if answer, parts, ok := c.sectionAnswer(s, ranked, o); ok {
			f.Answer, f.Parts, f.Best = answer, parts, max(f.Best, m.Threshold)
		}
	}
	if f.Compare == nil && f.Answer == nil && f.Best > 0 && len(ranked) > 0 {
		// A yes/no question that a section's heading asks, and whose section opens with "No." or
		// "Yes, …" (an FAQ), is answered by that verdict, then the passage that matched.
		if first, ok := c.sectionVerdict(q, ranked[0].U); ok && (o.Skip == nil || !o.Skip(first)) {
			f.Answer, f.Best = []int{first}, max(f.Best, m.Threshold)
			if ranked[0].U != first {
				f.Answer = append(f.Answer, ranked[0].U)
			}
		}
	}
	if f.Compare == nil && f.Answer == nil {
		// "Who is the oldest, A or B?": the years A's and B's own documents give first decide.
		if units, ok := c.chronology(sub.Text); ok && (o.Skip == nil || (!o.Skip(units[0]) && !o.Skip(units[1]))) {
			f.Answer, f.Best = units, max(f.Best, m.Threshold)
		}
	}
	if f.Compare == nil && f.Answer == nil && f.Best >= m.Threshold {
		f.Answer = c.selectAnswer(q, ranked, o, m.Support)
		if u, ok := s.valueAfter(f.Answer[0]); ok && !slices.Contains(f.Answer, u) && (o.Skip == nil || !o.Skip(u)) {
			f.Answer = slices.Insert(f.Answer, 1, u)
		}
		if o.Hop && q.Shape == shapeFactoid {
			if u, ok := c.hop(s, ranked, o); ok {
				// The second search found the answer in the document the first one pointed to:
				// it leads, and the passage that led there follows.
				f.Answer = []int{u, ranked[0].U}
			}
		}
	}
	if !f.answered() {
		f.Missing = s.missing(ranked, !valued)
		return f
	}
	f.Support = c.selectSupport(f, ranked, o, m.Support, seen)
	return f
}

// selectAnswer picks the answer's sentences from the ranked candidates: the best; for an open
// question the sentence after it at every effort (the outcome often follows the match: "How do I get
// the toolbar back?" is answered after the sentence naming the problem); for a list, comparison,
// reason or briefing, further candidates the model finds likely that are not near repeats.
func (c *corpus) selectAnswer(q query, ranked []scored, o findOptions, support float64) []int {
	best := ranked[0].U
	answer := []int{best}
	switch q.Shape {
	case shapeList, shapeCompare, shapeReason, shapeBrief:
		// The sentences that follow the best one in its section come first: a passage that
		// introduces causes or uses goes on to name them. Then further points the model finds
		// likely: likely enough to be quoted as support, or close to the best candidate's own
		// probability (a list's items each state one point, so each scores lower than a sentence
		// stating a fact would).
		n := o.Items - 1
		if q.Shape == shapeList && c.listFollows(best) {
			n = max(n, listPoints-1) // "arranged in five rooms:" and its items, all of them
		}
		for _, u := range c.sectionAfter(best, n) {
			if (o.Skip == nil || !o.Skip(u)) && !c.repeats(u, answer) {
				answer = append(answer, u)
			}
		}
		floor := min(support, itemShare*ranked[0].Score)
		for _, r := range ranked[1:] {
			if len(answer) >= o.Items || r.Score < floor {
				break
			}
			if d := c.units[r.U].Doc; !c.repeats(r.U, answer) && (d == c.units[best].Doc || c.namesWhatIsAnswered(d, q, answer)) {
				answer = append(answer, r.U)
			}
		}
		if q.Shape == shapeCompare {
			answer = c.eachCompared(q, ranked, answer, o)
		}
	default:
		if next := best + 1; q.Open && len(answer) < max(o.Answers, 2) && next < len(c.units) && c.units[next].Prev == best &&
			(o.Skip == nil || !o.Skip(next)) {
			answer = append(answer, next)
		}
	}
	return answer
}

// hopShare is the share of the first search's best probability the second search's best needs
// (chosen on the HotpotQA training split: 7 of 68 questions hop, 2 gain the answer, none lose it).
const hopShare = 0.3

// hop searches again for a multi-document question: the question's terms plus the names the best
// passage introduces (the director it names, the company it mentions), among the other documents.
// A passage found there answers instead when it holds the kind of value the question asks for and
// the model scores it above the best passage of the first search.
func (c *corpus) hop(s *scorer, ranked []scored, o findOptions) (int, bool) {
	if len(c.docs) < 2 || len(ranked) == 0 || s.q.Type == typeAny {
		return 0, false
	}
	best := ranked[0]
	var bridge []string
	for _, n := range capitalisedRuns(c.units[best.U].Text) {
		if !s.inQuestion(n) {
			bridge = append(bridge, nlp.Terms(n)...)
		}
	}
	if len(bridge) == 0 {
		return 0, false
	}
	q2 := s.q
	q2.Terms = nlp.Uniq(append(slices.Clone(s.q.Terms), bridge...))
	q2.Names = nlp.Uniq(append(slices.Clone(s.q.Names), bridge...))
	s2 := c.scorer(q2)
	from := c.units[best.U].Doc
	second := s2.candidates(defaultModel(), o.Candidates, func(u int) bool {
		// The second passage is about what the first one names: it (or its heading or title)
		// states a bridge name; a passage elsewhere matching only the question's other words is
		// not where the first one leads.
		return c.units[u].Doc != from && (o.Skip == nil || !o.Skip(u)) &&
			slices.ContainsFunc(bridge, func(t string) bool { return s2.match(u, t) > 0 })
	})
	if len(second) == 0 || !s.typeHit(c.units[second[0].U].Text) || second[0].Score <= hopShare*best.Score {
		return 0, false
	}
	return second[0].U, true
}

// sectionAfter are up to n units that follow u in its section (its paragraph, or the list or
// paragraphs under the same heading), in order.
// eachCompared adds, for each name or figure of a comparison that no passage of the answer states
// ("weeks 3–4" of "how do the walks in weeks 3–4 compare with those in weeks 7–8"), the likeliest
// candidate of the best one's document that states it: a comparison quotes both sides.
func (c *corpus) eachCompared(q query, ranked []scored, answer []int, o findOptions) []int {
	doc := c.units[answer[0]].Doc
	for _, item := range slices.Concat(q.Numbers, q.Names) {
		stated := func(u int) bool { return numbersIn(c.units[u].Text)[item] || c.ownSet[u][item] }
		if slices.ContainsFunc(answer, stated) {
			continue
		}
		for _, r := range ranked {
			if c.units[r.U].Doc == doc && stated(r.U) && (o.Skip == nil || !o.Skip(r.U)) && !slices.Contains(answer, r.U) {
				answer = append(answer, r.U)
				break
			}
		}
	}
	return answer
}

// listFollows: a list's items follow unit u in its section within two units (a passage that
// announces them, "The exhibition is arranged in five rooms.", perhaps with an aside).
func (c *corpus) listFollows(u int) bool {
	after := c.sectionAfter(u, 3)
	return c.units[u].Kind != extract.UnitItem && slices.ContainsFunc(after, func(v int) bool { return c.units[v].Kind == extract.UnitItem })
}

func (c *corpus) sectionAfter(u, n int) []int {
	var out []int
	un := c.units[u]
	for v := u + 1; v < len(c.units) && len(out) < n; v++ {
		w := c.units[v]
		if w.Doc != un.Doc || (w.Section != un.Section && w.Para != un.Para) || w.Kind == extract.UnitRow {
			break
		}
		out = append(out, v)
	}
	return out
}

// selectSupport picks further evidence: likely candidates from the documents read, preferring a
// document the answer does not cite yet (a multi-document question needs each of them), no near
// repeats, no rows of a table the comparison already quotes.
func (c *corpus) selectSupport(f finding, ranked []scored, o findOptions, support float64, read map[int]bool) []int {
	taken := slices.Clone(f.Answer)
	docs := map[int]bool{}
	for _, u := range f.Answer {
		docs[c.units[u].Doc] = true
	}
	if f.Compare != nil {
		docs[c.tables[f.Compare.Table].Doc] = true
	}
	var out []int
	// Support from another document needs less: a multi-document question's other part is worded
	// unlike the question, so it scores lower than the answer does.
	floor := func(newDoc bool) float64 {
		if newDoc {
			return min(support, itemShare*ranked[0].Score)
		}
		return support
	}
	pick := func(newDoc bool) {
		for _, r := range ranked {
			if len(out) >= o.Support || r.Score < floor(newDoc) {
				return
			}
			u := c.units[r.U]
			if !read[u.Doc] || docs[u.Doc] != !newDoc || c.repeats(r.U, taken) ||
				(f.Compare != nil && u.Table == f.Compare.Table) || (newDoc && !c.namesWhatIsAnswered(u.Doc, f.Q, f.Answer)) {
				continue
			}
			out = append(out, r.U)
			taken = append(taken, r.U)
			docs[u.Doc] = true
		}
	}
	if u, ok := c.bridge(f, ranked, docs); ok && len(out) < o.Support {
		out, taken = append(out, u), append(taken, u)
		docs[c.units[u].Doc] = true
	}
	pick(true)
	pick(false)
	return out
}

// bridge finds, for a question whose names the answer does not all state, the best candidate from
// another document that states one of the missing names: the other half of a multi-document
// answer ("the director of X" in one document, the director's birthplace in another).
func (c *corpus) bridge(f finding, ranked []scored, docs map[int]bool) (int, bool) {
	var missing []string
	for _, n := range f.Q.Names {
		if !slices.ContainsFunc(f.Answer, func(u int) bool { return c.ownSet[u][n] || c.ctx[u][n] }) {
			missing = append(missing, n)
		}
	}
	for _, r := range ranked {
		if docs[c.units[r.U].Doc] || c.repeats(r.U, f.Answer) {
			continue
		}
		if slices.ContainsFunc(missing, func(n string) bool { return c.ownSet[r.U][n] }) {
			return r.U, true
		}
	}
	return 0, false
}

// repeats: unit u says nearly what one of the taken units says (or is one of them).
func (c *corpus) repeats(u int, taken []int) bool {
	for _, t := range taken {
		if t == u || c.units[t].Text == c.units[u].Text || jaccard(c.ownSet[u], c.ownSet[t]) > nearRepeat {
			return true
		}
	}
	return false
}

// namesWhatIsAnswered: document d names something the question or its answer names. A point or
// support from another document carries on from the answer ("the director of X" in one, the
// director's own page in the other); a document naming neither speaks of something else, however
// many of the question's ordinary words it shares ("wait", "moved"). Of a question naming nothing,
// the document states the most specific of its words that the answer states.
func (c *corpus) namesWhatIsAnswered(d int, q query, answer []int) bool {
	if len(q.Names) == 0 {
		// Without names, what the answer is about is the most specific word of the question it
		// states ("swifts" of "how do common swifts raise their young").
		if len(answer) == 0 {
			return true
		}
		topic, best := "", 0.0
		for _, t := range q.Terms {
			if c.ownSet[answer[0]][t] && c.idf(t) > best {
				topic, best = t, c.idf(t)
			}
		}
		return topic == "" || c.docTerms[d][topic]
	}
	if slices.ContainsFunc(q.Names, func(n string) bool { return c.docTerms[d][n] && c.writesNameOf(d, q, n) }) {
		return true
	}
	for _, u := range answer {
		for _, name := range capitalisedRuns(c.units[u].Text) {
			if terms := nlp.Terms(name); len(terms) > 0 && c.mentionsAll(d, terms) {
				return true
			}
		}
	}
	return false
}

// writesNameOf: document d writes the question's name of several words that word n is part of, or
// n is a name of one word: "Green coffee prices" does not name "Hollins Green".
func (c *corpus) writesNameOf(d int, q query, n string) bool {
	for _, p := range q.Phrases {
		if slices.Contains(p.Stems, n) && !c.writes(d, p.Stems) {
			return false
		}
	}
	return true
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for t := range a {
		if b[t] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// statesAny: unit u states one of the terms (itself or by a synonym); true when there are none.
func (s *scorer) statesAny(u int, terms []string) bool {
	return len(terms) == 0 || slices.ContainsFunc(terms, func(t string) bool { return s.states(u, t) })
}

// focusAbsent: by a candidate's features, a name or number of the question is in no source, or the
// property it asks for by name is in no source about its subject.
func focusAbsent(x []float64) bool {
	return x[slices.Index(featureNames, "name_absent")] > 0 || x[slices.Index(featureNames, "number_absent")] > 0 ||
		x[slices.Index(featureNames, "attribute_unnamed")] > 0
}

// FocusAbsent is focusAbsent for cmd/trainanswer, which chooses the threshold knowing that such
// questions are not answered.
func FocusAbsent(x []float64) bool { return focusAbsent(x) }

// missing says, in the question's own words, what keeps the sources from answering: a name or
// figure of the question that no source states, or what the closest passage lacks (noValue: it and
// the passages near it give no value of the exact kind asked for, valueLead).
func (s *scorer) missing(ranked []scored, noValue bool) string {
	q := s.q
	var parts []string
	// A name no source mentions is the clearest reason; an ordinary word no source uses is not one
	// by itself (sources word things their own way), so it is named only with the closest passage.
	var absentNames []string
	for _, t := range s.absent() {
		if slices.Contains(q.Names, t) {
			absentNames = append(absentNames, t)
		}
	}
	named := q.missingWords(absentNames)
	if len(absentNames) == 0 {
		named = s.unwrittenNames()
	}
	if len(named) > 0 {
		parts = append(parts, "no source mentions "+quoteList(named))
	}
	var nums []string
	for _, n := range q.Numbers {
		found := false
		for d := range s.c.docs {
			if s.c.docNums[d][n] && s.namesIn(d) {
				found = true
				break
			}
		}
		if !found {
			nums = append(nums, n)
		}
	}
	if len(nums) > 0 {
		what := "no source gives figures for " + quoteList(nums)
		if len(q.Names) > 0 {
			what = "no source about " + quoteList(q.missingWords(q.Names)) + " gives figures for " + quoteList(nums)
		}
		parts = append(parts, what)
	}
	if len(parts) == 0 && len(ranked) > 0 && ranked[0].X[slices.Index(featureNames, "attribute_unnamed")] > 0 {
		parts = append(parts, s.unnamedAttribute())
	}
	if len(parts) == 0 {
		if len(ranked) == 0 {
			parts = append(parts, "no passage matches the question")
		} else {
			best := ranked[0].U
			where := "the closest passage (in `" + s.c.docs[s.c.units[best].Doc].Path + "`)"
			var lacks []string
			for _, t := range q.Terms {
				if s.match(best, t) == 0 {
					lacks = append(lacks, t)
				}
			}
			if noValue {
				kind, _ := s.exactKind()
				parts = append(parts, where+" and the passages near it give no "+kind)
			} else if len(lacks) > 0 {
				parts = append(parts, where+" does not state "+quoteList(q.missingWords(lacks)))
			} else {
				parts = append(parts, where+" uses the question's words but, by the answer model, does not state what it asks")
			}
		}
	}
	return capitalize(strings.Join(parts, "; ")) + "."
}

// unnamedAttribute says that no source about the question's subject names what it asks for: "no
// source about “Kestrel” or “HD8” mentions “retail price”".
func (s *scorer) unnamedAttribute() string {
	what := "“" + strings.Join(s.q.missingWords(s.q.Attribute), " ") + "”"
	if len(s.q.Names) == 0 {
		return "no source mentions " + what
	}
	return "no source about " + quoteList(s.q.missingWords(s.q.Names)) + " mentions " + what
}

// namesIn: document d mentions every name of the question.
func (s *scorer) namesIn(d int) bool { return s.c.mentionsAll(d, s.q.Names) }

// mentionsAll: document d states every one of terms.
func (c *corpus) mentionsAll(d int, terms []string) bool {
	return !slices.ContainsFunc(terms, func(t string) bool { return !c.docTerms[d][t] })
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "“" + w + "”"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// mentions: unit u names every subject term, in its own words or its context (its paragraph,
// section, document title or file name).
func (c *corpus) mentions(u int, subject []string) bool {
	for _, t := range subject {
		if !c.ownSet[u][t] && !c.ctx[u][t] {
			return false
		}
	}
	return true
}

// measureNamed: a document that mentions every name of the question uses the word for the measure
// it asks for ("depth" when the sources say "Depth: 12 km").
func (c *corpus) measureNamed(q query) bool {
	for d := range c.docs {
		if c.docTerms[d][q.measure] && c.mentionsAll(d, q.Names) {
			return true
		}
	}
	return false
}
