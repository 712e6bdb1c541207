package extractive

import (
	"regexp"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// A question that asks for a kind of value (an amount of money, a percentage, a figure in a unit,
// a year, a time of day, a span of time) is answered by a passage that gives one.

// exactKinds are the kinds of value a passage states unmistakably, by what a question asks for.
var exactKinds = map[answerType]string{typeMoney: "amount of money", typePercent: "percentage", typeTemperature: "temperature",
	typePerson: "name", typeOrg: "name"}

// exactKind names the kind of value the question asks for when a passage states it unmistakably:
// a time of day, an amount of money, a percentage, a temperature, a figure in a unit of
// measurement, or a year.
func (s *scorer) exactKind() (string, bool) {
	if s.q.Clock {
		return "time of day", true
	}
	if d := s.q.dimension; d != "" {
		return dimensionNames[d], true
	}
	if s.q.Year {
		return "year", true
	}
	kind, ok := exactKinds[s.q.Type]
	return kind, ok
}

// valueReach is how far down the ranking a passage giving the asked-for kind of value is looked for.
const valueReach = 10

// valueLead: a question that asks for an amount of money, a percentage or a temperature is
// answered only by a passage that gives one. When the best passage gives none, the likeliest of the
// next candidates from its document that does is to lead ("Estimated cost: 11 million euros"
// under the sentence that matched "pay for the new street trees"): lead is its index in ranked (0:
// the best gives one). ok is false when none does (a guide that gives a dryer's capacity but not
// its price).
func (s *scorer) valueLead(ranked []scored) (lead int, ok bool) {
	if len(ranked) == 0 {
		return 0, true
	}
	if s.q.Clock {
		// "What time does the shuttle start?" is answered only by a passage giving a time of day.
		return s.leadGiving(ranked, func(u int) bool { return reClock.MatchString(s.c.units[u].Text) })
	}
	if s.q.Count && len(s.q.Attribute) > 0 && !s.typeHit(s.c.units[ranked[0].U].Text) {
		// "How many commercial farms took part?": when the best passage gives no figure, one near
		// it that gives a figure of farms leads ("On 12 commercial farms, …"); the best otherwise.
		if lead, ok := s.leadGiving(ranked, s.counts); ok {
			return lead, true
		}
	}
	if s.q.Often {
		// A frequency is only preferred: without one the best passage still leads ("the market
		// is held on the first Saturday of each month").
		lead, _ := s.leadGiving(ranked, func(u int) bool { return reFrequency.MatchString(s.c.units[u].Text) })
		return lead, true
	}
	if _, exact := s.exactKind(); !exact {
		return 0, true
	}
	if s.q.Type == typeOrg {
		// Capitalised words are everywhere in a news story (places, bodies, days): one nearby says
		// only that the sources could answer "which company", not that it does. The best passage
		// stays the answer. A person's name, asked by "who", leads as a figure does.
		_, ok := s.leadGiving(ranked, s.givesValue)
		return 0, ok
	}
	return s.leadGiving(ranked, s.givesValue)
}

// leadGiving is the index in ranked of the likeliest passage among the best and the next
// candidates of its document (valueReach in all) for which gives holds: the best when it does,
// else, for a question asking what time something happens, "open from Tuesday to Sunday, 10:00 to
// 17:00" rather than "the factory closed in 1961". ok is false when none does.
func (s *scorer) leadGiving(ranked []scored, gives func(u int) bool) (lead int, ok bool) {
	doc := s.c.units[ranked[0].U].Doc
	for i := 0; i < min(len(ranked), valueReach); i++ {
		if u := ranked[i].U; s.c.units[u].Doc == doc && gives(u) {
			return i, true
		}
	}
	return 0, false
}

// reClock matches a time of day: "17:00", "7.30 pm", "9 a.m.", "noon", "midnight".
var reClock = regexp.MustCompile(`(?i)\b\d{1,2}:\d\d\b|\b\d{1,2}(?:[.:]\d\d)?\s?(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midday|midnight|o'clock)\b`)

// givesValue: unit u gives a value of the kind asked for; a table row or a "Label: value" line
// gives a figure, whose unit its header or label names ("| Peru | 176.0 | 235.7 |" under prices).
func (s *scorer) givesValue(u int) bool {
	un := s.c.units[u]
	if s.q.Type == typePerson || s.q.Type == typeOrg {
		// "Who is the finance director?" is not answered by "with the approval of a director":
		// a passage that answers names someone the question does not.
		return s.typeHit(un.Text)
	}
	if un.Table >= 0 || un.Kind == extract.UnitField {
		if d := s.q.dimension; d != "" && !givesDimension(un.Text, d) {
			// A figure in a row measures what its label says: the price row is no weight.
			return typeNumber.satisfies(un.Text) && labelMeasures(s.c.rowLabel(u), d)
		}
		if kind, ok := kindLabels[s.q.Type]; ok && s.q.dimension == "" && !s.q.Type.satisfies(un.Text) {
			// A row's bare figure is an amount of money only under a label that says so ("Price"),
			// and a date is no amount ("Book the removal firm | Luis | 31 October 2025").
			label := s.c.rowLabel(u)
			if un.Table >= 0 {
				label += " " + s.c.tables[un.Table].Title + " " + s.c.tables[un.Table].Caption // "Coffee prices"
			}
			return typeNumber.satisfies(withoutDates(un.Text)) && kind.MatchString(label)
		}
		return typeNumber.satisfies(un.Text)
	}
	return s.holdsValue(un.Text)
}

// kindLabels say in a table's header or a field's label that its figures are of an exact kind.
var kindLabels = map[answerType]*regexp.Regexp{
	typeMoney:       regexp.MustCompile(`(?i)\b(?:price|cost|fee|fare|charge|revenue|income|sales|salary|wage|budget|spend|spending|rent|profit|eur|usd|gbp)|[€$£¥]`),
	typePercent:     regexp.MustCompile(`(?i)%|\b(?:per ?cent|percentage|share|rate)\b`),
	typeTemperature: regexp.MustCompile(`(?i)°|\btemperature`),
}

// withoutDates is text with its dates and years left out.
func withoutDates(text string) string {
	text = reDayMonth.ReplaceAllString(text, " ")
	text = reMonthDay.ReplaceAllString(text, " ")
	return reYearWritten.ReplaceAllString(text, " ")
}

// rowLabel is what a table row's or field line's figures measure: the table's header and the
// row's first cell ("Weight (kg)"), or the field's label ("Weight").
func (c *corpus) rowLabel(u int) string {
	un := c.units[u]
	if un.Table >= 0 {
		t := c.tables[un.Table]
		label := t.HeaderText
		if un.Row >= 0 && un.Row < len(t.Rows) && len(t.Rows[un.Row]) > 0 {
			label += " " + t.Rows[un.Row][0]
		}
		return label
	}
	label := extract.FieldLabel(un.Text)
	return label
}

// valueAfter is the sentence after u in its paragraph when the question asks for a kind of value
// (a figure, a date, a person) that u lacks and that sentence holds: the answer goes on there ("The
// guide explains how to set up automatic backups. It takes about an afternoon.").
func (s *scorer) valueAfter(u int) (int, bool) {
	c, next := s.c, u+1
	if s.q.Type == typeAny || s.q.Shape != shapeFactoid || next >= len(c.units) || c.units[next].Prev != u {
		return 0, false
	}
	if s.holdsValue(c.units[u].Text) || !s.holdsValue(c.units[next].Text) {
		return 0, false
	}
	return next, true
}

// holdsValue: text holds a value of the kind the question asks for; for a duration, a span of
// time ("an afternoon", "two weeks", "90 minutes"), not any figure ("the 3-2-1 rule"); for "how
// often", a frequency.
func (s *scorer) holdsValue(text string) bool {
	if s.q.measure == nlp.Stem("duration") {
		return reSpan.MatchString(text)
	}
	if s.q.Often {
		return reFrequency.MatchString(text)
	}
	if s.q.dimension != "" {
		return givesDimension(text, s.q.dimension)
	}
	if s.q.Year {
		return reYearWritten.MatchString(text)
	}
	return s.typeHit(text)
}

// reSpan matches a span of time: "an afternoon", "a few weeks", "two days", "90 minutes".
// reYearWritten is a year as text writes one: four digits from 1000 (reYear), a decade ("1830s"),
// or a year of an era ("711 AD").
var reYearWritten = regexp.MustCompile(`\b(?:1\d{3}|20\d{2})s?\b|\b\d{1,4}\s*(?:BC|BCE|AD|CE)\b|\bAD\s*\d{1,4}\b`)

var reSpan = regexp.MustCompile(`(?i)\b(?:\d[\d.,]*|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|a few|several|half an?)\s+(?:afternoon|morning|evening|day|night|week|weekend|fortnight|month|year|decade|hour|minute|second|season)s?\b`)

// counts: unit u gives a figure of what a "how many" question counts, the counted noun (the head of
// what is asked about, as the question writes it) within four words after it ("12 commercial
// farms", "10 keeping-in-touch (KIT) days"); a figure joined to a word ("three-season on-farm
// trial") counts nothing.
func (s *scorer) counts(u int) bool {
	noun := strings.TrimSuffix(strings.ToLower(s.q.surface[s.q.Attribute[len(s.q.Attribute)-1]]), "s")
	if noun == "" {
		return false
	}
	return len(figuresCounting(s.c.units[u].Text, 4, func(w string) bool { return strings.TrimSuffix(w, "s") == noun })) > 0
}
