package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// Features that read word meaning (WordNet relatives and word vectors, engine/nlp) and what a
// unit's document states elsewhere but the unit does not.

// meaning measures, for the question's terms that neither the unit nor its context states, what the
// unit says of them by meaning, each as a weight over the question's weight:
//   - related: terms the unit states by a relative (nlp.Related: "payment" for "pay");
//   - similar: terms with a word of similar meaning in the unit by word vectors, each counted by its
//     best cosine (at least minSimilarity);
//   - substitute: terms with no relative in the unit but one of their nearest words by word vectors
//     (nlp.Neighbours): those are mostly words of the same kind ("rain" of "snow", "fourth" of
//     "eighth", "sequel" of "prequel"), another thing of the kind rather than the thing asked about;
//   - unsupported: terms the unit states in no way although its document states them elsewhere,
//     and no other document states: the unit's document speaks of them, but not here (a question
//     written from a sentence with a detail changed reads like that). A word no source uses does
//     not count: questions are worded unlike their sources ("brief me", "try"). Another document
//     may supply a term: multi-document answers combine two sources.
//
// Each term is looked up once: the cosines are the costly part of a candidate's features.
func (s *scorer) meaning(u int) (related, similar, unsupported, substitute float64) {
	if s.total == 0 {
		return 0, 0, 0, 0
	}
	doc := s.c.units[u].Doc
	for _, t := range s.q.Terms {
		if s.match(u, t) != 0 {
			continue
		}
		rel := s.relatedIn(u, t)
		sim := s.similarIn(u, t)
		if rel {
			related += s.w[t]
		}
		if sim >= minSimilarity {
			similar += s.w[t] * sim
			if !rel && s.neighbourIn(u, t) {
				substitute += s.w[t]
			}
		} else if !rel && s.c.docTerms[doc][t] && s.onlyIn(doc, t) {
			unsupported += s.w[t]
		}
	}
	return related / s.total, similar / s.total, unsupported / s.total, substitute / s.total
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

// derived are the WordNet relatives of term t that are a form of the same word, one stem opening
// the other ("complain" of "complaint", "pay" of "payment"): no other sense of it ("ailment").
func derived(t string) []string {
	var out []string
	for _, r := range nlp.Related(t) {
		short, long := t, r
		if len(r) < len(t) {
			short, long = r, t
		}
		if len(short) >= 3 && strings.HasPrefix(long, short) {
			out = append(out, r)
		}
	}
	return out
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

// neighbourIn: the unit states one of term t's nearest words by word vectors that the question
// does not state itself ("temperature" is no other thing in place of "Celsius" when the question
// asks about temperatures in Celsius).
func (s *scorer) neighbourIn(u int, t string) bool {
	return slices.ContainsFunc(s.c.own[u], func(o string) bool { return nlp.Neighbouring(t, o) && !slices.Contains(s.q.Terms, o) })
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
