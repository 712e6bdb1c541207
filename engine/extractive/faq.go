package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// An FAQ page answers each question under a heading that asks it. A question asked the way such a
// heading asks ("What do staff need to do before the payroll migration?" under "What do I need to
// do before the migration?") is answered by that section, whatever words its sentences use.

// faqPoints is the most sentences an FAQ answer takes from its section at any effort: an FAQ
// answer is short, and one cut short misses its point.
const faqPoints = 6

// faqSection is the section whose heading asks what the question asks: a heading that asks a
// question (asksAsQuestion) opened by the question's own question word, whose content words the
// question states (all but one, at least two), in a document that names every name of the
// question. Of several, the one stating the most weight of the question's terms.
func (s *scorer) faqSection(allowed func(u int) bool) (section, bool) {
	opensQuestion := func(w string) bool { return isWh(w) || opensYesNo(w) }
	var best section
	bestW := 0.0
	for _, sec := range s.c.sections {
		head := strings.TrimSpace(s.c.units[sec.Units[0]].Heading)
		if sec.RunIn != "" || !asksAsQuestion(head) || !s.namesIn(sec.Doc) || !slices.ContainsFunc(sec.Units, allowed) ||
			!s.headOpensAs(sec, opensQuestion) {
			continue
		}
		terms := nlp.Uniq(nlp.Terms(head))
		if !strings.HasSuffix(head, "?") && (!s.coversHalf(terms) || (s.q.Shape != shapeFactoid && s.q.Shape != shapeDefinition)) {
			// "How to take Almeron" is a topic, not the question "how soon does Almeron start to
			// work"; and a list or reason under a topic heading ("What causes the heat island")
			// is answered point by point from its section (sectionAnswer).
			continue
		}
		if w, ok := s.asksAsHeading(terms); ok && w > bestW {
			best, bestW = sec, w
		}
	}
	return best, bestW > 0
}

// asksAsQuestion: a heading asks a question, with its question mark or, as web pages write them,
// opened by a question word without one ("What goes in the blue bin", "When your bins are
// collected"). Such a heading may also be a topic ("How to take Almeron"): faqSection then wants it
// to state half of what the question asks, and answers only a question of one fact by it.
func asksAsQuestion(head string) bool {
	if strings.HasSuffix(head, "?") {
		return true
	}
	ws := nlp.Words(head)
	return len(ws) > 1 && isWh(ws[0])
}

// coversHalf: a heading states at least half of the question's terms other than its names.
func (s *scorer) coversHalf(head []string) bool {
	n, stated := 0, 0
	for _, t := range s.q.Terms {
		if !slices.Contains(s.q.Names, t) {
			n++
			if slices.Contains(head, t) {
				stated++
			}
		}
	}
	return n > 0 && 2*stated >= n
}

// asksAsHeading: the question states every term of a heading but one, and at least two; w is the
// weight of those it states.
func (s *scorer) asksAsHeading(head []string) (w float64, ok bool) {
	stated := 0
	for _, t := range head {
		if slices.Contains(s.q.Terms, t) {
			stated++
			w += s.w[t]
		}
	}
	return w, stated >= 2 && stated >= len(head)-1
}

// faqAnswer answers the question from the section an FAQ heading asks it in: a yes/no question by
// the section's verdict and what follows it, another by the section's opening sentences.
func (c *corpus) faqAnswer(s *scorer, o findOptions) ([]int, bool) {
	allowed := func(u int) bool { return o.Skip == nil || !o.Skip(u) }
	sec, ok := s.faqSection(allowed)
	if !ok {
		return nil, false
	}
	var answer []int
	for _, u := range sec.Units {
		if len(answer) < max(o.Items, faqPoints) && allowed(u) {
			answer = append(answer, u)
		}
	}
	if asksYesNo(s.q.Text) && len(answer) > 2 {
		answer = answer[:2] // the verdict and its reason
	}
	return answer, len(answer) > 0
}
