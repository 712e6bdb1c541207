package extract

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// IsYear: s is a whole year (1800 to 2200), as a table heading or cell states one.
func IsYear(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1800 && n <= 2200
}

// reCellNumber is a cell that states one figure: with a currency sign or a unit of one or two
// words after it ("2,190 euros", "78 km", "23.5 kg", "4.1 kWh/100 km" is not: two figures).
var reCellNumber = regexp.MustCompile(`^[-+]?[$€£¥]?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|[$€£¥]|°?[\pL/²³]+(?: [\pL/²³]+)?)?$`)

// CellNumber reads a table cell as a number ("12,450", "4.8", "$3", "12%", "78 km").
func CellNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	m := reCellNumber.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "")+m[2], 64)
	if err != nil {
		return 0, false
	}
	if strings.HasPrefix(s, "-") {
		f = -f
	}
	return f, true
}

// NumericCol: at least 70% of the rows hold a number in column j.
func (t Table) NumericCol(j int) bool { return t.numberShare(j) >= 0.7 }

// numberShare is the share of the rows whose cell in column j is a number.
func (t Table) numberShare(j int) float64 {
	n := 0
	for _, r := range t.Rows {
		if j < len(r) {
			if _, ok := CellNumber(r[j]); ok {
				n++
			}
		}
	}
	if len(t.Rows) == 0 {
		return 0
	}
	return float64(n) / float64(len(t.Rows))
}

// YearCol: every number in column j is a whole year.
func (t Table) YearCol(j int) bool {
	for _, r := range t.Rows {
		if j >= len(r) {
			continue
		}
		f, ok := CellNumber(r[j])
		if !ok || f != math.Trunc(f) || f < 1800 || f > 2200 {
			return false
		}
	}
	return true
}

// Cell is row r's cell in column j, "" when the row is short.
func (t Table) Cell(r, j int) string {
	if j < len(t.Rows[r]) {
		return t.Rows[r][j]
	}
	return ""
}

// Label names a row: its text columns other than the filter column.
func (t Table) Label(r, skip int) string {
	var parts []string
	for j := range t.Header {
		if j == skip || t.numberShare(j) >= 0.5 {
			continue // figures, even with a word here and there ("8", "7", "belt, 5"), name no row
		}
		if v := t.Cell(r, j); v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return t.Cell(r, 0)
	}
	return strings.Join(parts, ", ")
}
