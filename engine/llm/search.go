package llm

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Passage shaping: a passage is a run of non-blank lines, cut at these sizes so a quote stays
// readable and a citation's line range stays narrow.
const (
	passageMaxLines = 6
	passageMaxChars = 900
)

// passage is a citable span of a document.
type passage struct {
	Doc        int // index into index.docs
	Start, End int // 1-based line numbers, inclusive
	Text       string
}

// index is a BM25 index over passages (Robertson/Spärck Jones, k1=1.2, b=0.75).
type index struct {
	docs     []extract.Document
	passages []passage
	postings map[string][]posting
	length   []int
	avgLen   float64
}

type posting struct{ p, tf int }

// hit is a passage with its score for a query.
type hit struct {
	P     int
	Score float64
}

func newIndex(docs []extract.Document) *index {
	ix := &index{docs: docs, postings: map[string][]posting{}}
	for d, doc := range docs {
		ix.passages = append(ix.passages, splitPassages(d, doc.Lines)...)
	}
	total := 0
	for i, p := range ix.passages {
		ts := nlp.Terms(p.Text)
		ix.length = append(ix.length, len(ts))
		total += len(ts)
		tf := map[string]int{}
		var order []string
		for _, t := range ts {
			if tf[t] == 0 {
				order = append(order, t)
			}
			tf[t]++
		}
		for _, t := range order {
			ix.postings[t] = append(ix.postings[t], posting{i, tf[t]})
		}
	}
	if len(ix.passages) > 0 {
		ix.avgLen = float64(total) / float64(len(ix.passages))
	}
	return ix
}

// splitPassages groups consecutive non-blank lines, cutting groups at passageMaxLines lines or
// passageMaxChars characters; a single over-long line is cut at sentence ends.
func splitPassages(doc int, lines []string) []passage {
	var out []passage
	var cur []string
	start, size := 0, 0
	flush := func(end int) {
		if len(cur) > 0 {
			out = append(out, passage{Doc: doc, Start: start, End: end, Text: strings.Join(cur, "\n")})
		}
		cur, size = nil, 0
	}
	heading := false // cur is a lone heading, carried into the next paragraph
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" {
			if !heading {
				flush(n - 1)
			}
			continue
		}
		if h := extract.HeadingText(line); h != "" {
			// A heading alone is poor evidence (short, so BM25 over-rates it): it opens the passage
			// that follows instead.
			flush(n - 1)
			if !strings.ContainsAny(h[len(h)-1:], ".:?!") {
				h += ":"
			}
			start, cur, size, heading = n, []string{h}, len(h), true
			continue
		}
		if utf8.RuneCountInString(line) > passageMaxChars {
			flush(n - 1)
			heading = false
			for _, chunk := range chunkLine(line) {
				out = append(out, passage{Doc: doc, Start: n, End: n, Text: chunk})
			}
			continue
		}
		if !heading && (len(cur) == passageMaxLines || (len(cur) > 0 && size+len(line) > passageMaxChars)) {
			flush(n - 1)
		}
		heading = false
		if len(cur) == 0 {
			start = n
		}
		cur = append(cur, line)
		size += len(line)
	}
	flush(len(lines))
	return out
}

// chunkLine cuts a long line into pieces of whole sentences, each under passageMaxChars.
func chunkLine(line string) []string {
	var out []string
	var b strings.Builder
	for _, s := range nlp.Sentences(line) {
		if b.Len() > 0 && b.Len()+len(s)+1 > passageMaxChars {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		// A "sentence" longer than a passage (minified text, a table on one line) is cut hard,
		// converting it once (a page of megabytes without a full stop would be quadratic otherwise).
		if utf8.RuneCountInString(s) > passageMaxChars {
			r := []rune(s)
			for len(r) > passageMaxChars {
				out = append(out, string(r[:passageMaxChars]))
				r = r[passageMaxChars:]
			}
			s = string(r)
		}
		b.WriteString(s)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// idf is BM25's inverse document frequency (the +1 form, never negative).
func (ix *index) idf(t string) float64 {
	return nlp.BM25IDF(float64(len(ix.passages)), float64(len(ix.postings[t])))
}

// search ranks passages for the query terms and returns the best k (k <= 0: all) with a positive
// score, best first; ties go to the earlier passage so results are stable. skip, when set, drops
// passages (already cited ones in a continuation).
func (ix *index) search(query []string, k int, skip func(p int) bool) []hit {
	if len(ix.passages) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.passages))
	for _, t := range nlp.Uniq(query) {
		idf := ix.idf(t)
		for _, po := range ix.postings[t] {
			scores[po.p] += nlp.BM25(idf, float64(po.tf), float64(ix.length[po.p]), ix.avgLen)
		}
	}
	var hits []hit
	for p, s := range scores {
		if s > 0 && (skip == nil || !skip(p)) {
			hits = append(hits, hit{p, s})
		}
	}
	sortHits(hits)
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// lead picks, across passages, the sentence that covers the most query weight (the idf of the
// distinct query terms it contains), preferring sentences of at least four words (headings and
// table cells make poor leads); ties go to the earlier passage and sentence.
func (ix *index) lead(ps []int, query []string) (string, int) {
	q := map[string]bool{}
	for _, t := range query {
		q[t] = true
	}
	best, bestP, bestScore, bestLong := "", -1, -1.0, false
	for _, p := range ps {
		for _, s := range nlp.Sentences(ix.passages[p].Text) {
			score := 0.0
			seen := map[string]bool{}
			for _, t := range nlp.Terms(s) {
				if q[t] && !seen[t] {
					seen[t] = true
					score += ix.idf(t)
				}
			}
			long := len(strings.Fields(s)) >= 4
			if (long && !bestLong) || (long == bestLong && score > bestScore) {
				best, bestP, bestScore, bestLong = s, p, score, long
			}
		}
	}
	return best, bestP
}

// requireAny extends skip so that passages containing none of the terms are left out too.
func (ix *index) requireAny(must []string, skip func(int) bool) func(int) bool {
	if len(must) == 0 {
		return skip
	}
	allowed := map[int]bool{}
	for _, t := range must {
		for _, po := range ix.postings[t] {
			allowed[po.p] = true
		}
	}
	return func(p int) bool { return !allowed[p] || (skip != nil && skip(p)) }
}

// containingAll returns the passages that contain every one of the distinct terms want, from the
// postings (none for an empty want), in no particular order.
func (ix *index) containingAll(want []string) []int {
	if len(want) == 0 {
		return nil
	}
	found := map[int]int{}
	for _, t := range want {
		for _, po := range ix.postings[t] {
			found[po.p]++
		}
	}
	var out []int
	for p, n := range found {
		if n == len(want) {
			out = append(out, p)
		}
	}
	return out
}

// cite is the human form of a passage's location: "input_files/a.txt, lines 3–7".
func (ix *index) cite(p int) string {
	ps := ix.passages[p]
	return engine.CiteRange(ix.docs[ps.Doc].Path, ps.Start, ps.End)
}

// sortHits orders hits best first; ties keep passage order, so rankings are deterministic.
func sortHits(hits []hit) {
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), a.P-b.P) })
}
