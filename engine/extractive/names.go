package extractive

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// A name of several words is checked as the question writes it. Each of its words may be in the
// sources while the name is not: "Clawshot Princess" asked of an article about Twilight Princess
// that mentions the Clawshot, or "Midna of Time" of one about Ocarina of Time. A question that
// names something no source names is about something else (SQuAD 2.0 writes unanswerable
// questions so: on the training articles, 14 % of its unanswerable questions name such a
// combination against 0.5 % of the answerable ones; cmd/trainanswer refits with it).

// namePhrase is a name of two or more words in a question: its words as written and their stems.
type namePhrase struct {
	Text  string
	Stems []string
}

// nameLinks join the words of one name ("Ocarina of Time", "Leonardo da Vinci").
var nameLinks = map[string]bool{"of": true, "de": true, "da": true, "di": true, "del": true, "du": true,
	"la": true, "le": true, "von": true, "van": true, "der": true, "den": true}

// namePhrases finds the names of several words in a question: runs of capitalised words after its
// first word, joined by linking words. Punctuation between two words (a colon, a comma, a quote)
// and a possessive end a name: "Legend of Zelda: Twilight Princess" is two names.
func namePhrases(q string) []namePhrase {
	locs := reWordToken.FindAllStringIndex(q, -1)
	if titleCase(q, locs) {
		return nil // "What Is The Retail Price Of The K2?": capitals mark no names
	}
	var out []namePhrase
	var cur namePhrase
	var links []string // linking words seen since the last name word
	start := -1
	flush := func(end int) {
		if len(cur.Stems) >= 2 && !allLetters(cur.Stems) {
			cur.Text = q[start:end]
			out = append(out, cur)
		}
		cur, links, start = namePhrase{}, nil, -1
	}
	lastEnd := 0
	for i, l := range locs {
		t := q[l[0]:l[1]]
		if i > 0 && strings.TrimSpace(q[locs[i-1][1]:l[0]]) != "" {
			flush(lastEnd)
		}
		switch {
		case i > 0 && isName(t) && !ordinaryOpener(q, l[0], t):
			if start < 0 {
				start = l[0]
			}
			name, rest := nameOfCompound(t)
			for _, w := range append(links, nlp.Words(name)...) {
				cur.Stems = append(cur.Stems, nlp.Stem(w))
			}
			links, lastEnd = nil, l[0]+len(name)
			if rest {
				flush(lastEnd)
			} else if strings.HasSuffix(t, "'s") || strings.HasSuffix(t, "’s") || strings.HasSuffix(t, "'") || strings.HasSuffix(t, "’") {
				flush(l[1])
			}
		case start >= 0 && nameLinks[strings.ToLower(t)]:
			links = append(links, strings.ToLower(t))
		default:
			flush(lastEnd)
		}
	}
	flush(lastEnd)
	return out
}

// nameOfCompound is the part of a hyphenated word that is a name: "Apple" of "Apple-produced" (rest:
// the word goes on in lower case, so the name ends there), all of "Rolls-Royce".
func nameOfCompound(t string) (name string, rest bool) {
	parts := strings.Split(t, "-")
	for i, p := range parts[1:] {
		if r, _ := utf8.DecodeRuneInString(p); unicode.IsLower(r) {
			return strings.Join(parts[:i+1], "-"), true
		}
	}
	return t, false
}

// titleCase: most words after the first are capitalised (a question written in title case or in
// capitals), so capitals say nothing about which words form a name.
func titleCase(q string, locs [][]int) bool {
	caps := 0
	for _, l := range locs[min(1, len(locs)):] {
		if r, _ := utf8.DecodeRuneInString(q[l[0]:l[1]]); unicode.IsUpper(r) {
			caps++
		}
	}
	return len(locs) > 3 && caps*3 > (len(locs)-1)*2
}

// allLetters: every word is a single letter ("U.K."): an abbreviation, written many ways.
func allLetters(stems []string) bool {
	for _, s := range stems {
		if utf8.RuneCountInString(s) > 1 {
			return false
		}
	}
	return true
}

// writes reports whether document d writes the name: its words in order, at most one other word
// between two of them (a middle name: "King Wallis Vidor" for "King Vidor").
func (c *corpus) writes(d int, stems []string) bool {
	words := c.docWords[d]
	for i, w := range words {
		if w != stems[0] {
			continue
		}
		at, j := i, 1
		for ; j < len(stems); j++ {
			if at+1 < len(words) && words[at+1] == stems[j] {
				at++
			} else if at+2 < len(words) && words[at+2] == stems[j] {
				at += 2
			} else {
				break
			}
		}
		if j == len(stems) {
			return true
		}
	}
	return false
}

// unwrittenNames are the question's names of several words that the sources state word by word
// but no source writes: a combination of known names is something else. A name with a word no
// source states at all is left to name_absent.
func (s *scorer) unwrittenNames() []string {
	var out []string
	for _, p := range s.q.Phrases {
		known, written := true, false
		for _, w := range p.Stems {
			if !nameLinks[w] && s.c.docFreq[w] == 0 {
				known = false
			}
		}
		for _, stems := range slices.Concat(nameForms(p.Stems), s.c.spelledOut(p)) {
			for d := range s.c.docs {
				// Only a document that has the name's first word is read through.
				written = written || (s.c.docTerms[d][stems[0]] && s.c.writes(d, stems))
			}
		}
		written = written || s.c.writesTwoNames(p.Stems)
		if brand, codes := splitCodes(p.Text); !written && len(brand) > 0 && len(codes) > 0 {
			// "Corvane AquaLift AL-750" of a datasheet on the Corvane AquaLift range that lists the
			// AL-750: a model code names one item of what the rest of the name names.
			for d := range s.c.docs {
				written = written || (s.c.docTerms[d][brand[0]] && s.c.writes(d, brand) &&
					!slices.ContainsFunc(codes, func(c string) bool { return !s.c.docTerms[d][c] }))
			}
		}
		if known && !written {
			out = append(out, p.Text)
		}
	}
	return out
}

// writesTwoNames: a document writes the name as two names of two words or more each, one after
// the other in the question: "Halloway Freight Senior Data Engineer" of a job advert that writes
// "Halloway Freight Systems" and "Senior Data Engineer". "Clawshot Princess" is no such pair.
func (c *corpus) writesTwoNames(stems []string) bool {
	for i := 2; i+2 <= len(stems); i++ {
		a, b := stems[:i], stems[i:]
		if nameLinks[a[len(a)-1]] || nameLinks[b[0]] {
			continue
		}
		for d := range c.docs {
			if c.docTerms[d][a[0]] && c.docTerms[d][b[0]] && c.writes(d, a) && c.writes(d, b) {
				return true
			}
		}
	}
	return false
}

// splitCodes parts a name's words into those of its model codes (a word with a figure: "AL-750",
// "4B") and the rest, as stems.
func splitCodes(text string) (rest, codes []string) {
	for _, tok := range strings.Fields(text) {
		for _, w := range nlp.Words(tok) {
			if strings.ContainsAny(tok, "0123456789") {
				codes = append(codes, nlp.Stem(w))
			} else {
				rest = append(rest, nlp.Stem(w))
			}
		}
	}
	return rest, codes
}

// spelledOut are the forms of a name with an acronym of it spelled out as the sources spell it:
// "MTV VMAs" is written where the sources write "MTV Video Music Awards (VMAs)".
func (c *corpus) spelledOut(p namePhrase) [][]string {
	words := nlp.Words(p.Text)
	toks := strings.Fields(p.Text)
	if len(words) != len(p.Stems) || len(toks) != len(words) {
		return nil
	}
	var out [][]string
	for i, tok := range toks {
		base := tok
		if b, ok := pluralAcronym(tok); ok {
			base = b
		}
		if !reAcronym.MatchString(base) {
			continue
		}
		if e, ok := c.expansion(base); ok {
			var spelled []string
			for _, w := range nlp.Words(e) {
				spelled = append(spelled, nlp.Stem(w))
			}
			out = append(out, slices.Concat(p.Stems[:i], spelled, p.Stems[i+1:]))
		}
	}
	return out
}

// docWordsOf stems every word of a document's text, in order, and gives the set of its terms (the
// stems nlp.TermsBy keeps: no stopwords, no single letters).
func docWordsOf(text string, sc nlp.StemCache) ([]string, map[string]bool) {
	ws := nlp.Words(text)
	terms := map[string]bool{}
	for i, w := range ws {
		ws[i] = sc.Stem(w)
		if nlp.IsTerm(w) {
			terms[ws[i]] = true
		}
	}
	return ws, terms
}

// nameForms are the ways the sources may write a name of the question: as asked, or, for a name of
// three words or more, without one ordinary English word that a question capitalises with it:
// "Glastonbury Music Festival" for the sources' "Glastonbury Festival", "the Kanye West
// Foundation Partner with …" for "Kanye West Foundation". What is left is a name of two words at
// least, so "Royale Casino" or "Ten Eyes" stay names no source writes.
func nameForms(stems []string) [][]string {
	forms := [][]string{stems}
	if len(stems) < 3 {
		return forms
	}
	for i, w := range stems {
		if nameLinks[w] || !knownStem(w) {
			continue
		}
		rest := slices.Concat(stems[:i], stems[i+1:])
		if !nameLinks[rest[0]] && !nameLinks[rest[len(rest)-1]] {
			forms = append(forms, rest)
		}
	}
	return forms
}
