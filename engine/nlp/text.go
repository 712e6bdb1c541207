// Package nlp is the engines' text analysis: words (diacritics folded, possessives dropped),
// Snowball stems, stopwords, sentences, negation (negation.go) and BM25 term weights (bm25.go),
// with the small text helpers every engine package uses (collapse, truncate, Markdown escaping).
// It imports no other engine package.
package nlp

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// stopwords are left out of search terms and key phrases. Question words and auxiliaries are
// included: they say what kind of answer is wanted, not what it is about.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are aren't as at
		be because been before being below between both but by can cannot could couldn't did didn't do does
		doesn't doing don't down during each etc few for from further had has have having he her here hers
		herself him himself his how however i if in into is isn't it it's its itself just let me more most
		much must my myself no nor not now of off on once one only or other ought our ours ourselves out over
		own per same shall she should so some such than that the their theirs them themselves then there these
		they this those through to too under until up upon us very via vs versus was we were what when where
		whether which while who whom whose why will with within without would you your yours yourself
		yourselves get gets got getting say says said saying near across around along among beside beyond toward
		towards onto like can't won't wasn't weren't hasn't haven't hadn't shouldn't wouldn't mustn't needn't
		shan't mightn't ain't i'm i've i'd i'll you're you've you'd you'll we're we've we'd we'll they're they've
		they'd they'll he'd he'll she'd she'll it'll it'd that'll`) {
		m[w] = true
	}
	return m
}()

// questionWords start a new sub-question when they follow a conjunction.
var questionWords = map[string]bool{
	"what": true, "how": true, "why": true, "when": true, "where": true, "which": true, "who": true,
	"whom": true, "whose": true, "is": true, "are": true, "was": true, "were": true, "do": true,
	"does": true, "did": true, "can": true, "could": true, "should": true, "would": true, "will": true,
	"has": true, "have": true, "had": true, "list": true, "describe": true, "explain": true,
	"compare": true, "summarize": true, "summarise": true,
}

// requestVerbs open a request ("List the causes …", "Tell me about …"): there they say what to do,
// not what it is about. Elsewhere they are words like any other ("What list did she make?",
// "What does the display show?").
var requestVerbs = map[string]bool{"describe": true, "explain": true, "tell": true, "give": true, "list": true,
	"show": true, "compare": true, "summarize": true, "summarise": true, "discuss": true, "find": true, "name": true,
	"outline": true, "identify": true}

// IsRequestVerb: w (lower case) opens a request when it is a question's first word.
func IsRequestVerb(w string) bool { return requestVerbs[w] }

// IsStopword: w (lower case) is left out of search terms and key phrases.
func IsStopword(w string) bool { return stopwords[w] }

// IsQuestionWord: w (lower case) starts a new sub-question when it follows a conjunction.
func IsQuestionWord(w string) bool { return questionWords[w] }

// Words splits s into lower-cased runs of letters and digits (apostrophes kept inside words, a
// possessive "'s" dropped: "Line's" is "line").
func Words(s string) []string {
	if strings.Contains(s, "- ") {
		s = reBrokenWord.ReplaceAllStringFunc(s, joinBroken) // "nitro- gen", a word broken across a line
	}
	var out []string
	start := -1
	add := func(w string) {
		w = fold(strings.ToLower(strings.TrimRight(strings.ReplaceAll(w, "’", "'"), "'")))
		w = strings.Replace(w, "-", "", 1) // "e-books" is "ebooks", as sources also write it
		out = append(out, strings.TrimSuffix(w, "'s"))
	}
	for i, r := range s {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || ((r == '\'' || r == '’') && start >= 0) ||
			(r == '-' && start >= 0 && letterPrefix(s[start:i], s[i+1:]))
		if inWord && start < 0 {
			start = i
		}
		if !inWord && start >= 0 {
			add(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		add(s[start:])
	}
	return out
}

// reBrokenWord is a word hyphenated across a line break, as text copied from a PDF keeps it:
// "nitro-\ngen", its lines joined with a space.
var reBrokenWord = regexp.MustCompile(`\p{Ll}-\s+\p{Ll}+`)

// joinBroken joins a broken word's halves; "full- and part-time" stays apart.
func joinBroken(m string) string {
	i := strings.Index(m, "-")
	rest := strings.TrimSpace(m[i+1:])
	switch rest {
	case "and", "or", "to", "nor":
		return m
	}
	return m[:i] + rest
}

// letterPrefix: a hyphen after word so far and before rest joins a single letter to a word ("e-book",
// "X-ray", "T-shirt"), which is one word; other hyphens ("heat-pump", "Rolls-Royce") part two.
func letterPrefix(word, rest string) bool {
	r, n := utf8.DecodeRuneInString(word)
	next, _ := utf8.DecodeRuneInString(rest)
	return n == len(word) && unicode.IsLetter(r) && unicode.IsLetter(next)
}

// fold drops diacritics ("Beyoncé" is found by "Beyonce"): people type names without them.
func fold(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			// A transformer keeps state between calls: each use makes its own.
			t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
			if out, _, err := transform.String(t, w); err == nil {
				return out
			}
			return w
		}
	}
	return w
}

// Stem is the Snowball (Porter2) English stem of a lower-case word, so "costs" finds "cost" and
// "developer" finds "developing".
func Stem(w string) string {
	if base, ok := irregular[w]; ok {
		w = base
	}
	if w != "" && w[0] >= '0' && w[0] <= '9' {
		if o, ok := ordinalWords[w]; ok {
			w = o // "3rd" finds "third", "19th" "nineteenth"
		}
	}
	if len(w) >= 3 && strings.HasSuffix(w, "s") && !strings.ContainsAny(w[:len(w)-1], "aeiouy") {
		// An abbreviation's plural, which Snowball keeps whole for want of a vowel: "DVDs" finds
		// "DVD", "PCs" "PC".
		w = w[:len(w)-1]
	}
	s := english.Stem(americanSpelling(w), false)
	if len(w) >= 6 && (strings.HasSuffix(w, "ee") || strings.HasSuffix(w, "ees")) && strings.HasSuffix(s, "e") {
		// Agent nouns in -ee find their verb: "employees" finds "employs", "trainees" "trained".
		s = s[:len(s)-1]
	}
	return s
}

// ordinalWords maps ordinals written in digits to their words, up to the twentieth and the tens
// after it: sources write "the third generation" and "the 3rd generation" alike. Larger ones are
// written "twenty-fourth", which Words splits.
var ordinalWords = func() map[string]string {
	m := map[string]string{}
	words := strings.Fields(`first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
		thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth`)
	for i, o := range words {
		m[strconv.Itoa(i+1)+ordinalSuffix(i+1)] = o
	}
	for i, o := range strings.Fields("thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth") {
		n := 30 + 10*i
		m[strconv.Itoa(n)+"th"] = o
	}
	return m
}()

// ordinalSuffix is the suffix of n written as an ordinal in digits (1st, 2nd, 3rd, 4th, 11th).
func ordinalSuffix(n int) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// americanSpelling writes British -ise/-isation and -yse forms the American way, so that
// "specialises" finds "specialization" and "analysed" finds "analyzed". Short words keep theirs
// ("rise", "wise", "noise" are not -ize verbs).
func americanSpelling(w string) string {
	for _, suf := range []string{"isation", "isations", "ising", "ised", "ises", "iser", "isers", "ise", "yse", "ysed", "yses", "ysing"} {
		if at := len(w) - len(suf); strings.HasSuffix(w, suf) && at >= 4 {
			return w[:at+1] + "z" + w[at+2:] // the s of "is"/"ys"
		}
	}
	return w
}

// irregular maps irregular past forms to their verb, so "led" finds "lead" and "rose" finds "rise".
// Forms that are as often nouns or adjectives of their own ("ground", "wound", "bound", "bore", "crew")
// are left out; "left" and "found" are read as "leave" and "find", their commonest use in text
// ("founded" keeps its own stem).
var irregular = func() map[string]string {
	m := map[string]string{}
	for _, pair := range strings.Fields(`led:lead rose:rise risen:rise fell:fall fallen:fall grew:grow grown:grow
		paid:pay spent:spend built:build sold:sell bought:buy won:win held:hold began:begin begun:begin
		brought:bring chose:choose chosen:choose drew:draw drawn:draw drove:drive driven:drive fought:fight
		gave:give given:give went:go gone:go knew:know known:know lost:lose made:make meant:mean met:meet
		ran:run said:say saw:see seen:see sent:send sought:seek spoke:speak spoken:speak stood:stand
		struck:strike taught:teach told:tell thought:think threw:throw thrown:throw took:take taken:take
		understood:understand wrote:write written:write slept:sleep kept:keep lent:lend shrank:shrink
		shrunk:shrink sank:sink sunk:sink flew:fly flown:fly fled:flee fed:feed froze:freeze frozen:freeze
		hid:hide hidden:hide rode:ride sped:speed stole:steal stolen:steal swore:swear sworn:swear
		withdrew:withdraw withdrawn:withdraw undertook:undertake overtook:overtake forgot:forget
		forgotten:forget broke:break broken:break chose:choose wore:wear worn:wear tore:tear torn:tear
		ate:eat eaten:eat did:do done:do felt:feel dealt:deal came:come became:become overcame:overcome
		heard:hear caught:catch bent:bend bitten:bite blew:blow blown:blow bred:breed burnt:burn clung:cling
		crept:creep drank:drink dug:dig flung:fling forbade:forbid forbidden:forbid hung:hang knelt:kneel
		laid:lay lain:lie leapt:leap learnt:learn lit:light rang:ring sang:sing sung:sing sat:sit
		shaken:shake shook:shake shone:shine shown:show proven:prove slain:slay slew:slay slid:slide
		sprang:spring sprung:spring spun:spin stuck:stick stung:sting strode:stride strove:strive swam:swim
		swept:sweep swollen:swell swung:swing trod:tread woke:wake woken:wake wept:weep wove:weave
		woven:weave ridden:ride underwent:undergo undergone:undergo arose:arise arisen:arise oversaw:oversee
		overseen:oversee withheld:withhold upheld:uphold rebuilt:rebuild overthrew:overthrow
		overthrown:overthrow forgave:forgive forgiven:forgive foresaw:foresee left:leave found:find`) {
		k, v, _ := strings.Cut(pair, ":")
		m[k] = v
	}
	return m
}()

// Terms are the search terms of s: content words, stemmed.
func Terms(s string) []string { return TermsBy(s, Stem) }

// StemCache memoises stems: building a corpus stems the same few thousand words hundreds of
// thousands of times, and stemming dominated its cost.
type StemCache map[string]string

// Stem is Stem, remembered.
func (sc StemCache) Stem(w string) string {
	if s, ok := sc[w]; ok {
		return s
	}
	s := Stem(w)
	sc[w] = s
	return s
}

// TermsBy is terms with a given stemmer.
func TermsBy(s string, stem func(string) string) []string {
	ws := Words(s)
	out := ws[:0]
	for _, w := range ws {
		if !IsTerm(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// IsTerm: word w (as Words gives it) is searched for: no stopword, and two letters or more unless
// it is a number.
func IsTerm(w string) bool {
	return !stopwords[w] && (utf8.RuneCountInString(w) >= 2 || IsDigits(w))
}

// IsDigits: s is a run of digits.
func IsDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// Uniq keeps the first occurrence of each string, in order.
func Uniq(xs []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Sentences splits a passage into sentences at ., ! or ? followed by a space or the end, and at
// line breaks (list items and table rows are sentences of their own).
func Sentences(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+1 < len(line) && line[i+1] != ' ' {
				continue
			}
			// Keep "e.g. x", "Dr. Y" and "3. item" together: a period after a short token is not an end.
			if c == '.' && ShortToken(line[start:i]) {
				continue
			}
			if seg := strings.TrimSpace(line[start : i+1]); seg != "" {
				out = append(out, seg)
			}
			start = i + 1
		}
		if seg := strings.TrimSpace(line[start:]); seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// ShortToken: the last token of s is short or dotted ("e.g", "Dr", "U.S"): a period after it does
// not end a sentence.
func ShortToken(s string) bool {
	i := strings.LastIndexAny(s, " \t(")
	tok := s[i+1:]
	// "F.C", "U.S", "Ph.D": a dotted abbreviation, not a sentence end.
	return len(tok) <= 2 || tok == "e.g" || tok == "i.e" || tok == "etc" || tok == "vs" || strings.Contains(tok, ".")
}

// Collapse joins whitespace runs into single spaces.
func Collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s to at most n runes at a word boundary, adding an ellipsis.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// EscapeMarkdown keeps quoted source text from being read as Markdown structure: inline markup
// characters are escaped, and so is anything that would start a block (heading, list, quote).
func EscapeMarkdown(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '#', '+', '-', '=':
			if i == 0 {
				b.WriteByte('\\')
			}
		}
		writeEscaped(&b, r)
	}
	out := b.String()
	// "1. x" at the start is an ordered list.
	if j := strings.IndexFunc(out, func(r rune) bool { return !unicode.IsDigit(r) }); j > 0 && (out[j] == '.' || out[j] == ')') {
		out = out[:j] + `\` + out[j:]
	}
	return out
}

// EscapeMarkdownInline escapes the inline markup characters of text that cannot start a line
// (a quotation inside “…”): "1.2 A Flex membership" stays as it is written.
func EscapeMarkdownInline(s string) string {
	var b strings.Builder
	for _, r := range s {
		writeEscaped(&b, r)
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, r rune) {
	switch r {
	case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~':
		b.WriteByte('\\')
	}
	b.WriteRune(r)
}

// HumanName turns snake_case and camelCase names into words.
func HumanName(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return b.String()
}
