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
	own      [][]string          // per unit: distinct terms it states (a row: its cells and header)
	ownSet   []map[string]bool   // the same, as a set
	ctx      []map[string]bool   // per unit: its context's terms
	docTerms []map[string]bool   // per document: every term
	docNums  []map[string]bool   // per document: every number
	nums     []map[string]bool   // per unit: numbers in it and its context
	df       map[string]int      // units stating each term
	idfCache map[string]float64
}

func newCorpus(docs []document) *corpus {
	c := &corpus{docs: docs, df: map[string]int{}, idfCache: map[string]float64{}}
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
		for _, w := range terms(strings.Join(doc.Lines, "\n") + " " + p.title + " " + path.Base(doc.Path)) {
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
		if u.Prev >= 0 {
			ctx.WriteString(" " + c.units[u.Prev].Text)
			if first := c.firstOfPara(u.Prev); first != u.Prev {
				ctx.WriteString(" " + c.units[first].Text)
			}
		}
		own := uniq(terms(text))
		set := map[string]bool{}
		for _, t := range own {
			set[t] = true
			c.df[t]++
		}
		cset := map[string]bool{}
		for _, t := range terms(ctx.String()) {
			if !set[t] {
				cset[t] = true
			}
		}
		nums := numbersIn(text + " " + ctx.String())
		c.own = append(c.own, own)
		c.ownSet = append(c.ownSet, set)
		c.ctx = append(c.ctx, cset)
		c.nums = append(c.nums, nums)
		_ = i
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
}

func (c *corpus) scorer(q query) *scorer {
	s := &scorer{c: c, q: q, w: map[string]float64{}}
	for _, t := range q.Terms {
		s.w[t] = c.idf(t)
		s.total += s.w[t]
	}
	return s
}

// coverage is the weighted share of the question's terms a unit and its context state.
func (s *scorer) coverage(u int) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for t, w := range s.w {
		switch {
		case s.c.ownSet[u][t]:
			got += w
		case s.c.ctx[u][t]:
			got += contextWeight * w
		}
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
	if needAttribute && len(q.Attribute) > 0 && !slices.ContainsFunc(q.Attribute, func(t string) bool { return c.ownSet[u][t] }) {
		return false
	}
	if q.AttrType && needAttribute && !q.Type.satisfies(c.units[u].Text) {
		return false
	}
	// It must state something of the question itself, not only sit under the right heading.
	return slices.ContainsFunc(q.Terms, func(t string) bool { return c.ownSet[u][t] }) || (q.AttrType && q.Type.satisfies(c.units[u].Text))
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
	case (s.q.Type == typeNumber || s.q.Type == typeMoney) && len(s.q.Attribute) > 0 && un.Kind != unitRow && !valueNear(un.Text, s.q.Attribute):
		v *= valueApart
	}
	return v
}

// valueApart weighs a unit whose figures are not near the words of what is asked about.
const valueApart = 0.7

// valueNear: a figure (not a bare year) stands within five words of one of the terms.
func valueNear(text string, attribute []string) bool {
	toks := strings.Fields(text)
	var nums, attrs []int
	for i, tok := range toks {
		w := strings.Trim(tok, `.,;:()"'“”’`)
		if (reDigits.MatchString(w) && !isYear(w)) || reNumberWord.MatchString(w) {
			nums = append(nums, i)
		}
		for _, t := range terms(tok) {
			if slices.Contains(attribute, t) {
				attrs = append(attrs, i)
			}
		}
	}
	for _, n := range nums {
		for _, a := range attrs {
			if n-a <= 5 && a-n <= 5 {
				return true
			}
		}
	}
	return false
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
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.U - b.U
	})
	return out
}

// absent are the question's terms that no source states at all, and the names no document has.
func (s *scorer) absent() []string {
	var out []string
	for _, t := range s.q.Terms {
		found := false
		for d := range s.c.docs {
			if s.c.docTerms[d][t] {
				found = true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}
