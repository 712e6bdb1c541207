package extractive

import (
	"cmp"
	"slices"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
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
		if st.ctxCov[u] > 0 && (!s.c.bylines[u] || s.spanAsked(u)) && (!s.isHeader(u) || s.headerAnswers(u)) && (allowed == nil || allowed(u)) {
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

// isHeader: unit u is a field line of a document's or a message's header ("**Property:** …" opening
// a tenancy agreement, "To: Tomas Lindqvist" of an e-mail): it names what the document is about and
// who it is from and to, so it matches every question about them.
func (s *scorer) isHeader(u int) bool {
	un := s.c.units[u]
	return s.c.openingFields[u] || un.Kind == extract.UnitField && reMessageHeader.MatchString(un.Text)
}

// headerAnswers: header field line u may answer the question: it names the label ("Who is the
// landlord?" of "**Landlord:** …"), or gives the date or amount asked for ("Date: 14 October 2026"
// for when the e-mail was sent). Any figure or capitalised word is not enough: an address has a
// house number and a street.
func (s *scorer) headerAnswers(u int) bool {
	switch s.q.Type {
	case typeTime, typeMoney, typePercent:
		if s.typeHit(s.c.units[u].Text) {
			return true
		}
	}
	return s.labelAsked(u)
}

// spanAsked: byline line u gives a range of dates ("7 March – 30 August 2026 · Wrenfield Gallery")
// and the question asks when: the range is when the document's subject runs. A dateline's single
// date is only when the document was written.
func (s *scorer) spanAsked(u int) bool {
	if s.q.Type != typeTime {
		return false
	}
	un := s.c.units[u]
	return slices.ContainsFunc(dateMentions(un.Text, func() string { return s.c.docYear(un.Doc) }), func(m dateMention) bool { return m.inRange != 0 })
}

// labelAsked: the question states a word of field line u's label, itself or by a word of the same
// meaning ("Who is the landlord?" of "**Landlord:** Rosalind Tebbit"). A document's opening field
// lines name its subject, and would otherwise match every question about it.
func (s *scorer) labelAsked(u int) bool {
	label := extract.FieldLabel(s.c.units[u].Text)
	terms := nlp.Terms(label)
	states := func(t string) bool { return slices.Contains(terms, t) }
	for _, qt := range s.q.Terms {
		if states(qt) || slices.ContainsFunc(s.q.Syn[qt], states) || slices.ContainsFunc(nlp.Related(qt), states) {
			return true
		}
	}
	return false
}
