package extractive

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// A question that asks which of two named things came first ("Who is the oldest, Sid Haig or Vic
// Darchinyan?", "Which magazine was published first, Guitar World or Science News?") is answered by
// the year each one's own document gives first — a birth, a founding, a first issue — when each is
// the subject of a document of its own: the earlier (or later) one leads, the other follows, both
// quoted.

// chronologyWords give the order asked for: -1 the earlier, +1 the later.
var chronologyWords = map[string]int{"older": -1, "oldest": -1, "earlier": -1, "earliest": -1, "first": -1,
	"younger": 1, "youngest": 1, "newer": 1, "newest": 1, "later": 1, "latest": 1}

var reYear = regexp.MustCompile(`\b(1[0-9]{3}|20[0-9]{2})\b`)

// chronology answers such a question from the corpus: the unit giving the first year of each
// alternative's document, the one asked for first.
func (c *corpus) chronology(question string) ([]int, bool) {
	order, alts := chronologyQuestion(question)
	if order == 0 {
		return nil, false
	}
	var units []int
	var years []int
	for _, alt := range alts {
		d, ok := c.subjectDoc(alt)
		if !ok {
			return nil, false
		}
		u, year, ok := c.firstYear(d)
		if !ok || slices.Contains(units, u) {
			return nil, false
		}
		units, years = append(units, u), append(years, year)
	}
	if years[0] == years[1] {
		return nil, false
	}
	if (years[1] < years[0]) == (order < 0) {
		units[0], units[1] = units[1], units[0]
	}
	return units, true
}

// chronologyQuestion reads the order asked for and the two alternatives ("Sid Haig", "Vic
// Darchinyan"): after the last comma, else after the word that asks for the order.
func chronologyQuestion(q string) (int, []string) {
	q = strings.TrimRight(strings.TrimSpace(q), "?. ")
	words := strings.Fields(q)
	order, at := 0, -1
	for i, w := range words {
		if o, ok := chronologyWords[strings.ToLower(strings.Trim(w, ",;:"))]; ok {
			order, at = o, i
			break
		}
	}
	if order == 0 {
		return 0, nil
	}
	rest := strings.Join(words[at+1:], " ")
	if i := strings.LastIndex(q, ","); i >= 0 && strings.Contains(q[i:], " or ") {
		rest = q[i+1:]
	}
	alts := strings.Split(rest, " or ")
	if len(alts) != 2 || strings.TrimSpace(alts[0]) == "" || strings.TrimSpace(alts[1]) == "" {
		return 0, nil
	}
	return order, alts
}

// subjectDoc is the document whose title is the alternative's proper name (its capitalised words:
// "Robert Young" of "the birth of Robert Young"): of those whose titles name it, the one whose title
// says least else ("Science News", not "Science News for Students").
func (c *corpus) subjectDoc(alt string) (int, bool) {
	var name []string
	for _, tok := range strings.Fields(alt) {
		if isName(tok) || (len(name) > 0 && tok != "" && !nlp.IsStopword(strings.ToLower(tok))) {
			name = append(name, nlp.Terms(tok)...)
		}
	}
	if len(name) == 0 {
		return 0, false
	}
	found, tie := -1, false
	for d := range c.docs {
		if slices.ContainsFunc(name, func(t string) bool { return !c.titleTerms[d][t] }) {
			continue
		}
		switch {
		case found < 0 || len(c.titleTerms[d]) < len(c.titleTerms[found]):
			found, tie = d, false
		case len(c.titleTerms[d]) == len(c.titleTerms[found]):
			tie = true // two documents by that name: which is meant is unclear
		}
	}
	return found, found >= 0 && !tie
}

// firstYear is the first unit of document d that gives a year, and the earliest year it gives
// ("(1964 – 9 September 2014)": 1964).
func (c *corpus) firstYear(d int) (int, int, bool) {
	for u, un := range c.units {
		if un.Doc != d {
			continue
		}
		years := reYear.FindAllString(un.Text, -1)
		if len(years) == 0 {
			continue
		}
		first := 0
		for _, y := range years {
			if v, _ := strconv.Atoi(y); first == 0 || v < first {
				first = v
			}
		}
		return u, first, true
	}
	return 0, 0, false
}
