package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// tableRows answers a list or a comparison from the rows of a table the ranking found (the table of
// one of its best candidates): the rows whose label the question names, two at least ("how do the
// fees for home students compare with those for international students" of the rows "Home (UK)"
// and "International"), or, for a list, the rows that a column of categories marks with a word the
// question states ("which optional modules" of the rows marked "Optional"), or all the rows of a
// column it names ("list the model numbers"). The table's title,
// caption or header must state another word of the question: "home" and "international" name rows
// of many tables.
func (s *scorer) tableRows(ranked []scored, allowed func(u int) bool) ([]int, bool) {
	if s.q.Shape != shapeList && s.q.Shape != shapeCompare {
		return nil, false
	}
	for _, r := range ranked[:min(len(ranked), 10)] {
		un := s.c.units[r.U]
		if un.Kind != extract.UnitRow || un.Table < 0 {
			continue
		}
		t := s.c.tables[un.Table]
		if s.headersNamed(t) >= 2 {
			// The things compared are its columns, and its rows what they are compared on: a row
			// the question names is the comparison ("an adult ticket bought online … on the door").
			if rows := s.labelledRows(t); s.q.Shape == shapeCompare && len(rows) == 1 && (allowed == nil || allowed(t.Units[rows[0]])) {
				return []int{t.Units[rows[0]]}, true
			}
			continue
		}
		rows, col := s.namedRows(t), 0
		if len(rows) < 2 && s.q.Shape == shapeList {
			rows, col = s.categoryRows(t)
		}
		if len(rows) == 0 && s.q.Shape == shapeList {
			rows, col = s.columnRows(t)
		}
		if len(rows) == 0 || !s.aboutTable(t, rows, col) {
			continue
		}
		var units []int
		for _, row := range rows {
			if u := t.Units[row]; allowed == nil || allowed(u) {
				units = append(units, u)
			}
		}
		if len(units) > 0 {
			return units, true
		}
	}
	return nil, false
}

// namedRows are the rows whose label (its first cell, figures and brackets aside) the question
// states every term of, when two at least are.
func (s *scorer) namedRows(t extract.Table) []int {
	if rows := s.labelledRows(t); len(rows) >= 2 {
		return rows
	}
	return nil
}

// labelledRows are the rows whose label the question states every term of.
func (s *scorer) labelledRows(t extract.Table) []int {
	var rows []int
	for r, row := range t.Rows {
		if len(row) > 0 && len(cellTerms(row[0])) > 0 && s.statesAll(cellTerms(row[0])) {
			rows = append(rows, r)
		}
	}
	return rows
}

// categoryRows are the rows that a column of categories (after the first, of words, some repeated:
// "Core", "Optional") marks with the one category the question states, and that column.
func (s *scorer) categoryRows(t extract.Table) ([]int, int) {
	for j := 1; j < len(t.Header); j++ {
		values := map[string][]int{}
		for r := range t.Rows {
			if v := strings.ToLower(t.Cell(r, j)); v != "" && !reDigits.MatchString(v) {
				values[v] = append(values[v], r)
			}
		}
		if len(values) < 2 || len(values) >= len(t.Rows) {
			continue
		}
		var rows []int
		stated := 0
		for v, rs := range values {
			if s.statesAll(cellTerms(v)) {
				stated++
				rows = rs
			}
		}
		if stated == 1 {
			slices.Sort(rows)
			return rows, j
		}
	}
	return nil, 0
}

// columnRows are every row of a table one of whose columns the question names, every word of its
// heading ("list the model numbers of the kettles" of a "Model number" column), and that column. A
// heading of names only is what the table is about (an infobox headed "Edwin Saint Aldric"), not
// a column asked for.
func (s *scorer) columnRows(t extract.Table) ([]int, int) {
	for j, h := range t.Header {
		terms := cellTerms(h)
		if s.statesAll(terms) && slices.ContainsFunc(terms, func(x string) bool { return !slices.Contains(s.q.Names, x) }) && len(t.Rows) > 0 {
			rows := make([]int, len(t.Rows))
			for r := range rows {
				rows[r] = r
			}
			return rows, j
		}
	}
	return nil, 0
}

// aboutTable: the table's title, caption or header states a word of the question other than the
// chosen rows' cells in column col, and that column's heading ("Core/Optional" is the categories').
func (s *scorer) aboutTable(t extract.Table, rows []int, col int) bool {
	labels := map[string]bool{}
	for _, r := range rows {
		for _, x := range cellTerms(t.Cell(r, col)) {
			labels[x] = true
		}
	}
	if col > 0 && col < len(t.Header) {
		for _, x := range nlp.Terms(t.Header[col]) {
			labels[x] = true
		}
	}
	for _, x := range nlp.Terms(t.Title + " " + t.Caption + " " + strings.Join(t.Header, " ")) {
		if !labels[x] && slices.Contains(s.q.Terms, x) && !slices.Contains(s.q.Names, x) {
			return true
		}
	}
	return false
}

func (s *scorer) statesAll(terms []string) bool {
	return len(terms) > 0 && !slices.ContainsFunc(terms, func(x string) bool { return !slices.Contains(s.q.Terms, x) })
}

// cellTerms are a cell's terms, figures and remarks in brackets aside.
func cellTerms(cell string) []string {
	return slices.DeleteFunc(nlp.Terms(reParenthesis.ReplaceAllString(cell, " ")), nlp.IsDigits)
}

// tableItems are the labels of the rows that a column of categories marks with the one category a
// field names, in a table about the field's other words, of a document read for the question
// ("core_modules": the modules a "Modules" table marks "Core"), and the rows.
func (x *extractor) tableItems(field string) ([]string, []evidence) {
	s := x.c.scorer(query{Terms: nlp.Uniq(nlp.Terms(field))})
	for _, t := range x.c.tables {
		if x.docs != nil && !x.docs[t.Doc] {
			continue
		}
		rows, col := s.categoryRows(t)
		if len(rows) == 0 || !s.aboutTable(t, rows, col) {
			continue
		}
		var labels []string
		var ev []evidence
		for _, r := range rows {
			if label := t.Cell(r, 0); label != "" && r < len(t.Units) {
				labels = append(labels, label)
				ev = append(ev, evidence{t.Units[r], 1})
			}
		}
		if len(labels) > 0 {
			return labels, ev
		}
	}
	return nil, nil
}
