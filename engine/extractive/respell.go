package extractive

import (
	"cmp"
	"hash/maphash"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Questions name things the way people type them: "NYC" for the New York City of the article,
// "Manhatten", "Septermber". A word no source writes would make the question refused as naming
// something the sources do not know (name_absent) or lose the word's weight. respell writes such a
// word the way the sources do, when they write it unmistakably: an acronym whose letters begin the
// words of a name the sources write, or a word one letter away from a word they use.

var (
	reQuestionWord = regexp.MustCompile(`\p{L}[\p{L}\p{N}’'.]*`)
	// reCapitalRun is a run of capitalised words (a name), "of"/"and"/"for"/"the" allowed inside.
	reCapitalRun = regexp.MustCompile(`\p{Lu}[\p{L}’'.-]*(?:\s+(?:(?:of|and|for|the|de)\s+)?\p{Lu}[\p{L}’'.-]*)*`)
	reAcronym    = regexp.MustCompile(`^\p{Lu}{2,6}$`)
	// rePluralAcronym is an acronym or a model name in the plural ("CDs", "DB10s").
	rePluralAcronym = regexp.MustCompile(`^\p{Lu}[\p{Lu}\d]+s$`)
)

// quarters are the quarters of a year as reports abbreviate them.
var quarters = map[string]string{"Q1": "first quarter", "Q2": "second quarter", "Q3": "third quarter", "Q4": "fourth quarter"}

// minRespell is the length below which a word is never respelt: a letter changed in a short word
// makes another word ("Link", "Lint").
const minRespell = 5

// respell returns the question with each word that no source writes replaced by the sources'
// spelling of it, where they have one unmistakable spelling.
func (c *corpus) respell(question string) string {
	text, _ := c.respelt(question)
	return text
}

// respelt is respell, with what was read otherwise, for the report to say (“NYC” as “New York
// City”): a user asking about a name the sources do not write learns which one was answered.
func (c *corpus) respelt(question string) (string, []string) {
	question = c.recase(question)
	locs := reQuestionWord.FindAllStringIndex(question, -1)
	var b strings.Builder
	var changes []string
	last := 0
	for i, loc := range locs {
		tok := strings.TrimRight(question[loc[0]:loc[1]], ".’'")
		tok = strings.TrimSuffix(strings.TrimSuffix(tok, "'s"), "’s") // the possessive stays
		end := loc[0] + len(tok)
		if alt, ok := c.spelling(tok, i == 0); ok {
			b.WriteString(question[last:loc[0]])
			b.WriteString(alt)
			last = end
			changes = append(changes, "“"+tok+"” as “"+alt+"”")
		}
	}
	if last == 0 {
		return question, nil
	}
	b.WriteString(question[last:])
	return b.String(), changes
}

// spelling is the sources' spelling of a question word they do not write, if they have one.
// first: the word opens the question (its capital says nothing).
func (c *corpus) spelling(tok string, first bool) (string, bool) {
	if base, ok := pluralAcronym(tok); ok && !c.writesWord(tok) {
		// "CDs", "AMAs", "DB10s": the sources write the acronym itself, or spell it out.
		if c.writesWord(base) {
			return base, true
		}
		return c.expansion(base)
	}
	if c.writesWord(tok) {
		return "", false
	}
	if q, ok := quarters[tok]; ok && c.docFreq[nlp.Stem("quarter")] > 0 {
		return q, true // "Q3" is the "third quarter" of a report
	}
	if strings.ContainsFunc(tok, unicode.IsDigit) {
		// A figure in a name is no typing slip: "MI66" is another thing than "MI6".
		return "", false
	}
	if reAcronym.MatchString(tok) {
		return c.expansion(tok)
	}
	r, _ := utf8.DecodeRuneInString(tok)
	name := unicode.IsUpper(r) && !first
	// An ordinary word the sources lack is usually just worded otherwise: only one that is no
	// English word at all is a misspelling.
	if utf8.RuneCountInString(tok) < minRespell || (!name && known(tok)) {
		return "", false
	}
	alt, ok := c.nearWord(tok)
	if ok && unicode.IsUpper(r) {
		alt = capitalize(alt)
	}
	return alt, ok
}

// pluralAcronym is the acronym of its plural ("CD" of "CDs", "DB10" of "DB10s").
func pluralAcronym(tok string) (string, bool) {
	if !rePluralAcronym.MatchString(tok) {
		return "", false
	}
	return tok[:len(tok)-1], true
}

// writesWord: some source states the word (by its stem).
func (c *corpus) writesWord(tok string) bool {
	ws := nlp.Words(tok)
	if len(ws) == 0 {
		return true
	}
	for _, w := range ws {
		if c.docFreq[nlp.Stem(w)] == 0 && !nlp.IsStopword(w) {
			return false
		}
	}
	return true
}

// known: an English word, one the word vectors or WordNet know.
func known(tok string) bool { return knownStem(nlp.Stem(strings.ToLower(tok))) }

// knownStem: the stem of an English word the word vectors or WordNet know.
func knownStem(s string) bool { return nlp.Vector(s) != nil || len(nlp.Related(s)) > 0 }

// spellIndex is what respelling reads of the sources, built once per corpus on first use (most
// questions have no word to respell): every word, every two neighbouring words, every run of
// capitalised words, each with its count.
type spellIndex struct {
	words   map[string]int    // lower-case word → occurrences
	surface map[string]string // lower-case word or pair → as first written
	pairs   map[uint64]int    // two neighbouring lower-case words (pairKey) → occurrences
	runs    map[string]int    // run of capitalised words → occurrences
	lowered map[uint64]int    // two neighbouring words both written in lower case (pairKey) → occurrences
	names   map[string]string // a name of two words or more, in lower case → as the sources write it (recase)
}

func (c *corpus) buildSpellIndex() *spellIndex {
	ix := &spellIndex{words: map[string]int{}, surface: map[string]string{}, pairs: map[uint64]int{}, runs: map[string]int{},
		lowered: map[uint64]int{}}
	for _, d := range c.docs {
		for _, line := range d.Lines {
			prev := ""
			for _, w := range reQuestionWord.FindAllString(line, -1) {
				w = strings.TrimRight(w, ".’'")
				lw := strings.ToLower(w)
				ix.words[lw]++
				ix.surface[lw] = cmp.Or(ix.surface[lw], w)
				if prev != "" {
					ix.pairs[pairKey(strings.ToLower(prev), lw)]++
					if prev == strings.ToLower(prev) && w == lw {
						ix.lowered[pairKey(prev, lw)]++
					}
				}
				prev = w
			}
			for _, run := range reCapitalRun.FindAllString(line, -1) {
				ix.runs[run]++
			}
		}
	}
	ix.names = namesWritten(ix)
	return ix
}

// namesWritten are the names of two words or more the sources write more than once, and never in
// lower case ("Lumen Health", not a heading's "Key Dates" or "health" of "public health"), each in
// lower case with its written form; a leading "The" is not part of the name.
func namesWritten(ix *spellIndex) map[string]string {
	counts := map[string]int{}
	for run, n := range ix.runs {
		counts[strings.TrimRight(run, ".’'-")] += n // "The Corn Exchange." ends a sentence
	}
	out := map[string]string{}
	for run, n := range counts {
		ws := strings.Fields(run)
		for len(ws) > 0 && nlp.IsStopword(strings.ToLower(ws[0])) {
			ws = ws[1:]
		}
		if n < 2 || len(ws) < 2 {
			continue
		}
		if ix.lowered[pairKey(strings.ToLower(ws[0]), strings.ToLower(ws[1]))] > 0 {
			continue
		}
		key := strings.ToLower(strings.Join(ws, " "))
		if have, ok := out[key]; !ok || counts[have] < n {
			out[key] = strings.Join(ws, " ")
		}
	}
	return out
}

// recase writes the names a question types in lower case ("what did lumen health announce") as
// the sources write them, so that they are read as names.
func (c *corpus) recase(question string) string {
	names := c.vocab().names
	if len(names) == 0 {
		return question
	}
	locs := reQuestionWord.FindAllStringIndex(question, -1)
	var b strings.Builder
	last := 0
	for i := 0; i < len(locs); i++ {
		for n := min(6, len(locs)-i); n >= 2; n-- {
			end := locs[i+n-1][1]
			end -= len(question[:end]) - len(strings.TrimSuffix(strings.TrimSuffix(question[:end], "'s"), "’s")) // the possessive stays
			span := question[locs[i][0]:end]
			if span != strings.ToLower(span) {
				continue
			}
			written, ok := names[strings.Join(strings.Fields(span), " ")]
			if !ok || len(written) != len(span) {
				continue
			}
			b.WriteString(question[last:locs[i][0]])
			b.WriteString(written)
			last = end
			i += n - 1
			break
		}
	}
	if last == 0 {
		return question
	}
	b.WriteString(question[last:])
	return b.String()
}

func pairKey(a, b string) uint64 {
	var h maphash.Hash
	h.SetSeed(pairSeed)
	h.WriteString(a)
	h.WriteByte(' ')
	h.WriteString(b)
	return h.Sum64()
}

// pairSeed is fixed for the process: pair keys are only compared within one index.
var pairSeed = maphash.MakeSeed()

// nearWord is the word of the sources one edit (a letter added, dropped, changed, or two swapped)
// away from tok, beginning with the same letter, or the two words of theirs tok joins
// ("Superbowl" for "Super Bowl"); the commonest when there are several, none when two are as
// common.
func (c *corpus) nearWord(tok string) (string, bool) {
	ix := c.vocab()
	low := []rune(strings.ToLower(tok))
	counts, surface := map[string]int{}, map[string]string{}
	for w, n := range ix.words {
		lw := []rune(w)
		if len(lw) >= minRespell && lw[0] == low[0] && oneEdit(low, lw) {
			counts[w], surface[w] = n, ix.surface[w]
		}
	}
	lower := string(low)
	for i := 2; i <= len(lower)-2; i++ {
		a, b := lower[:i], lower[i:]
		if n := ix.pairs[pairKey(a, b)]; n > 0 && ix.words[a] > 0 && ix.words[b] > 0 {
			counts[a+" "+b], surface[a+" "+b] = n, ix.surface[a]+" "+ix.surface[b]
		}
	}
	best, tie := commonest(counts)
	return surface[best], best != "" && !tie
}

// unjoin writes each word of a field's name that no source writes, and that joins two words a
// source writes together, as those two ("pickup date" as "pick up date" for "**Pick-up:** 14
// August"): a schema names fields as identifiers, run together.
func (c *corpus) unjoin(name string) string {
	return reLetters.ReplaceAllStringFunc(name, func(w string) string {
		if len(w) < minRespell || c.writesWord(w) {
			return w
		}
		ix, lower := c.vocab(), strings.ToLower(w)
		for i := 2; i <= len(lower)-2; i++ {
			if a, b := lower[:i], lower[i:]; ix.pairs[pairKey(a, b)] > 0 {
				return a + " " + b
			}
		}
		return w
	})
}

var reLetters = regexp.MustCompile(`\p{L}+`)

// commonest is the key with the highest count, and whether another has as high a count.
func commonest(counts map[string]int) (best string, tie bool) {
	for k, n := range counts {
		switch {
		case best == "" || n > counts[best]:
			best, tie = k, false
		case n == counts[best]:
			tie, best = true, min(best, k) // the same choice whatever the map's order
		}
	}
	return best, tie
}

// expansion is the name the sources write whose words' initials spell the acronym ("New York City"
// for "NYC", "Washington, D.C." for "DC" by its own letters), the commonest when there are several.
func (c *corpus) expansion(acronym string) (string, bool) {
	counts := map[string]int{}
	for run, n := range c.vocab().runs {
		if e, ok := spells(run, acronym); ok {
			counts[e] += n
		}
	}
	best, _ := commonest(counts) // of equally common expansions, any is the sources' own name
	return best, best != ""
}

// spells finds in a run of capitalised words the consecutive words whose initials spell the
// acronym ("New York City"), or dotted initials that do ("D.C."); "of" and "and" inside add no letter.
func spells(run, acronym string) (string, bool) {
	words := strings.Fields(run)
	for i := range words {
		got, used := "", 0
		for j := i; j < len(words) && strings.HasPrefix(acronym, got); j++ {
			w := words[j]
			r, _ := utf8.DecodeRuneInString(w)
			switch {
			case unicode.IsLower(r):
				continue
			case strings.Contains(w, ".") && strings.ToUpper(w) == w:
				got += strings.ReplaceAll(w, ".", "")
				used += 2 // dotted initials spell by themselves
			default:
				got += string(r)
				used++
			}
			if got == acronym && used >= 2 {
				name := strings.Join(words[i:j+1], " ")
				return strings.TrimSuffix(strings.TrimSuffix(name, "'s"), "’s"), true
			}
		}
	}
	return "", false
}

// oneEdit: a and b differ by one letter added, dropped or changed, or two neighbours swapped.
func oneEdit(a, b []rune) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 || slices.Equal(a, b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) < len(b) {
		return slices.Equal(a[i:], b[i+1:])
	}
	if slices.Equal(a[i+1:], b[i+1:]) {
		return true
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && slices.Equal(a[i+2:], b[i+2:])
}
