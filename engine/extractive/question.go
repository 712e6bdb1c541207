package extractive

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// depth is how far an extractive run goes at an effort level (README: "The extractive engine").
type depth struct {
	SubQuestions int           // sub-questions researched at most (the question's own clauses)
	Candidates   int           // candidate sentences the answer model scores per sub-question
	Items        int           // sentences of a list, comparison, reason or briefing answer
	Hop          bool          // follow a name the best passage introduces into another document (a second search)
	Sources      int           // documents read closely per sub-question
	Answers      int           // answer sentences per sub-question
	Support      int           // further quotes per sub-question
	Queries      int           // web searches at most, with a search provider
	Pages        int           // pages read per web search
	Budget       time.Duration // research time; past it the report is written from what was found
	Site         bool          // a static site under site/ (effort build)
}

var depths = map[string]depth{
	engine.EffortLow:    {SubQuestions: 2, Candidates: 40, Items: 4, Hop: true, Sources: 3, Answers: 1, Support: 1, Queries: 1, Pages: 3, Budget: time.Minute},
	engine.EffortMedium: {SubQuestions: 3, Candidates: 80, Items: 6, Hop: true, Sources: 6, Answers: 2, Support: 2, Queries: 2, Pages: 4, Budget: 3 * time.Minute},
	engine.EffortHigh:   {SubQuestions: 5, Candidates: 160, Items: 8, Hop: true, Sources: 12, Answers: 2, Support: 4, Queries: 4, Pages: 5, Budget: 10 * time.Minute},
	engine.EffortBuild:  {SubQuestions: 5, Candidates: 160, Items: 8, Hop: true, Sources: 12, Answers: 2, Support: 4, Queries: 4, Pages: 5, Budget: 10 * time.Minute, Site: true},
}

// conjunctions join clauses; when the word after one starts a question, the clause is split there.
var conjunctions = map[string]bool{
	"and": true, "or": true, "but": true, "while": true, "whereas": true, "plus": true, "also": true,
	"then": true,
}

// subQuestion is a part of the question researched on its own.
type subQuestion struct {
	Text string
	// Carry are terms of an earlier clause's subject, for a clause that refers to it by a pronoun
	// ("What is a heat pump and how does it save energy?").
	Carry []string
	// Subject are terms every answering passage must mention, in itself or its context (an answer
	// session's Assignment.Subject).
	Subject []string
	// Part: the clause spells out part of a briefing ("brief me on X: what it treats, how to take
	// it"); it is answered as a briefing on that part, from passages that name X (Subject).
	Part bool
}

func plainSub(text string) subQuestion { return subQuestion{Text: asQuestion(text)} }

// pronouns stand for an earlier clause's subject.
var pronouns = map[string]bool{"it": true, "they": true, "them": true, "this": true, "these": true, "its": true,
	"their": true, "those": true, "he": true, "she": true, "him": true, "her": true, "his": true, "each": true, "one": true, "ones": true}

// subQuestions cuts a question into the parts it asks, in its own words, most specific first:
//  1. sentences and semicolon clauses;
//  2. a clause is split at a conjunction followed by a question word ("what is X and how does it
//     affect Y"), or at a comma or colon before one ("brief me on X: what it treats, how to take
//     it"); a part that says "it" ("each one") or comes after such a colon carries the earlier
//     part's subject terms;
//  3. a coordinated pair or list of single words ("the costs and benefits of X", "solar vs wind")
//     becomes one sub-question per member.
//
// Nothing is added from templates: a simple question is one sub-question. At most max are
// returned, deduplicated by their search terms.
func subQuestions(q string, max int) []subQuestion {
	q = dashedQuestions(nlp.Collapse(q))
	var clauses []clause
	for _, s := range splitClauses(q) {
		if parts, ok := briefingList(s); ok {
			clauses = append(clauses, parts...)
			continue
		}
		clauses = append(clauses, splitAtQuestionWords(s)...)
	}
	var out []subQuestion
	seen := map[string]bool{}
	var subject []string
	briefing := false  // the clauses after the colon are the parts of a briefing
	var names []string // the names the briefing is on, which each of its parts is about
	add := func(c clause) {
		sq := plainSub(c.text)
		key := termKey(sq.Text)
		if c.elaborates && briefing {
			// "how to get there" is a part of the trip to Sarvela, though all its words are common.
			sq.Subject, sq.Part = names, true
			key = strings.Join(echoWords(sq.Text, names), " ") // "get there", "get around"
		}
		if key == "" || seen[key] || len(out) >= max {
			return
		}
		if c.elaborates || slices.ContainsFunc(nlp.Words(c.text), func(w string) bool { return pronouns[w] }) {
			// A part that refers back ("what does each one mean") or spells out what comes before
			// a colon ("brief me on X: what it treats, what to watch out for") is about the earlier
			// part's subject.
			sq.Carry = subject
		}
		if subject == nil {
			subject = subjectOf(c.text)
		}
		seen[key] = true
		out = append(out, sq)
	}
	for i, c := range clauses {
		if i == 0 && len(clauses) > 1 && clauses[1].elaborates && shapeOf(nlp.Words(c.text)) == shapeBrief {
			// "Brief me on X: what it treats, how to take it": the briefing is its parts; the
			// clause before the colon only announces them.
			briefing, subject, names = true, subjectOf(c.text), analyze(c.text).Names
			continue
		}
		add(c)
	}
	if len(out) == 0 {
		out = append(out, plainSub(q))
	}
	return out
}

// subjectOf is what a clause is about, as terms: its two longest key phrases that are not a
// request or a briefing's word ("trip" and "Sarvela" of "give me an overview of a trip to Sarvela",
// not "give" or "overview"), and its names ("E34" of "my dryer stopped mid-cycle and the display
// says E34").
func subjectOf(text string) []string {
	var out []string
	n := 0
	for _, p := range keyPhrases(text) {
		ws := nlp.Words(p)
		if n < 2 && shapeOf(ws) != shapeBrief && !slices.ContainsFunc(ws, nlp.IsRequestVerb) {
			out = append(out, nlp.Terms(p)...)
			n++
		}
	}
	return nlp.Uniq(append(out, analyze(text).Names...))
}

// reSpacedDash is a dash set apart by spaces, as a writer joins two sentences with it.
var reSpacedDash = regexp.MustCompile(` [-–—] `)

// dashedQuestions ends a sentence at a spaced dash that a question follows: "Summarise the data
// engineer job for me - is it worth applying?" asks two things; "doing a school project on X - who
// taught him?" states what the question that follows is about.
func dashedQuestions(q string) string {
	locs := reSpacedDash.FindAllStringIndex(q, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		if rest := strings.Fields(q[locs[i][1]:]); len(rest) > 1 && opensQuestion(rest) {
			end := "? "
			if !asks(strings.Fields(q[:locs[i][0]])) {
				end = ". " // "doing a school project on X - who taught him?": a statement, then the question
			}
			q = q[:locs[i][0]] + end + strings.ToUpper(q[locs[i][1]:locs[i][1]+1]) + q[locs[i][1]+1:]
		}
	}
	return q
}

// opensQuestion: the words open a question: a question word, or an auxiliary before its subject.
func opensQuestion(ws []string) bool {
	w := firstWord(ws[0])
	return nlp.IsQuestionWord(w) || isWh(w) || opensYesNo(bare(w)) && opensClause(ws)
}

// onlyRequest: a clause asks for nothing of its own, only how to answer ("Give me the gist",
// "Please summarise"): it has no subject and asks for a briefing.
func onlyRequest(s string) bool {
	return len(subjectOf(s)) == 0 && shapeOf(nlp.Words(s)) == shapeBrief
}

// termKey identifies a sub-question by its sorted distinct search terms.
func termKey(s string) string {
	ts := nlp.Uniq(nlp.Terms(s))
	slices.Sort(ts)
	return strings.Join(ts, " ")
}

// splitClauses cuts at sentence ends and semicolons. A statement before a question is what the
// question is about, not a question of its own: "Homer's Odyssey is the third episode of The
// Simpsons. What character first appears in this episode?" and "I have a Kestrel dryer. How do I
// clean its filter?" are one clause each, the statement kept with its full stop.
func splitClauses(q string) []string {
	var out []string
	start := 0
	var context []string // statements waiting for the question they introduce
	for i := 0; i <= len(q); i++ {
		var c byte
		if i < len(q) {
			c = q[i]
		}
		end := i == len(q) || c == '?' || c == ';' || c == '!' || c == '\n' ||
			(c == '.' && (i+1 == len(q) || q[i+1] == ' ') && !nlp.ShortToken(q[start:i]))
		if !end {
			continue
		}
		s := strings.TrimSpace(q[start:i])
		start = i + 1
		switch {
		case s == "":
		case c == '.' && !asks(strings.Fields(s)):
			context = append(context, s)
		case len(out) > 0 && len(context) == 0 && onlyRequest(s):
			// "How do I claim expenses? Give me the gist.": a request about how to answer the
			// question before it, not a question of its own.
			out[len(out)-1] += ". " + s
		default:
			out = append(out, strings.Join(append(context, s), ". "))
			context = nil
		}
	}
	return append(out, context...) // statements no question follows are what is asked
}

// briefingList splits a briefing that lists its topics after a colon ("Give me an overview of the
// travel policy: booking trains and flights, hotels and meals") into the announcement and one part
// per topic. The list is cut at its commas and at the last "and" or "or", so a topic of its own
// words joined by "and" ("booking trains and flights") stays whole unless it comes last.
func briefingList(s string) ([]clause, bool) {
	before, after, ok := strings.Cut(s, ":")
	if !ok || shapeOf(nlp.Words(before)) != shapeBrief ||
		slices.ContainsFunc(nlp.Words(after), func(w string) bool { return isWh(w) || nlp.IsQuestionWord(w) }) {
		return nil, false
	}
	items := strings.Split(strings.TrimRight(strings.TrimSpace(after), "."), ",")
	last := strings.TrimSpace(items[len(items)-1])
	for _, conj := range []string{" and ", " or "} {
		if i := strings.LastIndex(last, conj); i > 0 && len(items) > 1 {
			items = append(items[:len(items)-1], last[:i], last[i+len(conj):])
			break
		}
	}
	out := []clause{{text: strings.TrimSpace(before)}}
	for _, it := range items {
		if it = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(it), "and ")); it != "" {
			out = append(out, clause{text: it, elaborates: true})
		}
	}
	return out, len(out) > 2
}

// clause is a part of a question; elaborates: it comes after a colon, spelling out what precedes it.
type clause struct {
	text       string
	elaborates bool
}

// splitAtQuestionWords splits "A and how B" / "A, why B" / "A: what B" into "A" and "how B".
func splitAtQuestionWords(s string) []clause {
	fields := strings.Fields(s)
	var out []clause
	start := 0
	colon := false // a part before this one ended in a colon
	for i := 1; i+1 < len(fields); i++ {
		w := firstWord(fields[i]) // "what's" is "what"
		next := firstWord(fields[i+1])
		prev := fields[i-1]
		commaBefore := strings.HasSuffix(prev, ",") || strings.HasSuffix(prev, ":")
		switch {
		case conjunctions[w] && nlp.IsQuestionWord(next) && i > start && opensClause(fields[i+1:]):
			out = append(out, clause{strings.TrimRight(strings.Join(fields[start:i], " "), ","), colon})
			start = i + 1
		case commaBefore && isWh(w) && i > start && (strings.HasSuffix(prev, ":") || asks(fields[start:i])):
			out = append(out, clause{strings.TrimRight(strings.Join(fields[start:i], " "), ",:"), colon})
			colon = colon || strings.HasSuffix(prev, ":")
			start = i
		}
	}
	return append(out, clause{strings.Join(fields[start:], " "), colon})
}

// asks: a part of a question before a comma asks something itself ("who pays, why now"), as a
// fronted phrase does not: "As of 2012, how many downloads …", "According to Shields, which …"
// are one question each, the phrase a part of what is asked.
func asks(part []string) bool {
	text := strings.Join(part, " ")
	if i := strings.LastIndexAny(text, ".?!"); i >= 0 && i+1 < len(text) && text[i+1] == ' ' {
		// A statement before the question ("My dryer shows E34. What's wrong with it, how long
		// …"; splitClauses): the question begins after it.
		text = text[i+1:]
	}
	ws := nlp.Words(text)
	for len(ws) > 1 && (conjunctions[ws[0]] || leadAdverbs[ws[0]]) {
		ws = ws[1:] // "Also, what does a paused month cost, …"
	}
	return len(ws) > 0 && (nlp.IsQuestionWord(ws[0]) || nlp.IsRequestVerb(ws[0]) || shapeOf(ws) == shapeBrief)
}

// opensClause: the words after a conjunction open a question of their own. An auxiliary does so
// only before its subject ("and is it safe", "or does the pump …"); before anything else it goes
// on the question's own subject: "Who almost picked up Kanye but was ultimately swayed?".
func opensClause(rest []string) bool {
	if !opensYesNo(bare(rest[0])) {
		return true
	}
	if len(rest) < 2 {
		return false
	}
	next := strings.Trim(rest[1], `"'“‘(`)
	r, _ := utf8.DecodeRuneInString(next)
	return subjectOpeners[bare(next)] || unicode.IsUpper(r) || unicode.IsDigit(r)
}

// subjectOpeners begin the subject of a clause: a pronoun or a determiner.
var subjectOpeners = map[string]bool{"it": true, "they": true, "he": true, "she": true, "there": true,
	"this": true, "that": true, "these": true, "those": true, "we": true, "you": true, "i": true,
	"the": true, "a": true, "an": true, "its": true, "their": true, "his": true, "her": true, "my": true,
	"your": true, "our": true, "each": true, "any": true, "some": true, "all": true}

func isWh(w string) bool {
	switch w {
	case "what", "how", "why", "when", "where", "which", "who":
		return true
	}
	return false
}

// leadAdverbs open a question that follows another without changing what it asks.
var leadAdverbs = map[string]bool{"so": true, "finally": true, "lastly": true, "additionally": true, "besides": true, "next": true}

// firstWord is the first of the words a token holds, as nlp.Words reads them ("what's": "what").
func firstWord(tok string) string {
	if ws := nlp.Words(tok); len(ws) > 0 {
		return ws[0]
	}
	return ""
}

func bare(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// commonVerbs end a key phrase ("how does solar power affect running costs" has two phrases).
var commonVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`affect affects affected impact impacts influence influences change changes
		changed cause causes caused make makes made use uses used work works worked need needs needed get gets
		got reduce reduces reduced increase increases increased improve improves improved compare compared
		differ differs relate relates related lead leads led help helps helped say says said mean means meant
		become becomes became depend depends provide provides offer offers require requires compete competes
		matter matters perform performs go goes went take takes took happen happens`) {
		m[w] = true
	}
	return m
}()

// keyPhrases are maximal runs of content words in the question, longest first, then in order.
func keyPhrases(q string) []string {
	type phrase struct {
		text     string
		n, order int
	}
	var ps []phrase
	var run []string
	flush := func() {
		// A phrase ends in a noun: drop trailing predicative adjectives ("tidal power predictable").
		for len(run) > 1 && adjectiveLike(run[len(run)-1]) {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			ps = append(ps, phrase{strings.Join(run, " "), len(run), len(ps)})
		}
		run = nil
	}
	for i, f := range strings.Fields(q) {
		w := bare(f)
		if w == "" || nlp.IsStopword(w) || nlp.IsQuestionWord(w) || commonVerbs[w] || (utf8.RuneCountInString(w) < 3 && !nlp.IsDigits(w)) {
			flush()
			continue
		}
		if len(run) == 4 {
			flush()
		}
		word := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if i == 0 && word != strings.ToUpper(word) {
			// Sentence case, not a name: "Heat pump adoption" → "heat pump adoption".
			r, n := utf8.DecodeRuneInString(word)
			word = string(unicode.ToLower(r)) + word[n:]
		}
		run = append(run, word)
		if strings.ContainsAny(f, ",;:?!.") {
			flush()
		}
	}
	flush()
	slices.SortStableFunc(ps, func(a, b phrase) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return a.order - b.order
	})
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.text)
	}
	return out
}

// adjectiveLike is a suffix test for adjectives; without a part-of-speech tagger it only has to be
// right often enough to keep phrases ending in nouns.
func adjectiveLike(w string) bool {
	w = strings.ToLower(w)
	for _, suf := range []string{"able", "ible", "ous", "ful", "less"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

// asQuestion capitalises the first letter and ends the text with a question mark.
func asQuestion(s string) string {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ",;:.?!"))
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:] + "?"
}

// SubQuestions is the decomposition a run would research for q (at most max), as plain text: the
// planning preview of an expert shows what research would pursue without running it.
func SubQuestions(q string, max int) []string {
	subs := subQuestions(q, max)
	out := make([]string, 0, len(subs))
	for _, s := range subs {
		out = append(out, s.Text)
	}
	return out
}

// KeyPhrases are the question's runs of content words, longest first.
func KeyPhrases(q string) []string { return keyPhrases(nlp.Collapse(q)) }
