package nlp

import (
	"regexp"
	"slices"
	"strings"
)

// A value the sources deny is not evidence for it: "Windows is not supported" names Windows but
// says the opposite. The check is deliberately shallow: a negation word anywhere in the clause
// that names the value, or an exclusion word just before it.

// negations deny what their clause says.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "false": true, "cannot": true,
	"lacks": true, "lack": true, "lacking": true, "neither": true, "nor": true,
	"unsupported": true, "unavailable": true, "unable": true, "nobody": true, "nothing": true,
}

// exclusions leave out what follows them ("without Windows", "all platforms except FreeBSD").
var exclusions = map[string]bool{"without": true, "except": true, "excluding": true,
	"instead": true, "rather": true} // "snapshot isolation instead of read committed", "rather than"

// exclusionReach is how many words after an exclusion word it still leaves out ("except
// Windows and FreeBSD").
const exclusionReach = 3

// negates: w (lower case, from words) denies its clause: a negation word or any "n't" form.
func negates(w string) bool { return negations[w] || strings.HasSuffix(w, "n't") }

// reClauseBreak ends a clause within a passage: a semicolon, a sentence's end, or a word that
// turns to a contrast ("Windows is not supported, but Linux is"). Commas do not: "we do not,
// for now, support Windows" is one clause.
var reClauseBreak = regexp.MustCompile(`(?i)[;!?]|\.(?:\s|$)|\b(?:but|whereas|while|although|though|however)\b`)

// clauses splits text at reClauseBreak.
func clauses(text string) []string {
	var out []string
	start := 0
	for _, loc := range reClauseBreak.FindAllStringIndex(text, -1) {
		out = append(out, text[start:loc[0]])
		start = loc[1]
	}
	return append(out, text[start:])
}

// StatesPhrase: a clause of text names phrase (word stems in order, as Stem gives them) and
// does not negate it.
func StatesPhrase(text string, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
	for _, c := range clauses(text) {
		ws, part := clauseWords(c)
		st := stems(ws)
		for i := 0; i+len(phrase) <= len(ws); i++ {
			if slices.Equal(st[i:i+len(phrase)], phrase) && !negatedAt(ws, part, i, i+len(phrase)) {
				return true
			}
		}
	}
	return false
}

// StatesAll: a clause of text names every word of a value (word stems, in any order: "satellite
// navigation ... (RTK)" names "RTK satellite navigation") and negates none of them.
func StatesAll(text string, value []string) bool {
	if len(value) < 2 {
		return StatesPhrase(text, value)
	}
	for _, c := range clauses(text) {
		ws, part := clauseWords(c)
		st := stems(ws)
		all := true
		for _, v := range value {
			i := slices.Index(st, v)
			if i < 0 || negatedAt(ws, part, i, i+1) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// clauseWords are the words of a clause and, for each, the number of colons before it.
func clauseWords(clause string) (ws []string, part []int) {
	for n, p := range strings.Split(clause, ":") {
		for _, w := range Words(p) {
			ws = append(ws, w)
			part = append(part, n)
		}
	}
	return ws, part
}

func stems(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = Stem(w)
	}
	return out
}

// negatedAt: the clause ws denies its words [from, to). A negation before them denies them, even
// across a colon ("not supported: Windows"); one after them, only within their part of the
// clause or as the verdict that opens the next part ("Windows: not supported"), not in a
// sentence of its own after a colon ("a green alert: damage is not expected"). An exclusion
// word denies only the few words after it.
func negatedAt(ws []string, part []int, from, to int) bool {
	last := part[to-1]
	for j, w := range ws {
		switch {
		case j >= from && j < to:
		case exclusions[w] && j < from && from-j <= exclusionReach:
			return true
		case !negates(w):
		case j < from, part[j] == last:
			return true
		case part[j] == last+1 && part[j-1] == last:
			return true
		}
	}
	return false
}

// Negated: some word of text is a negation ("not", "never", "n't"); "without" and "except" only
// leave something out.
func Negated(text string) bool { return slices.ContainsFunc(Words(text), negates) }

// DeniesAny: some word of text is a negation, or "without" ("ships without a SOC 2 report");
// "except" leaves out a part, it does not deny the statement.
func DeniesAny(text string) bool {
	for _, w := range Words(text) {
		if negates(w) || w == "without" {
			return true
		}
	}
	return false
}
