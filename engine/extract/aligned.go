package extract

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Plain-text tables whose columns are aligned with spaces, as memos and e-mails set out figures.

// alignedTable reads a plain-text table whose columns are aligned with spaces: a header line of
// column titles set apart by two spaces or more, then rows whose figures start under them
//
//	                        Q3 2025        Q3 2024
//	Revenue                 £1.42m         £1.27m
//
// Each row's label is what comes before the first column. ok is false when the lines are not such
// a table (prose, a single line, rows that do not fill the last column).
func (p *docParser) alignedTable(i int) (int, bool) {
	starts := columnStarts(p.lines[i])
	if len(starts) == 0 || (len(starts) == 1 && starts[0] <= maxIndent) {
		return i, false
	}
	t := Table{Doc: p.d, Title: p.section, Caption: p.lastPar, HeaderLine: i + 1, HeaderText: strings.TrimSpace(p.lines[i]),
		Header: reCell.FindAllString(p.lines[i], -1)}
	if starts[0] <= maxIndent {
		starts = starts[1:] // the header titles its label column too (the table may be indented)
	} else {
		t.Header = append([]string{""}, t.Header...)
	}
	j := i + 1
	for ; j < len(p.lines) && strings.TrimSpace(p.lines[j]) != ""; j++ {
		if reRule.MatchString(p.lines[j]) {
			continue // a rule under the header or below the rows
		}
		if more, ok := headerMore(p.lines[j], starts); ok && len(t.Rows) == 0 {
			// A header of two lines: "SMN Nov" above "(kg N/ha)".
			for k, c := range more {
				t.Header[k+1] = strings.TrimSpace(t.Header[k+1] + " " + c)
			}
			continue
		}
		cells := alignedCells(p.lines[j], starts)
		if cells == nil {
			return i, false
		}
		if cells[0] == "" {
			if len(t.Rows) == 0 {
				return i, false
			}
			cells[0] = t.Rows[len(t.Rows)-1][0] // a group of rows under one label ("Cereal rye", then "Mix")
		}
		t.Rows = append(t.Rows, cells)
		t.RowLines = append(t.RowLines, j+1)
		t.RowText = append(t.RowText, nlp.Collapse(p.lines[j]))
	}
	if len(t.Rows) < 2 {
		return i, false
	}
	p.addTable(t)
	return j, true
}

// maxIndent is how far a table set out in plain text may be indented, its label column with it.
const maxIndent = 3

// reRule is a line ruled across a table: dashes, equals signs or underscores.
var reRule = regexp.MustCompile(`^\s*(?:(?:-{3,}|={3,}|_{3,})\s*)+$`)

// headerMore is a header's second line: words under the columns only, none under the label column
// (the units of the titles above: "(kg N/ha)"), one cell per column.
func headerMore(line string, starts []int) ([]string, bool) {
	cells := make([]string, len(starts))
	for _, seg := range reCell.FindAllStringIndex(line, -1) {
		at := utf8.RuneCountInString(line[:seg[0]])
		if at < starts[0]-2 {
			return nil, false // a label: a row, not the header's second line
		}
		k := 0 // the column it stands under: the last to start at or before it ("Q2 LY" under "Change vs")
		for i, st := range starts {
			if at >= st-2 {
				k = i
			}
		}
		if cells[k] != "" {
			return nil, false // two cells under one title: a row
		}
		cells[k] = line[seg[0]:seg[1]]
	}
	return cells, true
}

// reCell is a cell of an aligned line: words set apart by single spaces.
var reCell = regexp.MustCompile(`\S+(?: \S+)*`)

// reWord is a run of non-space characters.
var reWord = regexp.MustCompile(`\S+`)

// columnStarts are the rune offsets at which a header line's titles start, when they are set apart
// by two spaces or more and there are two at least (or one, indented past a label column).
func columnStarts(line string) []int {
	r := []rune(line)
	var starts []int
	for _, loc := range reCell.FindAllStringIndex(string(r), -1) {
		if cell := string(r)[loc[0]:loc[1]]; len(strings.Fields(cell)) > 4 || EndsSentence(cell) {
			return nil // a title is short and no sentence
		}
		starts = append(starts, utf8.RuneCountInString(string(r)[:loc[0]]))
	}
	if len(starts) < 2 && (len(starts) == 0 || starts[0] < 8) {
		return nil
	}
	return starts
}

// alignedCells cuts a row at the columns: its label (what stands before the first column) and one
// cell per column, each the words that start at or after it (one column to the left allowed, as
// figures are often right-aligned). nil when the row leaves the last column empty, or has no label
// and does not start exactly under a column; an empty label is then "" (the group's, above).
func alignedCells(line string, starts []int) []string {
	segs := reCell.FindAllStringIndex(line, -1)
	if len(segs) < 2 {
		return nil // a row's figures stand apart from its label
	}
	for _, seg := range segs[1:] {
		if at := utf8.RuneCountInString(line[:seg[0]]); !slices.ContainsFunc(starts, func(st int) bool { return at >= st-2 && at <= st+12 }) {
			return nil // prose, not a column
		}
	}
	cells := make([]string, len(starts)+1)
	for _, loc := range reWord.FindAllStringIndex(line, -1) {
		at := utf8.RuneCountInString(line[:loc[0]])
		col := 0
		for k, st := range starts {
			if at >= st-1 {
				col = k + 1
			}
		}
		cells[col] = strings.TrimSpace(cells[col] + " " + line[loc[0]:loc[1]])
	}
	if cells[len(cells)-1] == "" || cells[0] == "" && slices.Index(starts, utf8.RuneCountInString(line[:segs[0][0]])) < 0 {
		return nil // a row without a label stands under a column: the label above is its group's
	}
	return cells
}
