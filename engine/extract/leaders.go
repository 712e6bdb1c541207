package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Price lists and key-facts summaries set a label and its value apart with a dot leader
// ("Escape of water ........ £400"). Such a line is a field line whose label is what stands
// before the dots; the lines indented under it describe it.

// reLeader is a line with a dot leader: a short label, three dots or more, a short value.
var reLeader = regexp.MustCompile(`^\s*(\S.{0,79}?)\s?\.{3,}[ \t]*(\S.{0,39})$`)

// leaderParts are a dot-leader line's label and value; ok is false for any other line, or when
// the value ends as a sentence does ("We waited... and then it rained." is prose).
func leaderParts(line string) (label, value string, ok bool) {
	m := reLeader.FindStringSubmatch(line)
	if m == nil || EndsSentence(m[2]) {
		return "", "", false
	}
	return m[1], strings.TrimSpace(m[2]), true
}

// isLeader: line is a label, a dot leader and a value.
func isLeader(line string) bool {
	_, _, ok := leaderParts(line)
	return ok
}

// FieldLabel is the label of a field line: what stands before its dot leader, else before its
// first colon ("Price: £4" and "Price ...... £4" are labelled "Price"); the whole line when it has
// neither.
func FieldLabel(line string) string {
	if label, _, ok := leaderParts(line); ok {
		return label
	}
	label, _, _ := strings.Cut(line, ":")
	return label
}

// FieldValue is the value of a field line: what follows its dot leader or its label's colon
// ("**Recall reference:** BW-RC-2025-04" is "BW-RC-2025-04"); "" when it has neither.
func FieldValue(line string) string {
	if _, value, ok := leaderParts(line); ok {
		return value
	}
	_, value, ok := strings.Cut(line, ":")
	if !ok {
		return ""
	}
	return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(value), "*_"))
}

// leaderBlock: a paragraph of two or more dot-leader lines, or one alone.
func leaderBlock(lines []string) bool {
	n := 0
	for _, l := range lines {
		if isLeader(l) {
			n++
		}
	}
	return n >= 2 || n == 1 && len(lines) == 1
}

// leaders adds a leader block's items: a line at the block's own indentation that does not open
// in lower case starts one, deeper or lower-case lines go on with it. An item opened by a leader
// line is a field unit, its other lines sentences after it; another item is sentences. Items are
// paragraphs of their own: a price list's lines are not one another's context.
func (p *docParser) leaders(first int, lines []string) {
	base := -1
	for _, l := range lines {
		if isLeader(l) && (base < 0 || indent(l) < base) {
			base = indent(l)
		}
	}
	for k := 0; k < len(lines); {
		end := k + 1
		for end < len(lines) && !startsItem(lines[end], base) {
			end++
		}
		*p.para++
		para, prev, rest := *p.para, -1, k
		if isLeader(lines[k]) {
			p.out.Units = append(p.out.Units, Unit{Doc: p.d, Kind: UnitField, Start: first + k, End: first + k,
				Text: nlp.Collapse(lines[k]), Section: p.section, Heading: p.section, Para: para, Table: -1, Row: -1, Prev: -1})
			prev, rest = len(p.out.Units)-1, k+1
		}
		if rest < end {
			p.sentences(first+rest, lines[rest:end], UnitSentence, para, prev)
		}
		k = end
	}
}

func startsItem(line string, base int) bool {
	t := strings.TrimSpace(line)
	r, _ := utf8.DecodeRuneInString(t)
	return indent(line) <= base && !unicode.IsLower(r)
}

func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " \t")) }
