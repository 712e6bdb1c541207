package engine

import (
	"math"
	"path"
	"slices"
	"strings"
)

// Answer finding. Every unit (sentence, list item, field line, table row) of the sources read is
// scored against a question by weighted coverage: the share of the question's term weight (idf over
// units; a word no source contains weighs the most) that the unit states itself, plus, at
// contextWeight, what its context states (its section heading, document title and file name, the
// sentence before it, a table's caption). A unit may answer only if its document mentions every
// proper name of the question, it or its context states every number of the question, and it
// mentions what is asked about (the question's attribute). A unit lacking the kind of value asked
// for (a figure for "how many", an amount of money for "how much does it cost") scores half.
// Below relevanceFloor nothing answers: the report says so instead of quoting near misses.
const (
	contextWeight  = 0.7
	typeMismatch   = 0.5
	relevanceFloor = 0.5
)

// corpus is the units of a run's documents and the statistics the answer finder scores with.
type corpus struct {
	docs     []document
	titles   []string
	units    []unit
	tables   []table
	own      [][]string        // per unit: distinct terms it states (a row: its cells and header)
	ownSet   []map[string]bool // the same, as a set
	words    []map[string]bool // per unit: the stems of all its words, stopwords included
	ctx      []map[string]bool // per unit: its context's terms
	docTerms []map[string]bool // per document: every term
	docNums  []map[string]bool // per document: every number
	nums     []map[string]bool // per unit: numbers in it and its context
	df       map[string]int    // units stating each term
	idfCache map[string]float64
}

func newCorpus(docs []document) *corpus {
	c := &corpus{docs: docs, df: map[string]int{}, idfCache: map[string]float64{}}
	sc := stemCache{}
	para := 0
	for d, doc := range docs {
		p := parseDocument(d, doc, &para)
		off, toff := len(c.units), len(c.tables)
		for _, u := range p.units {
			if u.Prev >= 0 {
				u.Prev += off
			}
			if u.Table >= 0 {
				u.Table += toff
			}
			c.units = append(c.units, u)
		}
		for _, t := range p.tables {
			for i := range t.Units {
				t.Units[i] += off
			}
			if t.Units == nil { // CSV: every unit is a row
				for i := range t.Rows {
					t.Units = append(t.Units, off+i)
				}
			}
			c.tables = append(c.tables, t)
		}
		c.titles = append(c.titles, p.title)
		all := map[string]bool{}
		for _, w := range termsBy(strings.Join(doc.Lines, "\n")+" "+p.title+" "+path.Base(doc.Path), sc.stem) {
			all[w] = true
		}
		c.docTerms = append(c.docTerms, all)
		c.docNums = append(c.docNums, numbersIn(strings.Join(doc.Lines, "\n")))
	}
	for i, u := range c.units {
		text := u.Text
		var ctx strings.Builder
		ctx.WriteString(u.Section + " " + c.titles[u.Doc] + " " + fileWords(c.docs[u.Doc].Path))
		if u.Table >= 0 {
			t := c.tables[u.Table]
			text += " " + strings.Join(t.Header, " ")
			ctx.WriteString(" " + t.Title + " " + t.Caption)
		}
		switch {
		case u.Kind == unitField:
			for j := i - 1; j >= 0 && c.units[j].Para == u.Para; j-- {
				ctx.WriteString(" " + c.units[j].Text)
			}
			for j := i + 1; j < len(c.units) && c.units[j].Para == u.Para; j++ {
				ctx.WriteString(" " + c.units[j].Text)
			}
		case u.Prev >= 0:
			ctx.WriteString(" " + c.units[u.Prev].Text)
			if first := c.firstOfPara(u.Prev); first != u.Prev {
				ctx.WriteString(" " + c.units[first].Text)
			}
		}
		own := uniq(termsBy(text, sc.stem))
		set := map[string]bool{}
		for _, t := range own {
			set[t] = true
			c.df[t]++
		}
		cset := map[string]bool{}
		for _, t := range termsBy(ctx.String(), sc.stem) {
			if !set[t] {
				cset[t] = true
			}
		}
		nums := numbersIn(text + " " + ctx.String())
		all := map[string]bool{}
		for _, w := range wordStemsBy(text, sc.stem) {
			all[w] = true
		}
		c.words = append(c.words, all)
		c.own = append(c.own, own)
		c.ownSet = append(c.ownSet, set)
		c.ctx = append(c.ctx, cset)
		c.nums = append(c.nums, nums)
	}
	return c
}

func (c *corpus) firstOfPara(u int) int {
	for c.units[u].Prev >= 0 {
		u = c.units[u].Prev
	}
	return u
}

func fileWords(p string) string {
	base := path.Base(p)
	return strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(strings.TrimSuffix(base, path.Ext(base)))
}

// idf is BM25's inverse document frequency over units; a term no unit states gets the largest.
func (c *corpus) idf(t string) float64 {
	if v, ok := c.idfCache[t]; ok {
		return v
	}
	n := float64(len(c.units))
	df := float64(c.df[t])
	v := math.Log(1 + (n-df+0.5)/(df+0.5))
	c.idfCache[t] = v
	return v
}

// scored is a unit's fit to a question.
type scored struct {
	U     int
	Score float64
}

// scorer holds a question's term weights.
type scorer struct {
	c     *corpus
	q     query
	w     map[string]float64
	total float64
	attr  []string // attributeWords(q), built once: score needs them for every unit
}

func (c *corpus) scorer(q query) *scorer {
	s := &scorer{c: c, q: q, w: map[string]float64{}, attr: attributeWords(q)}
	for _, t := range q.Terms {
		// A word with synonyms weighs as much as its commonest form in the sources: "longer" is
		// as rare as "grew" or "more", not as rare as a word no source uses.
		w := c.idf(t)
		for _, a := range q.Syn[t] {
			if c.df[a] > 0 {
				w = math.Min(w, c.idf(a))
			}
		}
		s.w[t] = w
		s.total += w
	}
	return s
}

// match is how a unit states a question term: itself (1) or a synonym (synonymWeight), a unit its measure is
// stated in (0.5), in its context (contextWeight), or not at all (0).
func (s *scorer) match(u int, t string) float64 {
	c := s.c
	if c.ownSet[u][t] {
		return 1
	}
	for _, a := range s.q.Syn[t] {
		if c.words[u][a] {
			return synonymWeight
		}
	}
	if c.ctx[u][t] {
		return contextWeight
	}
	for _, a := range s.q.Syn[t] {
		if c.ctx[u][a] {
			return contextWeight
		}
	}
	for _, a := range s.q.Units[t] {
		if c.words[u][a] {
			return 0.5
		}
	}
	return 0
}

// synonymWeight: a word of the same family is good evidence, the question's own word better.
const synonymWeight = 0.9

// states: the unit itself states the term, a synonym or a unit of it.
func (s *scorer) states(u int, t string) bool {
	m := s.match(u, t)
	return m == 1 || m == synonymWeight || m == 0.5
}

// coverage is the weighted share of the question's terms a unit and its context state.
func (s *scorer) coverage(u int) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.q.Terms { // in order: sums must not depend on map order
		got += s.w[t] * s.match(u, t)
	}
	return got / s.total
}

// eligible: the unit's document mentions every name, the unit or its context every number, and
// the unit itself what is asked about (or, for "what share"-type questions, a value of that kind).
func (s *scorer) eligible(u int, needAttribute bool) bool {
	c, q := s.c, s.q
	for _, n := range q.Names {
		if !c.docTerms[c.units[u].Doc][n] {
			return false
		}
	}
	for _, n := range q.Numbers {
		if !c.nums[u][n] {
			return false
		}
	}
	// A table row may be about its attribute through its caption ("median wait, in weeks").
	row := c.units[u].Kind == unitRow
	if needAttribute && len(q.Attribute) > 0 && !slices.ContainsFunc(q.Attribute, func(t string) bool { return s.states(u, t) || (row && s.match(u, t) > 0) }) {
		return false
	}
	if q.AttrType && needAttribute && !q.Type.satisfies(c.units[u].Text) {
		return false
	}
	// Two words are not an answer, unless a "Label: value" line or a table row.
	if un := c.units[u]; un.Kind != unitField && un.Kind != unitRow && len(strings.Fields(un.Text)) < 3 {
		return false
	}
	// It must state something of the question itself, not only sit under the right heading.
	return slices.ContainsFunc(q.Terms, func(t string) bool { return s.states(u, t) }) || (q.AttrType && q.Type.satisfies(c.units[u].Text))
}

// score is coverage, halved when the unit lacks the kind of value asked for, and lowered when its
// figures stand apart from what is asked about ("4.3 MWh battery" answers "how large is the
// battery"; "two diesel ferries ... battery-electric vessels" does not).
func (s *scorer) score(u int) float64 {
	v := s.coverage(u)
	un := s.c.units[u]
	switch {
	case s.q.Type == typeAny:
	case !s.q.Type.satisfies(un.Text):
		v *= typeMismatch
	case (s.q.Type == typeNumber || s.q.Type == typeMoney) && len(s.q.Attribute) > 0 && un.Kind != unitRow:
		switch near := valueNear(un.Text, s.attr); {
		case near == 0:
			v *= valueApart
		case s.q.Count && near > 2:
			v *= countApart // "adults aged 60" does not count people as "24,966 participants" does
		}
	}
	return v
}

// countApart weighs a unit whose figure is near, but does not count, what a "how many" asks about.
const countApart = 0.75

// attributeWords are the stems that state what is asked about: its terms, their synonyms and units.
func attributeWords(q query) []string {
	var out []string
	for _, t := range q.Attribute {
		out = append(append(append(out, t), q.Syn[t]...), q.Units[t]...)
	}
	return out
}

// valueApart weighs a unit whose figures are not near the words of what is asked about.
const valueApart = 0.7

// valueNear is how closely a figure (not a bare year) precedes or follows one of the terms:
// 1 when it directly counts it ("742 homes", "1.2 million visits"), up to 5 words apart, 0 when
// none is that near.
func valueNear(text string, attribute []string) int {
	toks := strings.Fields(text)
	var nums, attrs []int
	for i, tok := range toks {
		w := strings.Trim(tok, `.,;:()"'“”’`)
		if (reDigits.MatchString(w) && !isYear(w)) || reNumberWord.MatchString(w) {
			nums = append(nums, i)
		}
		for _, t := range wordStems(tok) {
			if slices.Contains(attribute, t) {
				attrs = append(attrs, i)
			}
		}
	}
	best := 0
	for _, n := range nums {
		for _, a := range attrs {
			d := a - n // positive: the term follows the figure
			switch {
			case d >= 1 && d <= 2:
				return 1
			case d <= 5 && d >= -5 && d != 0:
				best = 3
			}
		}
	}
	return best
}

// rank scores the eligible units of the allowed documents, best first (ties: source order).
func (s *scorer) rank(allowed func(u int) bool) []scored {
	var out []scored
	for u := range s.c.units {
		if allowed != nil && !allowed(u) {
			continue
		}
		if !s.eligible(u, true) {
			continue
		}
		if v := s.score(u); v > 0 {
			out = append(out, scored{u, v})
		}
	}
	// Ties go to the unit that says more (up to thirty words), then to source order.
	said := func(u int) int { return min(len(strings.Fields(s.c.units[u].Text)), 30) }
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case said(a.U) != said(b.U):
			return said(b.U) - said(a.U)
		}
		return a.U - b.U
	})
	return out
}

// absent are the question's terms that no source states at all, in any of their words.
func (s *scorer) absent() []string {
	var out []string
	for _, t := range s.q.Terms {
		if !s.inSources(t) {
			out = append(out, t)
		}
	}
	return out
}

// inSources: some document states the term or a synonym.
func (s *scorer) inSources(t string) bool {
	for d := range s.c.docs {
		if s.c.docTerms[d][t] {
			return true
		}
		for _, a := range s.q.Syn[t] {
			if s.c.docTerms[d][a] {
				return true
			}
		}
	}
	return false
}
