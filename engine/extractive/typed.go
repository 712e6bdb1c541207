package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// Questions as people type them: a capitalised word that only opens a sentence, "fill me in",
// "what do I need to …", "how long is it going to be closed".

// stateWords say that "how long is X …" asks how long X stays so, not how long X is.
var stateWords = map[string]bool{"going": true, "be": true, "been": true, "open": true, "closed": true, "shut": true,
	"valid": true, "away": true, "gone": true, "down": true, "delayed": true, "suspended": true, "available": true,
	"off": true, "out": true}

// ordinaryOpener: the word tok at q[at:] opens a sentence inside the question ("… on a business
// trip. Give me the gist") and is an ordinary English word, capitalised for that, not as a name.
func ordinaryOpener(q string, at int, tok string) bool {
	before := strings.TrimRight(q[:at], " \t\"'“‘(")
	ends := strings.HasSuffix(before, "?") || strings.HasSuffix(before, "!") ||
		(strings.HasSuffix(before, ".") && !nlp.ShortToken(strings.TrimSuffix(before, ".")))
	return ends && knownStem(nlp.Stem(strings.ToLower(tok)))
}

// needsTo: the words after "what" ask what someone needs or has to do: an auxiliary, its subject,
// then "need to" or "have to" ("do I need to bring", "does a tenant have to do").
func needsTo(w []string) bool {
	if len(w) < 4 || !auxiliaries[w[0]] {
		return false
	}
	for i := 1; i+1 < len(w) && i <= 3; i++ {
		if (w[i] == "need" || w[i] == "have") && w[i+1] == "to" {
			return true
		}
	}
	return false
}

// catchUps ask to be told what happened: "fill me in on the meeting", "catch me up", "bring me
// up to speed".
var catchUps = [][]string{{"fill", "me", "in"}, {"fill", "us", "in"}, {"catch", "me", "up"}, {"catch", "us", "up"}, {"up", "to", "speed"}}

// hasRun: w holds the words of run one after another.
func hasRun(w, run []string) bool {
	for i := 0; i+len(run) <= len(w); i++ {
		if slices.Equal(w[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
