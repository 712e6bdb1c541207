package nlp

import (
	_ "embed"
	"strings"
	"sync"
)

// wordnetText holds common English words' relatives and opposites from WordNet 3.1, written by
// cmd/wordnetlex (licence: third_party/wordnet/LICENSE).
//
//go:embed wordnet.txt
var wordnetText string

// loadRelated reads the relatives of each stem once, on first use. The file's opposites (after
// "|") are not read: as a sign that a sentence contradicts a question they added nothing measurable
// to the hand-written pairs in engine/extractive (docs/answer-model.md).
var loadRelated = sync.OnceValue(func() map[string][]string {
	r := map[string][]string{}
	for line := range strings.Lines(wordnetText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		rel, _, _ := strings.Cut(line, "|")
		ws := strings.Fields(rel)
		if len(ws) == 0 {
			continue
		}
		head := Stem(ws[0])
		for _, w := range ws[1:] {
			link(r, head, w)
		}
	}
	return r
})

// link relates stem a and word w both ways, leaving out stopwords and words of the same stem.
func link(m map[string][]string, a, w string) {
	if IsStopword(w) {
		return
	}
	b := Stem(w)
	if a == b {
		return
	}
	add := func(x, y string) {
		for _, have := range m[x] {
			if have == y {
				return
			}
		}
		m[x] = append(m[x], y)
	}
	add(a, b)
	add(b, a)
}

// Related are the stems of words WordNet gives for the same thing as stem s in its commonest
// senses: synonyms and derived words ("pay" → "payment", "salary"; "invent" → "inventor").
func Related(s string) []string { return loadRelated()[s] }
