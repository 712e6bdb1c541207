package qadata

import (
	"strings"
	"unicode"
)

// Normalize is SQuAD's answer normalisation: lower case, punctuation and the articles a, an, the
// dropped, white space collapsed.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return ' '
		}
		return r
	}, s)
	var out []string
	for _, w := range strings.Fields(s) {
		if w != "a" && w != "an" && w != "the" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// ContainsAnswer reports whether text holds one of the answers, compared normalised and on word
// boundaries ("1990" is not found in "19901").
func ContainsAnswer(text string, answers []string) bool {
	t := " " + Normalize(text) + " "
	for _, a := range answers {
		if n := Normalize(a); n != "" && strings.Contains(t, " "+n+" ") {
			return true
		}
	}
	return false
}
