package extractive

import "github.com/researchd/researchd/engine/nlp"

// Document and paragraph relevance: BM25 over whole documents and over paragraphs (their units'
// terms together), for the answer model's features (retrieval finds the passage, then the
// sentence). The term counts do not depend on the question, so they are counted once per corpus
// (which the engine keeps across runs) and each question only sums over its own terms.

// relevanceCounts are a corpus's term counts by document and by paragraph.
type relevanceCounts struct {
	docTF   []map[string]int // per document: units stating each term
	docLen  []int            // per document: distinct terms of its units, summed
	docDF   map[string]int   // documents whose units or title state each term
	paraTF  map[int]map[string]int
	paraLen map[int]int
	paraDF  map[string]int
}

func (c *corpus) countRelevance() relevanceCounts {
	rc := relevanceCounts{docTF: make([]map[string]int, len(c.docs)), docLen: make([]int, len(c.docs)),
		docDF: map[string]int{}, paraTF: map[int]map[string]int{}, paraLen: map[int]int{}, paraDF: map[string]int{}}
	for d := range rc.docTF {
		rc.docTF[d] = map[string]int{}
	}
	for u, un := range c.units {
		for _, t := range c.own[u] {
			rc.docTF[un.Doc][t]++
		}
		rc.docLen[un.Doc] += len(c.own[u])
		if rc.paraTF[un.Para] == nil {
			rc.paraTF[un.Para] = map[string]int{}
		}
		for _, t := range c.seqs[u] {
			if rc.paraTF[un.Para][t] == 0 {
				rc.paraDF[t]++
			}
			rc.paraTF[un.Para][t]++
		}
		rc.paraLen[un.Para] += len(c.seqs[u])
	}
	for d := range c.docs {
		for t := range c.docTerms[d] {
			rc.docDF[t]++
		}
		for t := range rc.docTF[d] {
			if !c.docTerms[d][t] {
				rc.docDF[t]++
			}
		}
	}
	return rc
}

// docRelevance is each document's BM25 score for the question (over its units' terms), divided by
// the best document's.
func (s *scorer) docRelevance() []float64 {
	c, rc := s.c, &s.c.rel
	out := make([]float64, len(c.docs))
	if len(c.docs) == 1 {
		out[0] = 1
		return out
	}
	total := 0
	for _, l := range rc.docLen {
		total += l
	}
	avg := max(float64(total)/float64(len(c.docs)), 1)
	n := float64(len(c.docs))
	for d := range c.docs {
		for _, t := range s.q.Terms {
			f := float64(rc.docTF[d][t])
			if f == 0 && c.docTerms[d][t] {
				f = 1 // in the title or file name
			}
			if f > 0 {
				out[d] += nlp.BM25(nlp.BM25IDF(n, float64(rc.docDF[t])), f, float64(rc.docLen[d]), avg)
			}
		}
	}
	return overBest(out)
}

// paragraphRelevance is each paragraph's BM25 score for the question, divided by the best
// paragraph's.
func (s *scorer) paragraphRelevance() map[int]float64 {
	rc := &s.c.rel
	total := 0
	for _, l := range rc.paraLen {
		total += l
	}
	n := float64(len(rc.paraLen))
	avg := max(float64(total)/n, 1)
	out := make(map[int]float64, len(rc.paraTF))
	best := 0.0
	for p, tf := range rc.paraTF {
		v := 0.0
		for _, t := range s.q.Terms { // in the question's order: a sum must not depend on map order
			if f := float64(tf[t]); f > 0 {
				v += nlp.BM25(nlp.BM25IDF(n, float64(rc.paraDF[t])), f, float64(rc.paraLen[p]), avg)
			}
		}
		out[p] = v
		best = max(best, v)
	}
	for p := range out {
		if best > 0 {
			out[p] /= best
		}
	}
	return out
}

// overBest divides scores by the largest (when it is positive).
func overBest(xs []float64) []float64 {
	best := 0.0
	for _, x := range xs {
		best = max(best, x)
	}
	if best > 0 {
		for i := range xs {
			xs[i] /= best
		}
	}
	return xs
}
