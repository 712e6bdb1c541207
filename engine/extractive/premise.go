package extractive

import (
	"regexp"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// A question often opens with the asker's situation: "I'm 68 and registered at Hollins Green. Can I
// get the shingles vaccine now?", "my mum's GP practice uses Lumen software, when can they get the
// new Beacon?", "taking my two kids (7 and 10) to the festival on Saturday, do they need tickets?".
// That premise says what the question is about (its names are the subject), but its figures are
// the asker's own (an age, a £3,500 ring) and not looked for in the sources, and its other words
// describe the asker, not what is asked: they weigh premiseWeight of a question word's weight.

// premiseWeight is the share of its weight a word of the premise alone keeps.
const premiseWeight = 0.5

// minAskedTerms is the fewest terms of its own a question after a premise has for the statement
// before it to be a premise.
const minAskedTerms = 2

// rePremiseEnd is where a premise can end: a sentence end, a comma, a semicolon, a colon or a dash.
var rePremiseEnd = regexp.MustCompile(`[.,;:!]\s+|\s[-–—]\s+`)

// premiseOf is the premise a question opens with: the text before the clause that asks, when
// that text asks nothing itself and speaks of the asker (I, my, we, our) or opens with what they
// are doing ("doing a school project on …"). "" when the question has none. A fronted phrase ("As
// of 2012, how many …") is no premise: it is part of what is asked; nor is a statement followed by
// a question of fewer than minAskedTerms terms of its own ("my pump hums but nothing comes out,
// what should I do?" asks about the statement itself).
func premiseOf(q string) string {
	locs := rePremiseEnd.FindAllStringIndex(q, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		before, after := strings.Fields(q[:locs[i][0]]), strings.Fields(q[locs[i][1]:])
		if len(before) < 2 || len(after) < 2 || !opensQuestion(after) || asks(before) {
			continue
		}
		if len(nlp.Uniq(nlp.Terms(q[locs[i][1]:]))) < minAskedTerms {
			return "" // "my pump hums but nothing comes out, what should I do?" asks about the premise itself
		}
		if speaksOfAsker(nlp.Words(strings.Join(before, " "))) {
			return q[:locs[i][0]]
		}
	}
	return ""
}

// speaksOfAsker: the words speak of the asker or their own (I, my, we, our), or open with what
// they are doing ("taking my kids", "doing a project").
func speaksOfAsker(ws []string) bool {
	if len(ws) == 0 {
		return false
	}
	if w := ws[0]; strings.HasSuffix(w, "ing") && len(w) > 5 {
		return true
	}
	for _, w := range ws {
		if w, _, _ = strings.Cut(strings.ReplaceAll(w, "’", "'"), "'"); firstPerson[w] {
			return true
		}
	}
	return false
}

// firstPerson are the words by which an asker speaks of themselves ("i'm" and "we're" are read as
// "i" and "we").
var firstPerson = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "we": true, "us": true, "our": true, "ours": true}

// premiseTerms are the terms only the premise states, names aside: words that describe the asker.
func premiseTerms(premise, question string, names []string) map[string]bool {
	if premise == "" {
		return nil
	}
	asked := map[string]bool{}
	for _, t := range nlp.Terms(question) {
		asked[t] = true
	}
	for _, n := range names {
		asked[n] = true
	}
	out := map[string]bool{}
	for _, t := range nlp.Terms(premise) {
		if !asked[t] {
			out[t] = true
		}
	}
	return out
}
