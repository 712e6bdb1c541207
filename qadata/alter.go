package qadata

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/researchd/researchd/engine/nlp"
)

// KindAltered is an answerable question changed so that its article no longer answers it, the
// way SQuAD 2.0's unanswerable questions were written: a number, a name or a superlative is
// replaced, and the rest still matches the article closely.
const KindAltered = "altered"

var (
	reDigits  = regexp.MustCompile(`\b\d[\d,]*\b`)
	reCapWord = regexp.MustCompile(`\b\p{Lu}[\p{Ll}]+\b`)
	// opposites pairs words with their opposites, both ways (read-only).
	opposites = func() map[string]string {
		m := map[string]string{}
		for _, p := range strings.Fields(`oldest:youngest first:last largest:smallest highest:lowest before:after most:least
		biggest:smallest longest:shortest earliest:latest best:worst increase:decrease increased:decreased
		won:lost north:south east:west older:younger larger:smaller higher:lower more:less early:late
		male:female start:end started:ended win:lose top:bottom`) {
			a, b, _ := strings.Cut(p, ":")
			m[a], m[b] = b, a
		}
		return m
	}()
)

// Alter returns, for a share of the answerable items, a copy whose question is changed so that
// its document does not answer it (answers cleared), and which is dropped when no change applies.
// A change is one of: a number replaced by another the document does not state; a capitalised word
// replaced by another capitalised word (of the document, or of any article) that the answer's
// context lacks; a content
// word replaced by another word of the document that the answer's context lacks; a word near the
// answer replaced by a word of similar use (similarWord); a superlative or direction replaced by
// its opposite; a negation added.
func Alter(items []Item, share float64, seed uint64) []Item {
	rng := rand.New(rand.NewPCG(seed, 0xA17E))
	// Names of every article: a question about a name its article never mentions is not answered.
	var names []string
	seen := map[string]bool{}
	for _, it := range items {
		if d := it.Docs[0]; !seen[d.Name] {
			seen[d.Name] = true
			names = append(names, reCapWord.FindAllString(d.Text, -1)...)
		}
	}
	var out []Item
	for _, it := range items {
		if it.Kind != KindSQuAD || !it.Answerable() || rng.Float64() >= share {
			continue
		}
		q, ok := alter(it, names, rng)
		if !ok {
			continue
		}
		out = append(out, Item{ID: it.ID + "-altered", Kind: KindAltered, Question: q, Docs: it.Docs})
	}
	return out
}

func alter(it Item, names []string, rng *rand.Rand) (string, bool) {
	q, text := it.Question, it.Docs[0].Text
	changes := []func() (string, bool){
		func() (string, bool) { // a number
			locs := reDigits.FindAllStringIndex(q, -1)
			if len(locs) == 0 {
				return "", false
			}
			l := locs[rng.IntN(len(locs))]
			n, err := strconv.Atoi(strings.ReplaceAll(q[l[0]:l[1]], ",", ""))
			if err != nil {
				return "", false
			}
			for _, d := range []int{1, -1, 2, 10, -10, 3} {
				if m := strconv.Itoa(n + d); n+d > 0 && !strings.Contains(text, m) {
					return q[:l[0]] + m + q[l[1]:], true
				}
			}
			return "", false
		},
		func() (string, bool) { // a name
			locs := reCapWord.FindAllStringIndex(q, -1)
			if len(locs) < 2 { // the first word is capitalised anyway
				return "", false
			}
			l := locs[1+rng.IntN(len(locs)-1)]
			others := reCapWord.FindAllString(text, -1)
			if rng.IntN(2) == 0 {
				others = names // half the time a name from anywhere, often one the article lacks
			}
			for range 20 {
				w := others[rng.IntN(len(others))]
				if w != q[l[0]:l[1]] && !strings.Contains(q, w) && !answerNear(text, it.Answers, w) && !common(w) {
					return q[:l[0]] + w + q[l[1]:], true
				}
			}
			return "", false
		},
		func() (string, bool) { // a content word
			ws := strings.Fields(q)
			others := strings.Fields(text)
			for _, i := range rng.Perm(len(ws)) {
				core := letters(ws[i])
				if len(core) < 5 || core != strings.ToLower(core) || i == 0 {
					continue
				}
				for range 20 {
					w := letters(others[rng.IntN(len(others))])
					if len(w) >= 5 && w == strings.ToLower(w) && !strings.Contains(strings.ToLower(q), w) && !answerNear(text, it.Answers, w) {
						ws[i] = strings.Replace(ws[i], core, w, 1)
						return strings.Join(ws, " "), true
					}
				}
				return "", false
			}
			return "", false
		},
		func() (string, bool) { return similarWord(q, text, it.Answers, rng) },
		func() (string, bool) { // an opposite
			ws := strings.Fields(q)
			for _, i := range rng.Perm(len(ws)) {
				core := letters(ws[i])
				if o, ok := opposites[strings.ToLower(core)]; ok && core == strings.ToLower(core) {
					ws[i] = strings.Replace(ws[i], core, o, 1)
					return strings.Join(ws, " "), true
				}
			}
			return "", false
		},
		func() (string, bool) { // a negation: "What did X not ...?" where the article says what X did
			ws := strings.Fields(q)
			for _, w := range ws {
				if lw := strings.ToLower(w); lw == "not" || lw == "never" || strings.HasSuffix(lw, "n't") {
					return "", false
				}
			}
			for i := 1; i < len(ws)-1; i++ {
				if auxiliary[strings.ToLower(ws[i])] {
					return strings.Join(slices.Concat(ws[:i+1], []string{"not"}, ws[i+1:]), " "), true
				}
			}
			return "", false
		},
	}
	for _, i := range rng.Perm(len(changes)) {
		if q2, ok := changes[i](); ok {
			return q2, true
		}
	}
	return "", false
}

// similarWord replaces a word of the question that the article states near the answer by a word of
// similar use that is not its synonym and that the article does not state near the answer: "dying
// of thallium poisoning" asked as "potassium poisoning", "his fourth appearance" as "eighth",
// "rain" as "snow" (word vectors' nearest words are often of the same kind but not the same).
func similarWord(q, text string, answers []string, rng *rand.Rand) (string, bool) {
	ws := strings.Fields(q)
	for _, i := range rng.Perm(len(ws)) {
		core := letters(ws[i])
		if i == 0 || len(core) < 4 || core != strings.ToLower(core) || nlp.IsStopword(core) || !answerNear(text, answers, core) {
			continue
		}
		stem := nlp.Stem(core)
		var fits []string
		for _, s := range nlp.Nearest(stem, nlp.Neighbours) {
			w := nlp.Word(s)
			if cos, _ := nlp.Similarity(stem, s); cos < similarAtLeast || slices.Contains(nlp.Related(stem), s) ||
				strings.Contains(strings.ToLower(q), w) || answerNear(text, answers, w) {
				continue
			}
			fits = append(fits, w)
		}
		if len(fits) == 0 {
			continue
		}
		ws[i] = strings.Replace(ws[i], core, fits[rng.IntN(min(len(fits), 3))], 1)
		return strings.Join(ws, " "), true
	}
	return "", false
}

// similarAtLeast is the cosine a replacement needs: the engine reads a sentence word that close to
// a question word as meaning something like it (engine/extractive, minSimilarity).
const similarAtLeast = 0.5

// letters is w without the punctuation around it ("film's" stays, "film?" is "film").
func letters(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
}

// auxiliary are the verbs a negation follows ("did not", "was not").
var auxiliary = map[string]bool{"is": true, "was": true, "are": true, "were": true, "did": true, "does": true,
	"do": true, "can": true, "could": true, "has": true, "had": true, "have": true, "will": true, "would": true}

// answerNear: w stands within 200 characters of an occurrence of an answer in text (the swap
// might then still be answered).
func answerNear(text string, answers []string, w string) bool {
	for _, a := range answers {
		for i := 0; ; {
			j := strings.Index(text[i:], a)
			if j < 0 || a == "" {
				break
			}
			at := i + j
			lo, hi := max(at-200, 0), min(at+len(a)+200, len(text))
			if strings.Contains(text[lo:hi], w) {
				return true
			}
			i = at + len(a)
		}
	}
	return false
}

// common are capitalised words that start sentences rather than name things.
func common(w string) bool {
	switch strings.ToLower(w) {
	case "the", "a", "an", "in", "on", "at", "it", "he", "she", "they", "this", "that", "these", "his", "her",
		"after", "before", "during", "when", "while", "however", "as", "by", "for", "from", "with", "of", "to", "and", "but":
		return true
	}
	return false
}
