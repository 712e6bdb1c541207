package extractive

import (
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// attributeUnnamed: the question asks for a thing by name ("which refrigerant", "the retail
// price") and no document that mentions the question's names states it: the documents are about its
// subject but do not give what it asks.
func (s *scorer) attributeUnnamed() bool {
	if s.q.Asked == askedNot {
		return false
	}
	head := s.q.Attribute[len(s.q.Attribute)-1]
	verb, agent := agentVerb(strings.ToLower(s.q.missingWords([]string{head})[0]))
	verb = nlp.Stem(verb + "ing") // "founding": the -ing form is never irregular ("found" is "find")
	named := false
	for u, un := range s.c.units {
		if s.namesIn(un.Doc) {
			named = true
			if (s.q.Asked == askedHead && s.statesHead(u, head, verb, agent)) || (s.q.Asked == askedAny && s.statesProperty(u)) {
				return false
			}
		}
	}
	return named
}

// statesHead: the unit states the head of what is asked about ("price" of "retail price"), a figure
// of what it measures, or, for an agent noun (agent: verb is its verb's stem), whoever does it: by the verb
// ("the founder" by "founded") or in the passive ("the author" by "written by Anna Roe", "the
// leader" by "led by Mary Stone").
func (s *scorer) statesHead(u int, head, verb string, agent bool) bool {
	text := s.c.units[u].Text
	if head == stemRate && !s.statesTerm(u, head) {
		// A rate is of something: "45p per mile" under "Mileage" names the mileage rate, "9
		// visitors per hour" no interest rate.
		return measuredBy(head, text) && s.statesModifier(u, head)
	}
	return s.statesTerm(u, head) || measuredBy(head, text) || s.headingStates(u, head) ||
		(agent && (s.c.words[u][verb] || reByName.MatchString(text)))
}

// headingStates: the heading of unit u's section states term t: the dates under "Application
// deadline" are the deadline's.
func (s *scorer) headingStates(u int, t string) bool {
	h := s.c.units[u].Heading
	if h == "" || h == s.c.titles[s.c.units[u].Doc] {
		return false
	}
	terms := nlp.Terms(h)
	return slices.Contains(terms, t) || slices.ContainsFunc(s.q.Syn[t], func(w string) bool { return slices.Contains(terms, w) })
}

var stemRate = nlp.Stem("rate")

// statesModifier: the unit or its context (heading, title) states a word of what is asked about
// other than its head and the question's names ("mileage" of "the mileage rate").
func (s *scorer) statesModifier(u int, head string) bool {
	for _, t := range s.q.Attribute {
		if t != head && !slices.Contains(s.q.Names, t) && (s.c.ownSet[u][t] || s.c.ctx[u][t]) {
			return true
		}
	}
	return false
}

// agentVerb is the verb of an agent noun as the question writes it ("founder" → "found",
// "manufacturer" → "manufactur"), when the noun ends as one does and what is left is long enough to
// be a verb ("mayor" is no agent).
func agentVerb(noun string) (string, bool) {
	for _, suffix := range []string{"er", "or"} {
		if v, ok := strings.CutSuffix(noun, suffix); ok && len(v) >= 4 {
			return v, true
		}
	}
	return "", false
}

// reByName is a passive's agent: "by" and a capitalised name ("written by Anna Roe").
var reByName = regexp.MustCompile(`\bby\s+\p{Lu}`)

// statesProperty: the unit states a word of what is asked about other than the subject's names
// ("enterprise licence" of "a FernDB enterprise licence"), or a figure of what it measures; true
// when every word is a name (the question then asks about the name, which the rules on names judge).
func (s *scorer) statesProperty(u int) bool {
	property := false
	for _, t := range s.q.Attribute {
		if slices.Contains(s.q.Names, t) {
			continue
		}
		property = true
		if s.statesTerm(u, t) || measuredBy(t, s.c.units[u].Text) {
			return true
		}
	}
	return !property
}

// statesAttribute: the unit states what is asked about (or, for a row, its caption does).
func (s *scorer) statesAttribute(u int) bool {
	return slices.ContainsFunc(s.q.Attribute, func(t string) bool { return s.statesTerm(u, t) })
}

// statesTerm: the unit states term t (itself, a synonym or a unit of it), or, for a row, its
// caption or header does.
func (s *scorer) statesTerm(u int, t string) bool {
	return s.states(u, t) || (s.c.units[u].Kind == extract.UnitRow && s.match(u, t) > 0)
}

// statesOpposite: the unit has the opposite of a word of the question ("oldest" for "youngest",
// "after" for "before") but not the word itself.
func (s *scorer) statesOpposite(u int) bool {
	ws := s.c.words[u]
	for _, w := range nlp.Words(s.q.Text) {
		if o, ok := oppositeWords[w]; ok && ws[nlp.Stem(o)] && !ws[nlp.Stem(w)] {
			return true
		}
	}
	return false
}

// oppositeWords pairs common words with their opposites, both ways.
var oppositeWords = func() map[string]string {
	m := map[string]string{}
	for _, p := range strings.Fields(`oldest:youngest first:last largest:smallest highest:lowest before:after
		most:least biggest:smallest longest:shortest earliest:latest best:worst increase:decrease
		increased:decreased won:lost north:south east:west older:younger larger:smaller higher:lower more:less
		early:late male:female start:end started:ended win:lose top:bottom minimum:maximum above:below
		inside:outside positive:negative true:false cheapest:dearest fastest:slowest`) {
		a, b, _ := strings.Cut(p, ":")
		m[a], m[b] = b, a
	}
	return m
}()
