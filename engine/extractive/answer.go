package extractive

import (
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// The corpus: every unit (sentence, list item, field line, table row) of the sources read, with
// the statistics retrieval scores by. Coverage is the share of a question's term weight (idf over
// units; a word no source contains weighs the most) that a unit states itself, plus, at
// contextWeight, what its context states (its section heading, document title and file name, the
// sentence before it, a table's caption). Retrieval reads candidates by coverage (rank.go); the
// answer model decides among them (features.go, model.go). A table comparison, and a field of
// structured output found by its own words, needs relevanceFloor of coverage.
const (
	contextWeight  = 0.7
	relevanceFloor = 0.5
)

// corpus is the units of a run's documents and the statistics the answer finder scores with.
type corpus struct {
	docs   []extract.Document
	titles []string
	// headings are the documents' own titles, without their bylines.
	headings []string
	bylines  map[int]bool // units that are their document's byline
	// openingFields are the field lines a document opens with: part of its byline, and answers
	// only to what their labels name.
	openingFields map[int]bool
	units         []extract.Unit
	tables        []extract.Table
	own           [][]string        // per unit: distinct terms it states (a row: its cells and header)
	seqs          [][]string        // per unit: its terms in order, repeats kept (bigrams, proximity)
	ownSet        []map[string]bool // the same, as a set
	words         []map[string]bool // per unit: the stems of all its words, stopwords included
	ctx           []map[string]bool // per unit: its context's terms
	docTerms      []map[string]bool // per document: every term
	docWords      [][]string        // per document: the stems of all its words in order (names.go)
	docNums       []map[string]bool // per document: every number
	nums          []map[string]bool // per unit: numbers in it and its context
	df            map[string]int    // units stating each term
	docFreq       map[string]int    // documents stating each term (in any of their words)
	rel           relevanceCounts   // term counts for document and paragraph relevance
	sections      []section         // units grouped by heading (sections.go)
	// titleTerms per document: the terms of its title and file name (what the whole is about)
	titleTerms []map[string]bool
	idfCache   map[string]float64
	// vocab is the sources' words as written, for respelling a question (respell.go); built on
	// first use and shared by the runs that share the corpus.
	vocab func() *spellIndex
}

func newCorpus(docs []extract.Document) *corpus {
	c := &corpus{docs: docs, df: map[string]int{}, idfCache: map[string]float64{}, bylines: map[int]bool{},
		openingFields: map[int]bool{}}
	c.vocab = sync.OnceValue(c.buildSpellIndex)
	sc := nlp.StemCache{}
	para := 0
	for d, doc := range docs {
		p := extract.ParseDocument(d, doc, &para)
		off, toff := len(c.units), len(c.tables)
		for _, u := range p.Units {
			if u.Prev >= 0 {
				u.Prev += off
			}
			if u.Table >= 0 {
				u.Table += toff
			}
			c.units = append(c.units, u)
		}
		for _, t := range p.Tables {
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
		by, lines, fields := bylineAt(doc.Lines)
		c.titles = append(c.titles, strings.TrimSpace(p.Title+" "+by))
		c.headings = append(c.headings, p.Title)
		for u := off; u < len(c.units); u++ {
			if slices.Contains(lines, c.units[u].Start) {
				c.bylines[u] = true // context of every unit, not a statement to quote
			}
			if slices.Contains(fields, c.units[u].Start) {
				c.openingFields[u] = true
			}
		}
		words, all := docWordsOf(strings.Join(doc.Lines, "\n")+" "+p.Title+" "+path.Base(doc.Path), sc)
		c.docWords = append(c.docWords, words)
		c.docTerms = append(c.docTerms, all)
		c.docNums = append(c.docNums, numbersIn(strings.Join(doc.Lines, "\n")))
	}
	fields := sectionFields{doc: -1}
	for i, u := range c.units {
		text := u.Text
		var ctx strings.Builder
		ctx.WriteString(u.Section + " " + c.titles[u.Doc] + " " + fileWords(c.docs[u.Doc].Path) + " " + fields.of(u))
		if u.Parent != "" && u.Parent != c.headings[u.Doc] {
			ctx.WriteString(" " + u.Parent) // "Our new lunch ordering system" over "Why are we changing?"
		}
		if u.Table >= 0 {
			t := c.tables[u.Table]
			text += " " + strings.Join(t.Header, " ")
			ctx.WriteString(" " + t.Title + " " + t.Caption)
		}
		switch {
		case u.Kind == extract.UnitField:
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
		seq := nlp.TermsBy(text, sc.Stem)
		c.seqs = append(c.seqs, seq)
		own := nlp.Uniq(slices.Clone(seq))
		set := map[string]bool{}
		for _, t := range own {
			set[t] = true
			c.df[t]++
		}
		cset := map[string]bool{}
		for _, t := range nlp.TermsBy(ctx.String(), sc.Stem) {
			if !set[t] {
				cset[t] = true
			}
		}
		nums := numbersIn(text + " " + ctx.String())
		all := map[string]bool{}
		for _, w := range wordStemsBy(text, sc.Stem) {
			all[w] = true
		}
		c.words = append(c.words, all)
		c.own = append(c.own, own)
		c.ownSet = append(c.ownSet, set)
		c.ctx = append(c.ctx, cset)
		c.nums = append(c.nums, nums)
	}
	c.docFreq = map[string]int{}
	for _, terms := range c.docTerms {
		for t := range terms {
			c.docFreq[t]++
		}
	}
	c.rel = c.countRelevance()
	c.sections = sectionsOf(c)
	for d, doc := range c.docs {
		tt := map[string]bool{}
		for _, t := range nlp.Terms(c.titles[d] + " " + fileWords(doc.Path)) {
			tt[t] = true
		}
		c.titleTerms = append(c.titleTerms, tt)
	}
	return c
}

func (c *corpus) firstOfPara(u int) int {
	for c.units[u].Prev >= 0 {
		u = c.units[u].Prev
	}
	return u
}

// paragraph is the units of u's paragraph, in order.
func (c *corpus) paragraph(u int) []int {
	first, last := u, u
	for first > 0 && c.units[first-1].Para == c.units[u].Para {
		first--
	}
	for last+1 < len(c.units) && c.units[last+1].Para == c.units[u].Para {
		last++
	}
	out := make([]int, 0, last-first+1)
	for v := first; v <= last; v++ {
		out = append(out, v)
	}
	return out
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
	v := nlp.BM25IDF(float64(len(c.units)), float64(c.df[t]))
	c.idfCache[t] = v
	return v
}

// scored is a unit's fit to a question.
type scored struct {
	U     int
	Score float64
	X     []float64 // the features it was scored on (answer candidates only)
	Raw   float64   // the ranker's score; Score is then its calibrated probability
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
		// A word with synonyms weighs as much as its commonest form in the sources: "longer" is
		// as rare as "grew" or "more", not as rare as a word no source uses.
		w := c.idf(t)
		for _, a := range q.Syn[t] {
			if c.df[a] > 0 {
				w = math.Min(w, c.idf(a))
			}
		}
		if q.premise[t] {
			w *= premiseWeight
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

// byline is a document's first line of text when it says whose the document is or what it applies
// to, as a line of fragments rather than a sentence ("Hollin Analytics · applies to all employees
// from 1 February 2026 · owner: Finance", "By Ana Ruiz | 4 May 2026"): what it names is what the
// whole document is about, as its title is. A first sentence is not: it states one thing among
// others.
func byline(lines []string) string {
	text, _, _ := bylineAt(lines)
	return text
}

// bylineAt is byline and the numbers (from 1) of its lines: up to three lines of fragments, an
// author's line ("**By Harriet Olusanya, Local Democracy Reporter**") or a dateline ("*Wendleford
// Courier · Thursday 12 March 2026*"), or else the field lines the document opens with (fields:
// "**Property:** Flat 4B" is a unit of its own too, answering where the flat is).
func bylineAt(lines []string) (text string, at, fields []int) {
	var parts []string
	from := titleLine(lines) + 1
	for i, l := range lines {
		if i < from {
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || (len(parts) == 0 && (strings.HasPrefix(t, "#") || strings.Trim(t, "=-") == "")) {
			continue // blank, a heading or a heading's underline
		}
		if u := extract.Unemphasised(t); len(parts) < 3 && (isByline(u) || reAuthorLine.MatchString(u) || isDateline(u)) {
			parts, at = append(parts, t), append(at, i+1)
			continue
		}
		if len(parts) == 0 {
			var ks []int
			text, ks = openingFields(lines[i:])
			for _, k := range ks {
				fields = append(fields, i+k+1)
			}
			return text, nil, fields
		}
		break
	}
	return strings.Join(parts, " · "), at, nil
}

// titleLine is the index of a document's main heading ("# …") when only short lines stand above
// it (a web page's kicker, "Exhibition"), else -1: its byline follows the heading.
func titleLine(lines []string) int {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "# "):
			return i
		case len(strings.Fields(t)) > 4 || strings.HasPrefix(t, "#"):
			return -1
		}
	}
	return -1
}

// reAuthorLine is a line that names a document's author: "By Ana Ruiz", "By Harriet Olusanya,
// Local Democracy Reporter".
var reAuthorLine = regexp.MustCompile(`^By\s+\p{Lu}[^.!?]{0,80}$`)

// isDateline: a short line that gives a date ("Thursday 12 March 2026", "Published 3 May 2026").
func isDateline(t string) bool {
	_, ok := findDate(t)
	return ok && len(strings.Fields(t)) <= 8 && !strings.ContainsAny(t[len(t)-1:], ".!?")
}

// maxOpeningFields is how many field lines opening a document are read as its byline.
const maxOpeningFields = 8

// openingFields are the field lines a document opens with, as a line of fragments: a tenancy
// agreement's "**Property:** Flat 4B, Wrenfield Court" and "**Tenants:** …" say what the whole
// agreement, its schedule too, is about. "" when the document opens otherwise.
func openingFields(lines []string) (string, []int) {
	var fields []string
	var at []int
	for k, l := range lines {
		if strings.TrimSpace(l) == "" && len(fields) > 0 && k+1 < len(lines) && extract.IsFieldLine(lines[k+1]) {
			continue // "**Document number:** …", a blank line, "**Version:** 3.1": one block of fields
		}
		if len(fields) == maxOpeningFields || !extract.IsFieldLine(l) || len(strings.Fields(l)) > maxFieldWords {
			break
		}
		if reMessageHeader.MatchString(l) {
			return "", nil // an e-mail's header is its own message's, not the quoted ones' below it
		}
		fields, at = append(fields, strings.TrimSpace(l)), append(at, k)
	}
	return strings.Join(fields, " · "), at
}

// reMessageHeader is a field line of an e-mail's header.
var reMessageHeader = regexp.MustCompile(`(?i)^\s*(?:from|to|cc|subject|sent):`)

// isByline: a line of at most 30 words, fragments separated by "·", "|" or "•", neither ending as a
// sentence does nor opening as a table row, a list item or a quote does.
func isByline(t string) bool {
	return !strings.ContainsAny(t[len(t)-1:], ".!?") && !strings.ContainsAny(t[:1], "|-*+>") && len(strings.Fields(t)) <= 30 &&
		(strings.Contains(t, "·") || strings.Contains(t, " | ") || strings.Contains(t, " • "))
}

// sectionFields tracks, over units in document order, the field lines that open a section ("From:
// Tomas Lindqvist", "Date: 13 October 2026" under "-----Original message-----"; "Present: …"
// under a meeting's title): they say who wrote or said, and when, what the section's sentences
// state, so they are those sentences' context.
type sectionFields struct {
	doc     int
	section string
	opening bool // still in the field lines that open the section
	text    string
}

// maxFieldWords is the longest opening field line taken as context: a paragraph of prose that only
// opens like one ("The Legend of Zelda: Twilight Princess (Japanese: …) is an action-adventure
// game …") is no field of the section.
const maxFieldWords = 25

// of is the opening fields of u's section, for a unit after them ("" for the fields themselves).
func (f *sectionFields) of(u extract.Unit) string {
	if u.Doc != f.doc || u.Section != f.section {
		*f = sectionFields{doc: u.Doc, section: u.Section, opening: true}
	}
	if f.opening && u.Kind == extract.UnitField && len(strings.Fields(u.Text)) <= maxFieldWords {
		f.text += " " + u.Text
		return ""
	}
	f.opening = false
	return f.text
}
