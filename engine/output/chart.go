package output

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// chart is one figure of the build site, drawn from a numeric table.
type chart struct {
	Title      string
	Source     string // where the table is, as cited
	Line       bool   // a line per series over the categories (years); else bars
	Categories []string
	Series     []series
	Measure    string
}

type series struct {
	Name   string
	Values []float64 // NaN: no value
}

// Chart limits keep a figure legible.
const (
	chartMaxCategories = 40
	chartMaxSeries     = 8
	chartMaxPerTable   = 3
	chartMaxTotal      = 12
)

// chartsOf turns a table into charts: years as column headings or a year column make line charts
// (one line per row label); other numeric columns make bar charts over the row labels.
func chartsOf(t SiteTable) []chart {
	tb := extract.Table{Header: t.Header, Rows: t.Rows}
	if len(tb.Rows) < 2 || len(tb.Rows) > chartMaxCategories*chartMaxSeries {
		return nil
	}
	labelCols := []int{}
	var yearHeads, measures []int
	yearCol := -1
	for j, h := range tb.Header {
		switch {
		case !tb.NumericCol(j):
			labelCols = append(labelCols, j)
		case extract.IsYear(strings.TrimSpace(h)):
			yearHeads = append(yearHeads, j)
		case tb.YearCol(j) && yearCol < 0:
			yearCol = j
		default:
			measures = append(measures, j)
		}
	}
	label := func(r int) string {
		var parts []string
		for _, j := range labelCols {
			if v := tb.Cell(r, j); v != "" {
				parts = append(parts, v)
			}
		}
		if len(parts) == 0 {
			return "row " + strconv.Itoa(r+1)
		}
		return strings.Join(parts, ", ")
	}
	var out []chart
	if len(yearHeads) >= 2 && len(tb.Rows) <= chartMaxSeries {
		ch := chart{Title: t.Title, Source: t.Source, Line: true}
		for _, j := range yearHeads {
			ch.Categories = append(ch.Categories, strings.TrimSpace(tb.Header[j]))
		}
		for r := range tb.Rows {
			s := series{Name: label(r)}
			for _, j := range yearHeads {
				s.Values = append(s.Values, numOrNaN(tb.Cell(r, j)))
			}
			ch.Series = append(ch.Series, s)
		}
		return []chart{ch}
	}
	for _, m := range measures {
		if len(out) == chartMaxPerTable {
			break
		}
		ch := chart{Title: t.Title, Source: t.Source, Measure: nlp.HumanName(tb.Header[m])}
		if yearCol >= 0 {
			ch.Line = true
			years, names := map[string]bool{}, []string{}
			for r := range tb.Rows {
				years[tb.Cell(r, yearCol)] = true
				if l := label(r); !slices.Contains(names, l) {
					names = append(names, l)
				}
			}
			ch.Categories = slices.Sorted(func(yield func(string) bool) {
				for y := range years {
					if !yield(y) {
						return
					}
				}
			})
			if len(names) > chartMaxSeries || len(ch.Categories) > chartMaxCategories {
				continue
			}
			for _, n := range names {
				s := series{Name: n, Values: make([]float64, len(ch.Categories))}
				for i := range s.Values {
					s.Values[i] = math.NaN()
				}
				for r := range tb.Rows {
					if label(r) == n {
						s.Values[slices.Index(ch.Categories, tb.Cell(r, yearCol))] = numOrNaN(tb.Cell(r, m))
					}
				}
				ch.Series = append(ch.Series, s)
			}
		} else {
			if len(tb.Rows) > chartMaxCategories {
				continue
			}
			s := series{Name: ch.Measure}
			for r := range tb.Rows {
				ch.Categories = append(ch.Categories, label(r))
				s.Values = append(s.Values, numOrNaN(tb.Cell(r, m)))
			}
			ch.Series = []series{s}
		}
		out = append(out, ch)
	}
	return out
}

func numOrNaN(s string) float64 {
	if f, ok := extract.CellNumber(s); ok {
		return f
	}
	return math.NaN()
}

var palette = []string{"#3b6ea5", "#d9822b", "#3a9a5b", "#c0392b", "#8e6bb8", "#8c6d46", "#d46aa8", "#6b7b8c"}

// niceStep is a round tick step (1, 2 or 5 times a power of ten) for about five ticks.
func niceStep(span float64) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// svg draws the chart as inline SVG (no scripts, no external resources); every text is escaped.
func (ch chart) svg() template.HTML {
	const w, h, left, right, top, bottom = 640.0, 320.0, 56.0, 16.0, 16.0, 64.0
	lo, hi := 0.0, 0.0
	for _, s := range ch.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	step := niceStep(hi - lo)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if hi == lo {
		hi = lo + step
	}
	plotW, plotH := w-left-right, h-top-bottom
	y := func(v float64) float64 { return top + plotH*(1-(v-lo)/(hi-lo)) }
	esc := template.HTMLEscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" aria-label="%s">`, w, h+float64(16*len(ch.Series)), esc(ch.caption()))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(ch.caption()))
	for v := lo; v <= hi+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" font-size="11" text-anchor="end" fill="#555">%s</text>`, left-6, y(v)+4, esc(fmtNum(v)))
	}
	n := len(ch.Categories)
	slot := plotW / float64(max(n, 1))
	for i, c := range ch.Categories {
		x := left + slot*(float64(i)+0.5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="11" text-anchor="end" fill="#333" transform="rotate(-30 %.1f %g)">%s</text>`, x, h-bottom+16, x, h-bottom+16, esc(nlp.Truncate(c, 24)))
	}
	for si, s := range ch.Series {
		color := palette[si%len(palette)]
		if ch.Line {
			var pts []string
			for i, v := range s.Values {
				if math.IsNaN(v) {
					continue
				}
				x := left + slot*(float64(i)+0.5)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y(v)))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %s</title></circle>`, x, y(v), color, esc(s.Name), esc(ch.Categories[i]), esc(fmtNum(v)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(pts, " "))
		} else {
			bw := slot * 0.7
			for i, v := range s.Values {
				if math.IsNaN(v) {
					continue
				}
				x := left + slot*float64(i) + (slot-bw)/2
				y0, y1 := y(math.Max(v, 0)), y(math.Min(v, 0))
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`, x, y0, bw, y1-y0, color, esc(ch.Categories[i]), esc(fmtNum(v)))
			}
		}
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" font-size="11" fill="#333">%s</text>`,
			left, h+float64(16*si), color, left+16, h+float64(16*si)+9, esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every interpolated string above is escaped
}

func (ch chart) caption() string {
	c := ch.Title
	if ch.Measure != "" {
		c += ": " + ch.Measure
	}
	return c
}
