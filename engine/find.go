package engine

import (
	"fmt"
	"slices"
	"strings"
)

// A supporting quote scores at least supportShare of the answer, otherDocShare from a document
// the answer is not from.
const (
	supportShare  = 0.6
	otherDocShare = 0.75
)

// finding is what the sources say about one sub-question.
type finding struct {
	Sub     subQuestion
	Q       query
	Answer  []int       // units that state the answer, best first
	Compare *comparison // a table comparison that answers it
	Support []int       // further units quoted as evidence
	Missing string      // why it is not answered, naming what the sources lack
	Read    []int       // documents read closely for it, best first
	Best    float64     // the best unit's score
}

func (f finding) answered() bool { return len(f.Answer) > 0 || f.Compare != nil }

// findOptions is how far one search goes (set by effort).
type findOptions struct {
	Sources int              // documents read closely: evidence comes from the best ones only
	Answers int              // answer sentences at most (the best; for an open question, the next of its paragraph too)
	Support int              // further quotes at most
	Skip    func(u int) bool // units not to quote again (already quoted in this or a prior report)
}

// find answers one sub-question from the corpus.
func (c *corpus) find(sub subQuestion, o findOptions) finding {
	q := analyze(sub.Text)
	q.Terms = uniq(append(append(q.Terms, sub.Carry...), sub.Subject...))
	if q.measure != "" && c.df[q.measure] > 0 {
		q.Terms = uniq(append(q.Terms, q.measure)) // "depth" when the sources say "Depth: 12 km"
	}
	s := c.scorer(q)
	ranked := s.rank(func(u int) bool { return (o.Skip == nil || !o.Skip(u)) && c.mentions(u, sub.Subject) })
	f := finding{Sub: sub, Q: q}
	if len(ranked) > 0 {
		f.Best = ranked[0].Score
	}
	// Documents in order of their best unit; only the first o.Sources are read closely.
	seen := map[int]bool{}
	for _, r := range ranked {
		if d := c.units[r.U].Doc; !seen[d] && len(f.Read) < o.Sources {
			seen[d] = true
			f.Read = append(f.Read, d)
		}
	}
	read := func(d int) bool { return seen[d] }
	if cmp, ok := s.compare(nil); ok {
		f.Compare = &cmp
		if !seen[c.tables[cmp.Table].Doc] {
			f.Read = append([]int{c.tables[cmp.Table].Doc}, f.Read...)
			seen[c.tables[cmp.Table].Doc] = true
		}
	}
	if f.Compare == nil && f.Best >= relevanceFloor {
		best := ranked[0].U
		f.Answer = []int{best}
		if next := best + 1; q.Open && len(f.Answer) < o.Answers && next < len(c.units) && c.units[next].Prev == best &&
			(o.Skip == nil || !o.Skip(next)) {
			f.Answer = append(f.Answer, next)
		}
	}
	if !f.answered() {
		f.Missing = s.missing(ranked)
		return f
	}
	quoted := map[string]bool{}
	for _, u := range f.Answer {
		quoted[c.units[u].Text] = true
	}
	// Further evidence must be near the answer's strength, and nearer still from another document.
	answerDocs := map[int]bool{}
	for _, u := range f.Answer {
		answerDocs[c.units[u].Doc] = true
	}
	if f.Compare != nil {
		answerDocs[c.tables[f.Compare.Table].Doc] = true
	}
	top := f.Best
	if f.Compare != nil {
		top = max(top, f.Compare.Score)
	}
	for _, r := range ranked {
		if len(f.Support) >= o.Support || r.Score < max(relevanceFloor, supportShare*top) {
			break
		}
		u := c.units[r.U]
		if slices.Contains(f.Answer, r.U) || quoted[u.Text] || !read(u.Doc) {
			continue
		}
		if !answerDocs[u.Doc] && r.Score < otherDocShare*top {
			continue
		}
		if f.Compare != nil && u.Table == f.Compare.Table {
			continue // the comparison quotes the table's rows it needs
		}
		quoted[u.Text] = true
		f.Support = append(f.Support, r.U)
	}
	return f
}

// missing says, in the question's own words, what keeps the sources from answering.
func (s *scorer) missing(ranked []scored) string {
	q := s.q
	var parts []string
	if absent := s.absent(); len(absent) > 0 {
		parts = append(parts, "no source mentions "+quoteList(q.missingWords(absent)))
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
	if len(parts) == 0 && len(q.Attribute) > 0 {
		parts = append(parts, "no passage states the "+strings.Join(q.missingWords(q.Attribute), " ")+" asked about")
	}
	if len(parts) == 0 {
		if len(ranked) == 0 {
			parts = append(parts, "no passage matches the question")
		} else {
			parts = append(parts, fmt.Sprintf("the closest passage (in `%s`) covers too little of the question", s.c.docs[s.c.units[ranked[0].U].Doc].Path))
		}
	}
	return capitalize(strings.Join(parts, "; ")) + "."
}

// namesIn: document d mentions every name of the question.
func (s *scorer) namesIn(d int) bool {
	for _, n := range s.q.Names {
		if !s.c.docTerms[d][n] {
			return false
		}
	}
	return true
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
