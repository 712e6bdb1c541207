package extractive

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// answerType is the kind of value a question asks for; a passage without one is a weak answer.
type answerType int

const (
	typeAny answerType = iota
	typeNumber
	typeMoney
	typePercent
	typeTemperature
	typeTime
	typePerson
	typePlace
	typeOrg
)

// Kinds of question by the shape of answer they want (question analysis): one fact, a
// definition, a reason, several items, a comparison, or a briefing on a subject.
type questionShape int

const (
	shapeFactoid questionShape = iota
	shapeDefinition
	shapeReason
	shapeList
	shapeCompare
	shapeBrief
)

// query is a question read for answering: what it is about, what it asks for and what any answer
// must mention.
type query struct {
	Text  string
	Terms []string // distinct stemmed content words, question framing left out
	// Ordered are the same words in the question's order, repeats kept (its bigrams).
	Ordered []string
	Shape   questionShape
	// Attribute is what is asked about ("the battery" in "how large is the battery on the ferry"):
	// an answer must itself mention one of these terms. Empty when the question asks for a value of
	// a kind (AttrType: "what temperature", "what share") or has no such phrase.
	Attribute []string
	AttrType  bool
	// Asked: whether the question word asks for the attribute by name, so that an answering
	// document names it (asksByName); otherwise the attribute is only the subject of the question
	// ("when did X open").
	Asked   askedBy
	Numbers []string // numbers in the question ("2023", "3.4"): an answer must be about them
	// Counted are the numbers it writes in words ("four men"; wordNumbers): an answer is about them
	// too, but sources refer to them in more ways than to a figure ("a pair", "both"), so only the
	// fitted model reads them (numbers_missing); no rule refuses for them.
	Counted []string
	Names   []string     // stemmed words of proper names: an answer's document must mention them
	Phrases []namePhrase // names of several words, as written (names.go)
	Type    answerType
	Extreme int // +1 highest, -1 lowest, 0 neither (tables are compared)
	// Open questions ask what happened or why ("what did the council decide", "how does X affect
	// Y", "why"): the sentence after the best match often carries the outcome, so it joins the answer.
	Open  bool
	Count bool // "how many": the figure should count what is asked about ("24,966 participants")
	Often bool // "how often": a frequency answers ("two days a week", "every 20 minutes", "annually")
	Year  bool // "what year", "in which year": a passage answers by giving one
	// Clock: "what time does the museum close?", "how late can customers sit out?" ask for a time
	// of day ("17:00"); only a passage near the best that gives one answers (valueLead).
	Clock bool
	// Negated: the question denies something ("which players did not ...", "never"); an answer
	// usually does too.
	Negated bool
	Plural  bool // "what are the main causes": several things are asked for
	// Syn and Units are other words that state a term: synonyms (full weight) and, for a measure,
	// the units it is stated in (half weight). See concepts.go.
	Syn, Units map[string][]string
	surface    map[string]string // stem → the question's own word, to name what is missing
	measure    string            // the measure a "how deep"-type question asks for (searched when sources use the word)
	dimension  string            // the dimension a figure asked for is measured in ("how many litres": volume; units.go)
	// part: the question is a part of a briefing ("when to go" in "brief me on a trip to Sarvela:
	// how to get there, when to go"); partOf are the briefing's names ("Sarvela").
	part   bool
	partOf []string
	// carried are the terms the question takes from the briefing it is a part of ("walking",
	// "Tollmere"): what the whole is about, not what the part asks.
	carried []string
	// premise are the terms only the asker's situation states ("registered" of "I'm 68 and
	// registered at Hollins Green. Can I get the vaccine?"; premise.go)
	premise map[string]bool
}

var (
	reWhIs  = regexp.MustCompile(`(?i)\b(what|who|where|when|how|why)['’]s\b`)
	reWhats = regexp.MustCompile(`(?i)\b(what|where|how)s\b`)
	// reOwnAge is an age the asker gives of themselves or their family: "I'm 68", "my dad is 72".
	reOwnAge      = regexp.MustCompile(`(?i)\b(i'm|i’m|i am|he's|he is|she's|she is|(?:my|our) \w+ is|(?:my|our) \w+'s)\s+\d{1,3}(?:\s+years(?: old)?)?\b`)
	reQueryNumber = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	reWordToken   = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'’_.\-–]*`)
)

// frameWords only shape a question ("how many", "how large"): they are never searched for.
var frameWords = map[string]bool{
	"many": true, "much": true, "large": true, "long": true, "big": true, "high": true, "far": true,
	"fast": true, "heavy": true, "old": true, "tall": true, "deep": true, "wide": true, "often": true,
	"hot": true, "cold": true, "warm": true, "kind": true, "sort": true, "type": true,
}

// typeNouns name the kind of value asked for ("what share of ...").
var typeNouns = map[string]answerType{
	"share": typePercent, "percentage": typePercent, "percent": typePercent, "proportion": typePercent,
	"fraction": typePercent, "temperature": typeTemperature, "number": typeNumber, "amount": typeNumber,
	"count": typeNumber, "total": typeNumber, "quantity": typeNumber, "year": typeTime, "date": typeTime,
	"day": typeTime, "month": typeTime, "time": typeTime, "price": typeMoney, "cost": typeMoney,
}

var (
	extremeHigh = map[string]bool{"highest": true, "largest": true, "most": true, "biggest": true, "greatest": true,
		"maximum": true, "top": true, "peak": true, "best": true, "busiest": true, "longest": true, "strongest": true,
		"dearest": true, "heaviest": true, "oldest": true, "fastest": true, "deepest": true, "tallest": true, "hottest": true}
	extremeLow = map[string]bool{"lowest": true, "smallest": true, "least": true, "fewest": true, "minimum": true,
		"worst": true, "cheapest": true, "shortest": true, "weakest": true, "quietest": true, "lightest": true,
		"youngest": true, "slowest": true, "coldest": true}
	// extremeNouns name an extreme as a thing too, and sources write them so ("peaked at 62.4%",
	// "a maximum of 40"): they stay terms of the question.
	extremeNouns = map[string]bool{"peak": true, "maximum": true, "minimum": true}
	moneyVerbs   = map[string]bool{"cost": true, "costs": true, "costing": true, "pay": true, "pays": true, "paying": true,
		"paid": true, "price": true, "spend": true, "spends": true, "spending": true, "spent": true, "worth": true,
		"charge": true, "charges": true, "charging": true, "charged": true, "earn": true, "earns": true, "earned": true,
		"fund": true, "funded": true}
	// priceVerbs make "what did/does X …" ask for an amount of money.
	priceVerbs = map[string]bool{"cost": true, "costs": true, "charge": true, "charges": true, "charged": true}
	// earnVerbs ask for an amount of money when they end a "what does X …" question.
	earnVerbs = map[string]bool{"pay": true, "pays": true, "paid": true, "earn": true, "earns": true, "earned": true}
	// skipWords sit between a question word and what it asks about.
	skipWords = map[string]bool{"is": true, "are": true, "was": true, "were": true, "do": true, "does": true,
		"did": true, "will": true, "would": true, "can": true, "could": true, "has": true, "have": true, "had": true,
		"the": true, "a": true, "an": true, "of": true, "each": true, "every": true, "should": true, "shall": true,
		"may": true, "might": true, "be": true, "been": true, "this": true, "that": true, "these": true, "those": true,
		"its": true, "their": true, "our": true, "your": true}
)

// analyze reads a question (one sub-question).
func analyze(q string) query {
	q = reWhIs.ReplaceAllString(nlp.Collapse(q), "$1 is") // "What's new" asks what is new
	q = reWhats.ReplaceAllString(q, "$1 is")              // "whats the phone number", typed without the apostrophe
	q = reOwnAge.ReplaceAllString(q, "$1")                // "I'm 68": the asker's age, no figure the sources must give
	out := query{Text: q, surface: map[string]string{}}
	locs := reWordToken.FindAllStringIndex(q, -1)
	toks := make([]string, len(locs))
	for i, l := range locs {
		toks[i] = q[l[0]:l[1]]
	}
	lower := make([]string, len(toks))
	for i, t := range toks {
		lower[i] = strings.ToLower(strings.TrimRight(t, ".’'-–"))
	}
	premise := premiseOf(q)
	for _, m := range figures(q[len(premise):]) {
		out.Numbers = append(out.Numbers, normNumber(m)) // the premise's figures are the asker's own
	}
	out.Numbers = nlp.Uniq(out.Numbers)
	out.Counted = nlp.Uniq(wordNumbers(q[len(premise):])) // "taking my two kids …": the asker's
	for i, t := range toks {
		if extremeHigh[lower[i]] {
			out.Extreme = 1
		} else if extremeLow[lower[i]] {
			out.Extreme = -1
		}
		if i > 0 && isName(t) && !ordinaryOpener(q, locs[i][0], t) {
			for _, w := range nlp.Terms(t) {
				if !nlp.IsDigits(w) {
					out.Names = append(out.Names, w)
				}
			}
		}
	}
	out.Names = nlp.Uniq(out.Names)
	out.premise = premiseTerms(premise, q[len(premise):], out.Names)
	out.Phrases = namePhrases(q)
	out.Type, out.Attribute, out.AttrType = questionFrame(lower)
	if len(out.Attribute) > 0 {
		out.Asked = asksByName(lower)
	}
	out.Negated = nlp.Negated(q[len(premise):]) // "I'm not happy about the café. Can I appeal?" asks plainly
	if wh := slices.IndexFunc(lower, isWh); wh >= 0 && (lower[wh] == "what" || lower[wh] == "which") {
		out.Plural = asksPlural(withoutNames(toks[wh+1:], lower[wh+1:]))
	}
	out.Open = openQuestion(lower)
	for i := 0; i+1 < len(lower); i++ {
		out.Count = out.Count || (lower[i] == "how" && lower[i+1] == "many")
		out.Often = out.Often || (lower[i] == "how" && lower[i+1] == "often")
		out.Year = out.Year || ((lower[i] == "what" || lower[i] == "which") && lower[i+1] == "year")
		out.Clock = out.Clock || (lower[i] == "what" && lower[i+1] == "time" && i+2 < len(lower) && auxiliaries[lower[i+2]]) ||
			(lower[i] == "how" && (lower[i+1] == "late" || lower[i+1] == "early")) // "how late can customers sit out"
	}
	dropped := map[string]bool{}
	for i, w := range lower {
		if frameWords[w] && i > 0 && lower[i-1] == "how" {
			dropped[w] = true
		}
		if _, ok := typeNouns[w]; ok && out.AttrType && i > 0 && isWh(lower[i-1]) {
			dropped[w] = true
		}
		if (extremeHigh[w] || extremeLow[w]) && !extremeNouns[w] {
			dropped[w] = true
		}
	}
	for i, w := range lower {
		if lengthWords[w] && i > 0 && (countWord(lower[i-1]) || nlp.IsDigits(lower[i-1]) || lower[i-1] == "few" || lower[i-1] == "couple") {
			dropped[w] = true // "in a few sentences", "in three bullet points": how long, not what about
		}
		if i+1 < len(lower) {
			if v, ok := phrasalVerbs[[2]string{w, lower[i+1]}]; ok {
				out.Terms = append(out.Terms, nlp.Stem(v))
				dropped[w], dropped[lower[i+1]] = true, true
			}
		}
	}
	request := requestAt(lower)
	for i, t := range toks {
		words := nlp.Words(t)
		for _, w := range words {
			if !nlp.IsTerm(w) || dropped[w] || i == request {
				continue
			}
			s := nlp.Stem(w)
			if _, ok := out.surface[s]; !ok {
				out.surface[s] = asWritten(t, w, len(words))
			}
			out.Terms = append(out.Terms, s)
		}
	}
	out.Ordered = out.Terms
	out.Terms = nlp.Uniq(out.Terms)
	out.Shape = shapeOf(lower)
	if out.Shape == shapeBrief {
		out.dropAudience(q)
	}
	if wh := slices.IndexFunc(lower, isWh); out.Shape == shapeList && wh >= 0 && asksPlural(lower[wh+1:]) &&
		!asksPlural(withoutNames(toks[wh+1:], lower[wh+1:])) && shapeOf(withoutNames(toks, lower)) != shapeList {
		out.Shape = shapeFactoid // the plural was a name's: "Brackenfold Coffee Roasters' sales"
	}
	// "How deep was the earthquake" asks for a depth: the measure joins what is asked about.
	for i, w := range lower {
		if m, ok := howMeasures[w]; ok && i > 0 && lower[i-1] == "how" {
			if w == "long" && i+1 < len(lower) && (auxiliaries[lower[i+1]] ||
				copulas[lower[i+1]] && slices.ContainsFunc(lower[i+2:], func(x string) bool { return stateWords[x] })) {
				// "how long does it take", "how long did it stand", "how long is the bridge going to
				// be closed": a time, not a length
				m = "duration"
			}
			out.Attribute = nlp.Uniq(append(out.Attribute, nlp.Stem(m)))
			out.measure = nlp.Stem(m)
		}
	}
	out.dimension = askedDimension(lower, out.measure)
	out.Syn, out.Units = map[string][]string{}, map[string][]string{}
	for _, t := range append(append([]string{}, out.Terms...), out.Attribute...) {
		for _, a := range synonymOf[t] {
			if a != t {
				out.Syn[t] = append(out.Syn[t], a)
			}
		}
		if u, ok := unitsOf[t]; ok {
			out.Units[t] = u
		}
	}
	return out
}

// asWritten is word w of token tok as the question writes it ("Castellane", not "castellane"), when
// the token is that one word.
func asWritten(tok, w string, words int) string {
	if t := strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); words == 1 && strings.EqualFold(t, w) {
		return t
	}
	return w
}

// requestAt is the index of the verb a request opens with ("List …", "Please describe …", "Can you
// tell me …"), or -1: that verb says what to do, not what the answer is about.
func requestAt(lower []string) int {
	for i, w := range lower {
		switch {
		case nlp.IsRequestVerb(w):
			return i
		case w == "please" || w == "you" || ((w == "can" || w == "could" || w == "would") && i == 0):
		default:
			return -1
		}
	}
	return -1
}

// isName: a capitalised word inside a sentence (or an acronym, or a word with digits or inner
// capitals), read as part of a proper name.
func isName(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	if !unicode.IsUpper(r) {
		return false
	}
	w := strings.ToLower(strings.Trim(tok, ".’'"))
	if i := strings.IndexAny(w, "'’"); i > 0 && nlp.IsStopword(w[:i]) {
		return false // "I'm", "I've": a pronoun with its verb
	}
	return !nlp.IsStopword(w) && !nlp.IsQuestionWord(w) && !notNames[w]
}

// notNames are ordinary words that questions write in capitals ("is it OK to ...", units named
// after people: "in Celsius", which sources write "°C"): no source needs to mention them, and none
// is a name.
var notNames = map[string]bool{"ok": true, "okay": true, "celsius": true, "fahrenheit": true, "kelvin": true,
	"centigrade": true}

// questionFrame finds the kind of value asked for and the phrase asked about, from the words of a
// question in order.
func questionFrame(w []string) (answerType, []string, bool) {
	typ := typeAny
	wh := -1
	for i, x := range w {
		if isWh(x) || x == "whose" || x == "whom" {
			wh = i
			break
		}
	}
	if wh >= 0 {
		switch w[wh] {
		case "who", "whom", "whose":
			typ = typePerson
		case "where":
			typ = typePlace
		case "when":
			typ = typeTime
		case "how":
			if wh+1 < len(w) {
				switch w[wh+1] {
				case "many", "long", "large", "big", "high", "far", "fast", "heavy", "old", "tall", "deep", "wide", "often":
					typ = typeNumber
				case "much":
					typ = typeNumber
					if slices.ContainsFunc(w, func(x string) bool { return moneyVerbs[x] }) {
						typ = typeMoney
					}
				case "hot", "cold", "warm":
					typ = typeTemperature
				}
			}
		case "what":
			// "What did a ticket cost?", "what does the museum charge for entry?": a price.
			if wh+1 < len(w) && auxiliaries[w[wh+1]] && slices.ContainsFunc(w[wh+2:], func(x string) bool { return priceVerbs[x] }) {
				typ = typeMoney
			}
			if wh+1 < len(w) && auxiliaries[w[wh+1]] && earnVerbs[w[len(w)-1]] {
				typ = typeMoney // "What does the job pay?", "what do nurses earn": not "what does it pay for"
			}
		}
	}
	i := wh + 1
	if wh < 0 {
		i = 0
	}
	if wh >= 0 && w[wh] == "how" && i < len(w) && (frameWords[w[i]] || w[i] == "much" || w[i] == "many") {
		i++
	}
	if wh >= 0 && (w[wh] == "what" || w[wh] == "which") && i < len(w) {
		if t, ok := typeNouns[w[i]]; ok && (i+1 >= len(w) || skipWords[w[i+1]] || w[i+1] == "in" || w[i+1] == "on") {
			// "what share of ...", "what temperature is ...": the value's kind is what is asked.
			return t, nil, true
		}
	}
	if wh >= 0 && (w[wh] == "what" || w[wh] == "which") {
		// "which city", "what company": the noun after the question word names the entity asked for.
		for j := i; j < len(w) && j <= i+1; j++ {
			if t, ok := entityNouns[strings.TrimSuffix(w[j], "s")]; ok {
				typ = t
				break
			}
		}
	}
	for i < len(w) && (skipWords[w[i]] || frameWords[w[i]]) {
		i++
	}
	if wh >= 0 && w[wh] == "who" && i+1 < len(w) && lightVerbs[w[i]] {
		// "who got the blame", "who took the decision": the noun after a light verb is what is
		// asked about.
		i++
		for i < len(w) && skipWords[w[i]] {
			i++
		}
	}
	var attr []string
	head := ""
	for ; i < len(w); i++ {
		x := w[i]
		if nlp.IsStopword(x) || nlp.IsQuestionWord(x) || commonVerbs[x] {
			break
		}
		attr = append(attr, nlp.Terms(x)...)
		head = x
	}
	if t, ok := measureHeads[strings.TrimSuffix(head, "s")]; ok && typ == typeAny && wh >= 0 && (w[wh] == "what" || w[wh] == "which") {
		// "what was the group's revenue": the phrase asked about ends in a noun that is measured.
		typ = t
		if head == "rate" && len(attr) > 1 && percentRates[w[i-2]] {
			typ = typePercent // "the interest rate": a percentage, where "the mileage rate" is money per mile
		}
	}
	return typ, nlp.Uniq(attr), false
}

// reAudience is whom a briefing is for, ending the request: "… for a new PhD student", "… for the
// board".
var reAudience = regexp.MustCompile(`(?i)\bfor\s+(?:a|an|the|my|our|your)\s+([^?.!,;]+?)\s*[?.!]?\s*$`)

// dropAudience takes whom a briefing is for out of what it asks about: "Summarise the SOP for a new
// PhD student" is about the SOP, and no source need mention a PhD.
func (q *query) dropAudience(text string) {
	m := reAudience.FindStringSubmatch(text)
	if m == nil || len(strings.Fields(m[1])) > 4 {
		return
	}
	audience := nlp.Terms(m[1])
	keep := func(ts []string) []string {
		return slices.DeleteFunc(ts, func(t string) bool { return slices.Contains(audience, t) })
	}
	q.Terms, q.Names, q.Ordered = keep(q.Terms), keep(q.Names), keep(slices.Clone(q.Ordered))
}

// lengthWords measure an answer's length when a count goes before them ("in a few sentences").
var lengthWords = map[string]bool{"sentence": true, "sentences": true, "paragraph": true, "paragraphs": true,
	"words": true, "bullets": true, "bullet": true, "points": true, "lines": true}

// percentRates are the rates stated as a percentage ("39.9% EAR", "VAT at 20%").
var percentRates = map[string]bool{"interest": true, "tax": true, "vat": true, "inflation": true, "unemployment": true,
	"growth": true, "success": true, "response": true, "discount": true, "commission": true, "vacancy": true,
	"completion": true, "pass": true, "approval": true, "participation": true, "occupancy": true, "churn": true,
	"error": true, "dropout": true, "turnout": true, "retention": true, "conversion": true, "overdraft": true}

// propertyOf are the words after a property's name that say whose it is ("the top speed of …").
var propertyOf = map[string]bool{"of": true, "for": true, "on": true, "at": true, "in": true}

// askedBy says how a question names what it asks for.
type askedBy int

const (
	askedNot  askedBy = iota
	askedAny          // "how many litres of water …": the phrase may run into a verb, so any of its words
	askedHead         // "what is the retail price of …", "who is the mayor of …": its last word, the head
)

// asksByName: the question asks for a property of its subject by the property's name: "what is
// the retail price of …", "what dividend …" (a measured noun), "how many litres …", "who is the
// finance director …", "what is the serial number of …" (a name of two words or more, singular).
// A class of thing ("which village", "what religion") is not such a name: its answer is a member
// of the class, and sources name the member, not the class.
func asksByName(w []string) askedBy {
	wh := slices.IndexFunc(w, isWh)
	if wh < 0 || wh+1 >= len(w) {
		return askedNot
	}
	i := wh + 1
	switch w[wh] {
	case "who":
		if i+1 < len(w) && (w[i] == "is" || w[i] == "was" || w[i] == "are" || w[i] == "were") && w[i+1] == "the" {
			return askedHead
		}
	case "how":
		// "how many litres", "how much electricity", "how much does a licence cost"; not "how many
		// times", "how much more".
		if (w[i] == "many" || w[i] == "much") && i+1 < len(w) && (auxiliaries[w[i+1]] || !nlp.IsStopword(w[i+1])) && !countWords[w[i+1]] {
			return askedAny
		}
	case "what", "which":
		property := i+1 < len(w) && copulas[w[i]] && w[i+1] == "the" // "what is the top speed of …"
		for i < len(w) && skipWords[w[i]] {
			i++
		}
		start := i
		for ; i < len(w) && !nlp.IsStopword(w[i]) && !nlp.IsQuestionWord(w[i]) && !commonVerbs[w[i]]; i++ {
			if namedMeasures[strings.TrimSuffix(w[i], "s")] {
				return askedHead
			}
		}
		if property && i-start >= 2 && (i == len(w) || propertyOf[w[i]]) && !strings.HasSuffix(w[i-1], "s") {
			// A property named in words of its own ("the serial number of", "the top speed of"):
			// sources that give it name it.
			return askedHead
		}
	}
	return askedNot
}

// countWords are what "how many" counts when it counts occurrences or kinds, not a thing a source
// names ("how many times", "how many ways").
var countWords = map[string]bool{"time": true, "times": true, "way": true, "ways": true, "kind": true, "kinds": true,
	"type": true, "types": true, "sort": true, "sorts": true, "part": true, "parts": true, "step": true,
	"steps": true, "item": true, "items": true, "thing": true, "things": true, "more": true, "less": true}

// namedMeasures are the measured nouns (measureHeads) specific enough that a source giving the
// value names them ("revenue", "top speed"), unlike "value", "amount" or "number".
var namedMeasures = func() map[string]bool {
	vague := strings.Fields("value amount number total count range score size age output sale loss")
	m := map[string]bool{}
	for w := range measureHeads {
		if !slices.Contains(vague, w) {
			m[w] = true
		}
	}
	return m
}()

// lightVerbs carry little meaning of their own: the noun after them says what a "who" question is
// about.
var lightVerbs = map[string]bool{"got": true, "get": true, "gets": true, "took": true, "take": true, "takes": true,
	"made": true, "make": true, "makes": true, "gave": true, "give": true, "gives": true, "received": true,
	"receives": true, "receive": true, "has": true, "had": true, "holds": true, "held": true, "hold": true}

// measureHeads are nouns whose value is a figure: a question asking for one wants a number (the
// head-noun rule of answer-type classification).
var measureHeads = func() map[string]answerType {
	m := map[string]answerType{}
	for kind, ws := range map[answerType]string{
		typeMoney: `revenue profit income turnover sale salary wage budget price cost fee fare dividend earning
			spending investment funding value valuation debt loss allowance rent toll pension`,
		typeNumber: `population length height width depth distance weight area size capacity speed duration age
			number amount total count range output consumption attendance enrolment enrollment score rate`,
		typeTemperature: `temperature`,
	} {
		for _, w := range strings.Fields(ws) {
			m[w] = kind
		}
	}
	return m
}()

// openQuestion: "why ...", "how does/did ...", "what did/does/will ... <verb>".
func openQuestion(w []string) bool {
	for i, x := range w {
		if !isWh(x) {
			continue
		}
		if x == "why" {
			return true
		}
		if i+1 < len(w) && (x == "what" || x == "how") {
			switch w[i+1] {
			case "did", "does", "do", "will", "would", "has", "have", "had", "can", "could", "should":
				return x == "what" || w[i+1] != "much"
			}
		}
		return false
	}
	return false
}

// missingWords are the question's words for terms, in the question's spelling.
func (q query) missingWords(ts []string) []string {
	var out []string
	for _, t := range ts {
		if w, ok := q.surface[t]; ok {
			out = append(out, w)
		} else {
			out = append(out, t)
		}
	}
	return nlp.Uniq(out)
}
