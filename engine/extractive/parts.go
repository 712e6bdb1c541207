package extractive

import (
	"slices"

	"github.com/researchd/researchd/engine/nlp"
)

// The parts of a briefing ("Give me an overview of a trip to Sarvela: how to get there, when to go
// and how to get around") are each answered from the section of a document on the briefing's
// subject whose heading says what the part asks, often in the same common words ("Getting there",
// "When to go"): words a term search leaves out.

// echoSkip are words that do not say what a part or heading is about.
var echoSkip = map[string]bool{"to": true, "a": true, "an": true, "the": true, "do": true, "does": true,
	"i": true, "you": true, "we": true, "can": true, "should": true, "is": true, "are": true}

// echoWords are the stems of the words of a part or heading that say what it asks, in order:
// without question words, pronouns and articles, without the subject's names ("How to take it"
// and "How to take Almeron": take) and without a section's number ("2. Hotels": hotel).
func echoWords(text string, names []string) []string {
	var out []string
	for _, w := range nlp.Words(text) {
		if w == "here" {
			w = "there" // a guide's "Getting here" is a visitor's "how to get there"
		}
		st := nlp.Stem(w)
		if isWh(w) || pronouns[w] || echoSkip[w] || slices.Contains(names, st) || slices.Contains(names, w) || nlp.IsDigits(w) {
			continue
		}
		out = append(out, st)
	}
	return out
}

// echoedSection is the section whose heading says what the question, a part of a briefing, asks
// in the same words, in a document that names the briefing's subject; allowed filters units.
func (s *scorer) echoedSection(allowed func(u int) bool) (section, bool) {
	if !s.q.part {
		return section{}, false
	}
	want := echoWords(s.q.Text, s.q.partOf)
	if len(want) == 0 {
		return section{}, false
	}
	for _, sec := range s.c.sections {
		if sec.RunIn != "" || !s.c.mentionsAll(sec.Doc, s.q.partOf) || !slices.ContainsFunc(sec.Units, allowed) {
			continue
		}
		if slices.Equal(echoWords(s.c.units[sec.Units[0]].Heading, s.q.partOf), want) {
			return sec, true
		}
	}
	return section{}, false
}

// headAsksAlike: the section's heading opens with the question word the question opens with ("How
// to take Almeron", not "Before you take Almeron", for "how to take it?").
func (s *scorer) headAsksAlike(sec section) bool { return s.headOpensAs(sec, isWh) }

// headOpensAs: the question's first word is one that opening accepts, and the section's heading
// opens with it too.
func (s *scorer) headOpensAs(sec section, opening func(w string) bool) bool {
	head := nlp.Words(s.c.units[sec.Units[0]].Heading)
	ask := nlp.Words(s.q.Text)
	return len(head) > 0 && len(ask) > 0 && opening(ask[0]) && head[0] == ask[0]
}
