package extractive

import (
	"slices"

	"github.com/researchd/researchd/engine/nlp"
)

// Features that read word meaning (WordNet relatives and word vectors, engine/nlp) and what a
// unit's document states elsewhere but the unit does not.

// relatedCoverage is the weight of the question's terms that neither the unit nor its context
// states, but the unit states a word related to (nlp.Related), over the question's weight.
func (s *scorer) relatedCoverage(u int) float64 {
	return s.unmatchedShare(u, func(t string) float64 { return flag(s.relatedIn(u, t)) })
}

// unmatchedShare is the weight of the question's terms that neither the unit nor its context
// states, each counted by credit (0 to 1), over the question's weight.
func (s *scorer) unmatchedShare(u int, credit func(t string) float64) float64 {
	if s.total == 0 {
		return 0
	}
	got := 0.0
	for _, t := range s.q.Terms {
		if s.match(u, t) == 0 {
			got += s.w[t] * credit(t)
		}
	}
	return got / s.total
}

// unsupported is the weight of the question's terms the unit does not state in any way (itself, its
// context, a relative or a word of similar meaning) although its document states them elsewhere,
// and no other document states, over the question's weight: the unit's document speaks of them,
// but not here (a question written from a sentence with a detail changed reads like that). A word
// no source uses does not count: questions are worded unlike their sources ("brief me", "try").
// Another document may supply a term: multi-document answers combine two sources.
func (s *scorer) unsupported(u int) float64 {
	if s.total == 0 {
		return 0
	}
	doc := s.c.units[u].Doc
	got := 0.0
	for _, t := range s.q.Terms {
		if s.match(u, t) > 0 || s.relatedIn(u, t) || s.similarIn(u, t) >= minSimilarity {
			continue
		}
		if s.c.docTerms[doc][t] && s.onlyIn(doc, t) {
			got += s.w[t]
		}
	}
	return got / s.total
}

// onlyIn: no document but d states term t.
func (s *scorer) onlyIn(d int, t string) bool {
	for o, terms := range s.c.docTerms {
		if o != d && terms[t] {
			return false
		}
	}
	return true
}

// relatedIn: the unit states a relative of term t (nlp.Related).
func (s *scorer) relatedIn(u int, t string) bool {
	return slices.ContainsFunc(nlp.Related(t), func(r string) bool { return s.c.ownSet[u][r] })
}

// similarIn is the best cosine between term t and a term of the unit.
func (s *scorer) similarIn(u int, t string) float64 {
	best := 0.0
	for _, o := range s.c.own[u] {
		if cos, ok := nlp.Similarity(t, o); ok && cos > best {
			best = cos
		}
	}
	return best
}

// similarCoverage is like relatedCoverage for words of similar meaning by word vectors: each term
// neither the unit nor its context states counts its weight times the best cosine (at least 0.5)
// to a term of the unit.
func (s *scorer) similarCoverage(u int) float64 {
	return s.unmatchedShare(u, func(t string) float64 {
		if best := s.similarIn(u, t); best >= minSimilarity {
			return best
		}
		return 0
	})
}

// minSimilarity: below it, two words' vectors say little (unrelated words of a long sentence
// reach 0.3–0.4).
const minSimilarity = 0.5

// vectorCosine compares what the question and the unit are about as wholes: the cosine of their
// terms' idf-weighted mean vectors.
// q is the question's vector, computed once per question.
func (s *scorer) vectorCosine(u int, q []float32) float64 {
	d := s.meanVector(s.c.own[u])
	if q == nil || d == nil {
		return 0
	}
	return nlp.Cosine(q, d)
}

// meanVector is the idf-weighted sum of the terms' vectors (nil when none has one).
func (s *scorer) meanVector(terms []string) []float32 {
	var sum []float32
	for _, t := range terms {
		v := nlp.Vector(t)
		if v == nil {
			continue
		}
		if sum == nil {
			sum = make([]float32, len(v))
		}
		w := float32(s.c.idf(t))
		for i := range v {
			sum[i] += w * v[i]
		}
	}
	return sum
}
