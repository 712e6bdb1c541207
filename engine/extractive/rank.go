package extractive

import (
	"cmp"
	"slices"
)

// Answer candidates: retrieval reads the units that state any of the question's terms (in
// themselves or their context), in order of idf-weighted coverage; the best k of them are measured
// (features.go) and scored by the answer model (model.go). No question word is required: a unit
// that lacks one scores lower, by as much as the fitted weights say that costs.

// candidates returns the best k units (k <= 0: all that match), scored by the model's probability,
// best first (Raw: the ranker's score, Score: its calibrated probability); allowed, when set,
// filters units. A nil model scores every candidate 0 (training reads the features).
func (s *scorer) candidates(m *AnswerModel, k int, allowed func(u int) bool) []scored {
	st := s.stats()
	pool := make([]int, 0, 64)
	for u := range s.c.units {
		if st.ctxCov[u] > 0 && !s.c.bylines[u] && (allowed == nil || allowed(u)) {
			pool = append(pool, u)
		}
	}
	sortByScore(pool, st.ctxCov)
	if k > 0 && len(pool) > k {
		pool = pool[:k]
	}
	out := make([]scored, 0, len(pool))
	for _, u := range pool {
		x := s.features(u, st)
		raw := m.Score(x)
		sc := scored{U: u, Raw: raw, X: x}
		if m != nil {
			sc.Score = m.prob(raw)
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Or(cmp.Compare(b.Raw, a.Raw), a.U-b.U) })
	return out
}
