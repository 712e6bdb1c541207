package extractive

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// comparison answers "which item was highest in a given year" from a table: the winning row, the
// runner-up, the column compared and the sentence that states the comparison.
type comparison struct {
	Table    int
	Rows     []int // table rows quoted: the winner, then the runner-up
	Col      int
	Sentence string
	Score    float64
}

// measurePhrase is what follows the superlative ("share of homes with a heat pump" in "the highest
// share of homes with a heat pump in 2022") and its head ("share"): the column to compare.
func measurePhrase(q string) (phrase []string, head string) {
	ws := strings.Fields(strings.ToLower(q))
	start := -1
	for i, w := range ws {
		w = bare(w)
		if extremeHigh[w] || extremeLow[w] {
			start = i + 1
		}
	}
	if start < 0 {
		return nil, ""
	}
	var out []string
	headAt := -1
	for _, w := range ws[start:] {
		b := bare(w)
		if b == "" || nlp.IsDigits(b) {
			break
		}
		switch b {
		case "in", "on", "at", "during", "for", "by", "between", "among", "than", "across", "per", "from", "to":
			goto done
		case "of", "with":
			if headAt < 0 {
				headAt = len(out) - 1
			}
			continue
		}
		if !nlp.IsStopword(b) {
			out = append(out, nlp.Stem(b))
		}
		if strings.ContainsAny(w, ",;?!") {
			break
		}
	}
done:
	if headAt < 0 {
		headAt = len(out) - 1
	}
	if headAt < 0 {
		return out, ""
	}
	return out, out[headAt]
}

// compare looks for a table that answers a superlative question: numbers of the question select
// a column (a year heading) or filter rows (a year cell); the measure column is the numeric column
// whose heading best matches the question (its head noun above all); the rows are ranked on it.
func (s *scorer) compare(allowed func(doc int) bool) (comparison, bool) {
	c, q := s.c, s.q
	if q.Extreme == 0 {
		return comparison{}, false
	}
	phrase, head := measurePhrase(q.Text)
	var best comparison
	found := false
	for ti, t := range c.tables {
		if (allowed != nil && !allowed(t.Doc)) || len(t.Rows) < 2 {
			continue
		}
		cmp, ok := s.compareTable(ti, t, phrase, head)
		if ok && (!found || cmp.Score > best.Score) {
			best, found = cmp, true
		}
	}
	return best, found && best.Score >= relevanceFloor
}

func (s *scorer) compareTable(ti int, t extract.Table, phrase []string, head string) (comparison, bool) {
	c, q := s.c, s.q
	for _, n := range q.Names {
		if !c.docTerms[t.Doc][n] {
			return comparison{}, false
		}
	}
	col, filterCol := -1, -1
	rows := make([]int, len(t.Rows))
	for i := range rows {
		rows[i] = i
	}
	filters := []string{}
	for _, n := range q.Numbers {
		if j := slices.IndexFunc(t.Header, func(h string) bool { return normNumber(strings.TrimSpace(h)) == n }); j >= 0 {
			col = j
			filters = append(filters, t.Header[j])
			continue
		}
		var keep []int
		for _, r := range rows {
			for j, v := range t.Rows[r] {
				if normNumber(strings.TrimSpace(v)) == n {
					keep = append(keep, r)
					filterCol = j
					break
				}
			}
		}
		if len(keep) == 0 {
			return comparison{}, false
		}
		rows = keep
		filters = append(filters, n)
	}
	// Words of the question that name some rows only ("which pastry": category pastry) filter them.
	for _, term := range q.Terms {
		if slices.Contains(phrase, term) || slices.Contains(q.Names, term) {
			continue
		}
		var keep []int
		for _, r := range rows {
			for j, v := range t.Rows[r] {
				if j != col && !t.NumericCol(j) && slices.Contains(nlp.Terms(v), term) {
					keep = append(keep, r)
					break
				}
			}
		}
		if len(keep) > 0 && len(keep) < len(rows) {
			rows = keep
		}
	}
	if col < 0 {
		col = s.measureCol(t, filterCol, append(phrase, impliedMeasure(q.Text)...), head)
	}
	if col < 0 || !t.NumericCol(col) || len(rows) < 2 {
		return comparison{}, false
	}
	type val struct {
		r int
		v float64
	}
	var vals []val
	for _, r := range rows {
		if v, ok := extract.CellNumber(t.Cell(r, col)); ok {
			vals = append(vals, val{r, v})
		}
	}
	if len(vals) < 2 {
		return comparison{}, false
	}
	slices.SortStableFunc(vals, func(a, b val) int {
		if a.v == b.v {
			return a.r - b.r
		}
		if (a.v > b.v) == (q.Extreme > 0) {
			return -1
		}
		return 1
	})
	win, second := vals[0].r, vals[1].r
	// Relevance: the question's terms found in the table's heading, title, caption or file name,
	// or in the winning row.
	cov := 0.0
	ctx := map[string]bool{}
	for _, w := range nlp.Terms(strings.Join(t.Header, " ") + " " + t.Title + " " + t.Caption + " " + c.titles[t.Doc] + " " + fileWords(c.docs[t.Doc].Path) + " " + strings.Join(t.Rows[win], " ")) {
		ctx[w] = true
	}
	for _, term := range q.Terms {
		if ctx[term] {
			cov += s.w[term]
		}
	}
	if s.total > 0 {
		cov /= s.total
	}
	word, rel := "highest", "ahead of"
	if q.Extreme < 0 {
		word, rel = "lowest", "above which came"
	}
	measure := nlp.HumanName(t.Header[col])
	if nlp.IsDigits(strings.TrimSpace(t.Header[col])) {
		measure = "value for " + strings.TrimSpace(t.Header[col])
	}
	where := ""
	if filterCol >= 0 {
		where = " in " + t.Cell(win, filterCol)
		if !t.YearCol(filterCol) {
			where = fmt.Sprintf(" for %s %s", nlp.HumanName(t.Header[filterCol]), t.Cell(win, filterCol))
		}
	}
	title := t.Title
	sentence := fmt.Sprintf("%s had the %s %s%s (%s), %s %s (%s) in the table %q.",
		t.Label(win, filterCol), word, measure, where, t.Cell(win, col), rel, t.Label(second, filterCol), t.Cell(second, col), title)
	if q.Extreme < 0 {
		sentence = fmt.Sprintf("%s had the %s %s%s (%s); the next lowest was %s (%s), in the table %q.",
			t.Label(win, filterCol), word, measure, where, t.Cell(win, col), t.Label(second, filterCol), t.Cell(second, col), title)
	}
	_ = filters
	return comparison{Table: ti, Rows: []int{win, second}, Col: col, Sentence: capitalize(sentence), Score: cov}, true
}

// extremeMeasures: a superlative that names its measure ("the cheapest item" compares prices).
var extremeMeasures = map[string]string{
	"cheapest": "price cost", "dearest": "price cost", "expensive": "price cost", "longest": "length duration wait time",
	"shortest": "length duration wait time", "heaviest": "weight", "lightest": "weight", "oldest": "age",
	"youngest": "age", "fastest": "speed", "slowest": "speed", "deepest": "depth", "tallest": "height",
	"busiest": "traffic passengers visitors", "hottest": "temperature", "coldest": "temperature",
}

// impliedMeasure are the terms of the measure a question's superlative implies.
func impliedMeasure(q string) []string {
	var out []string
	for _, w := range nlp.Words(q) {
		if m, ok := extremeMeasures[w]; ok {
			out = append(out, nlp.Terms(m)...)
		}
	}
	return out
}

// measureCol picks the numeric, non-year column whose heading best matches the question: the
// measure's head noun weighs three times, the rest of the measure phrase twice, other question
// words once. With no match, a table with a single measure column uses it.
func (s *scorer) measureCol(t extract.Table, filterCol int, phrase []string, head string) int {
	best, bestScore := -1, 0.0
	var measures []int
	for j, h := range t.Header {
		if j == filterCol || !t.NumericCol(j) || t.YearCol(j) {
			continue
		}
		measures = append(measures, j)
		score := 0.0
		for _, term := range nlp.Uniq(nlp.Terms(nlp.HumanName(h))) {
			w := s.c.idf(term)
			switch {
			case term == head:
				score += 3 * w
			case slices.Contains(phrase, term):
				score += 2 * w
			case s.w[term] > 0:
				score += w
			}
		}
		if score > bestScore {
			best, bestScore = j, score
		}
	}
	if best < 0 && len(measures) == 1 {
		return measures[0]
	}
	return best
}

// headersNamed counts the columns after the first whose heading's terms the question all states
// ("Calder Therma 8", "Nordhavn AW9"), its figures and what it says in brackets aside
// ("Delmirazole 1% (324 people)" is named by "delmirazole").
func (s *scorer) headersNamed(t extract.Table) int {
	n := 0
	for _, h := range t.Header[min(1, len(t.Header)):] {
		if s.statesAll(cellTerms(h)) {
			n++
		}
	}
	return n
}

// reParenthesis is a remark in brackets.
var reParenthesis = regexp.MustCompile(`\([^)]*\)`)

// rowSentence states what a table row says about the question: the cell under the column the
// question names (a year heading, or words of the heading), else every cell with its heading.
func (s *scorer) rowSentence(u int) string {
	c := s.c
	un := c.units[u]
	t := c.tables[un.Table]
	r := un.Row
	col := -1
	for _, n := range s.q.Numbers {
		if j := slices.IndexFunc(t.Header, func(h string) bool { return normNumber(strings.TrimSpace(h)) == n }); j >= 0 {
			col = j
		}
	}
	if col < 0 {
		phrase := s.q.Attribute
		head := ""
		if len(phrase) > 0 {
			head = phrase[len(phrase)-1]
		}
		col = s.measureCol(t, -1, phrase, head)
	}
	if s.headersNamed(t) > 1 {
		col = -1 // "compare A, B and C" of a table with a column for each: the whole row
	}
	label := t.Label(r, -1)
	if col >= 0 && t.Cell(r, col) != "" {
		return capitalize(fmt.Sprintf("In the table %q, %s has %s under %q.", t.Title, label, t.Cell(r, col), t.Header[col]))
	}
	var parts []string
	for j, h := range t.Header {
		if v := t.Cell(r, j); v != "" && v != label {
			parts = append(parts, strings.TrimSpace(headerWords(h)+" "+v))
		}
	}
	return capitalize(fmt.Sprintf("In the table %q, the row for %s reads: %s.", t.Title, label, strings.Join(parts, "; ")))
}

// headerWords is a column header as words: a data file's "visits_2025" as "visits 2025", a
// model's "AL-400" as written.
func headerWords(h string) string {
	if strings.Contains(h, "_") {
		return nlp.HumanName(h)
	}
	return h
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r)
}
