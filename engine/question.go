package engine

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// depth is how far a run goes at an effort level.
type depth struct {
	SubQuestions int  // sections of the report
	Passages     int  // quoted passages per section
	KeyTerms     bool // a key-terms section
	Limitations  bool // a limitations section
	Site         bool // a static HTML site under site/
}

var depths = map[string]depth{
	EffortLow:    {SubQuestions: 2, Passages: 2},
	EffortMedium: {SubQuestions: 4, Passages: 3, Limitations: true},
	EffortHigh:   {SubQuestions: 6, Passages: 4, Limitations: true, KeyTerms: true},
	EffortBuild:  {SubQuestions: 8, Passages: 5, Limitations: true, KeyTerms: true, Site: true},
}

// conjunctions join clauses; when the word after one starts a question, the clause is split there.
var conjunctions = map[string]bool{
	"and": true, "or": true, "but": true, "while": true, "whereas": true, "plus": true, "also": true,
	"then": true,
}

// subQuestion is a section of the report: the question shown and the terms searched for it.
type subQuestion struct {
	Text    string
	Terms   []string
	Numbers bool     // prefer passages with figures
	Must    []string // when set, a passage must contain one of these terms (a facet's subject)
}

func plainSub(text string) subQuestion {
	text = asQuestion(text)
	return subQuestion{Text: text, Terms: terms(text)}
}

// subQuestions decomposes a question with deterministic heuristics, most specific first:
//  1. sentences and semicolon clauses;
//  2. a clause is split at a conjunction that is followed by a question word ("what is X and how
//     does it affect Y");
//  3. a coordinated pair or list of single words ("the costs and benefits of X", "solar vs wind")
//     becomes one sub-question per member;
//  4. key noun phrases (runs of content words) of the whole question become focus questions.
//
// At most max are returned, deduplicated by their search terms.
func subQuestions(q string, max int) []subQuestion {
	q = collapse(q)
	var clauses []string
	for _, s := range splitClauses(q) {
		clauses = append(clauses, splitAtQuestionWords(s)...)
	}
	var out []subQuestion
	seen := map[string]bool{}
	addSub := func(sq subQuestion) {
		key := termKey(sq.Text)
		if key == "" || seen[key] || len(out) >= max {
			return
		}
		seen[key] = true
		out = append(out, sq)
	}
	add := func(s string) { addSub(plainSub(s)) }
	for _, c := range clauses {
		if parts := distribute(c); len(parts) > 1 && len(clauses)+len(parts)-1 <= max {
			for _, p := range parts {
				add(p)
			}
			continue
		}
		add(c)
	}
	// Facets of the main subject, then the other key phrases, while the budget lasts. A phrase
	// already covered by an earlier sub-question adds nothing.
	phrases := keyPhrases(q)
	if len(phrases) > 0 {
		main := phrases[0]
		for _, f := range facets {
			addSub(f.apply(main))
		}
	}
	for _, ph := range phrases {
		if !covered(ph, out) {
			add("What do the sources say about " + ph)
		}
	}
	if len(out) == 0 {
		out = append(out, plainSub(q))
	}
	return out
}

// facets are generic research angles on the question's main subject; they give deeper efforts
// more distinct sections than the question's own clauses.
// Each searches for the subject plus words that signal the angle (the template's own wording,
// like "reported", would only find passages that happen to use it).
var facets = []facetTemplate{
	{text: "What {is} {}", expand: "defined definition means refers"},
	{text: "What figures are reported for {}", expand: "percent number total average rate", numbers: true},
	{text: "What are the drawbacks or limitations of {}", expand: "drawback limitation disadvantage risk barrier problem challenge however"},
	{text: "How {has} {} changed over time", expand: "trend growth increase decrease since year", numbers: true},
}

type facetTemplate struct {
	text, expand string
	numbers      bool
}

// apply fills the template, agreeing the verb with a plural-looking subject.
func (f facetTemplate) apply(subject string) subQuestion {
	is, has := "is", "has"
	last := strings.ToLower(subject[strings.LastIndexByte(subject, ' ')+1:])
	if strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") {
		is, has = "are", "have"
	}
	text := strings.NewReplacer("{is}", is, "{has}", has, "{}", subject).Replace(f.text)
	subj := terms(subject)
	return subQuestion{Text: asQuestion(text), Terms: append(subj, terms(f.expand)...), Numbers: f.numbers, Must: subj}
}

// covered: every term of phrase already appears in one of the sub-questions.
func covered(phrase string, subs []subQuestion) bool {
	want := uniq(terms(phrase))
	for _, s := range subs {
		have := map[string]bool{}
		for _, t := range s.Terms {
			have[t] = true
		}
		all := true
		for _, t := range want {
			all = all && have[t]
		}
		if all {
			return true
		}
	}
	return false
}

// termKey identifies a sub-question by its sorted distinct search terms.
func termKey(s string) string {
	ts := uniq(terms(s))
	slices.Sort(ts)
	return strings.Join(ts, " ")
}

// splitClauses cuts at sentence ends and semicolons.
func splitClauses(q string) []string {
	var out []string
	start := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		end := c == '?' || c == ';' || c == '!' || c == '\n' ||
			(c == '.' && (i+1 == len(q) || q[i+1] == ' ') && !shortToken(q[start:i]))
		if !end {
			continue
		}
		if s := strings.TrimSpace(q[start:i]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(q[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// splitAtQuestionWords splits "A and how B" / "A, why B" into "A" and "how B".
func splitAtQuestionWords(s string) []string {
	fields := strings.Fields(s)
	var out []string
	start := 0
	for i := 1; i+1 < len(fields); i++ {
		w := bare(fields[i])
		next := bare(fields[i+1])
		commaBefore := strings.HasSuffix(fields[i-1], ",")
		switch {
		case conjunctions[w] && questionWords[next] && i > start:
			out = append(out, strings.TrimRight(strings.Join(fields[start:i], " "), ","))
			start = i + 1
		case commaBefore && isWh(w) && i > start:
			out = append(out, strings.TrimRight(strings.Join(fields[start:i], " "), ","))
			start = i
		}
	}
	out = append(out, strings.Join(fields[start:], " "))
	return out
}

func isWh(w string) bool {
	switch w {
	case "what", "how", "why", "when", "where", "which", "who":
		return true
	}
	return false
}

func bare(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// distribute expands the first coordination of single content words: "the costs and benefits of
// X" → "the costs of X", "the benefits of X"; "A, B and C" → three; "solar vs wind" → two.
func distribute(s string) []string {
	fields := strings.Fields(s)
	for i := 1; i+1 < len(fields); i++ {
		w := bare(fields[i])
		if w != "and" && w != "or" && w != "vs" && w != "versus" {
			continue
		}
		right := bare(fields[i+1])
		if right == "" || stopwords[right] || questionWords[right] {
			continue
		}
		// Walk left over "A, B, C" style members.
		members := []int{i + 1}
		j := i - 1
		for j >= 0 {
			m := bare(fields[j])
			if m == "" || stopwords[m] || questionWords[m] {
				break
			}
			members = append([]int{j}, members...)
			if j > 0 && strings.HasSuffix(fields[j-1], ",") {
				j--
				continue
			}
			break
		}
		if len(members) < 2 {
			continue
		}
		first, last := members[0], members[len(members)-1]
		// "the link between A and B" asks about the pair, not about each member.
		if slices.ContainsFunc(fields[:first], func(f string) bool {
			b := bare(f)
			return b == "between" || b == "among" || b == "both"
		}) {
			return []string{s}
		}
		var out []string
		for _, m := range members {
			word := strings.TrimRight(fields[m], ",")
			parts := append(append(slices.Clone(fields[:first]), word), fields[last+1:]...)
			out = append(out, strings.Join(parts, " "))
		}
		return out
	}
	return []string{s}
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
		if w == "" || stopwords[w] || questionWords[w] || commonVerbs[w] || (utf8.RuneCountInString(w) < 3 && !isDigits(w)) {
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
func KeyPhrases(q string) []string { return keyPhrases(collapse(q)) }
