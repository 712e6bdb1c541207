package extract

import (
	"bytes"
	"encoding/csv"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Kinds of unit: what the extractive engine can quote.
const (
	UnitSentence = "sentence" // a sentence of a prose paragraph (joined across hard-wrapped lines)
	UnitItem     = "item"     // a sentence of a list item
	UnitField    = "field"    // a "Label: value" line
	UnitRow      = "row"      // a table row, quoted with its table's header row
)

// Unit is the smallest citable piece of a document: a whole sentence, a list item, a field line or
// a table row. Headings are never units; they are the Section of the units below them.
type Unit struct {
	Doc        int
	Kind       string
	Start, End int    // 1-based source lines
	Text       string // the quoted text: source text with whitespace collapsed (rows: the row line)
	Section    string // the nearest heading above (or a run-in heading such as "Results.")
	Heading    string // the nearest heading above, run-in headings aside (the unit's section, sections.go)
	// Parent is the heading its section is part of: the nearest marked heading of a higher level
	// ("Our new lunch ordering system" over "### Why are we changing?"), "" when none.
	Parent     string
	Para       int // the paragraph, list item or table it belongs to (document-wide counter)
	Table, Row int // rows: the table (index into corpus.tables) and row; -1 otherwise
	// Prev is the unit before it in the same paragraph (-1 for the first); its subject often
	// carries over ("The plant ... . It recovered 95 percent ...").
	Prev int
}

// Table is a CSV/TSV file or a Markdown table, with the line of each row for quoting.
type Table struct {
	Doc        int
	Title      string // the heading above the table, or the document title
	Caption    string // the paragraph just before the table
	Header     []string
	HeaderLine int
	HeaderText string
	Rows       [][]string
	RowLines   []int
	RowText    []string
	Units      []int // the row units
}

// docTitle is what a document is about: an e-mail's subject line, its first heading, else its file
// name in words.
func docTitle(doc Document, heads []string) string {
	for _, l := range doc.Lines {
		if t := strings.TrimSpace(l); t != "" {
			if subject, ok := strings.CutPrefix(t, "Subject:"); ok && strings.TrimSpace(subject) != "" {
				return strings.TrimSpace(subject) // an e-mail is about its subject line
			}
			break
		}
	}
	for _, l := range doc.Lines {
		if t := HeadingText(l); t != "" {
			if strings.HasPrefix(l, "# ") {
				// The first marked heading, a main one, is the title, whatever short lines stand
				// above it (a web page's kicker, "Exhibition", or breadcrumb).
				return t
			}
			break
		}
	}
	if len(heads) > 0 {
		return heads[0]
	}
	base := path.Base(doc.Path)
	base = strings.TrimSuffix(base, path.Ext(base))
	return strings.Join(strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' }), " ")
}

var (
	reListItem  = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S`)
	reListMark  = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,3}[.)])\s+`)
	reSetext    = regexp.MustCompile(`^\s*(?:=+|-+)\s*$`)
	reTableSep  = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	reFieldLine = regexp.MustCompile(`^(?:\*\*|__)?[A-Z][A-Za-z0-9 ./&'()-]{0,30}(?::(?:\*\*|__)?|(?:\*\*|__):) +\S`)
	reLabelEnd  = regexp.MustCompile(`:(?:\*\*|__)? `) // "Price: ", "**Price:** "
	reFence     = regexp.MustCompile("^\\s*(```|~~~)")
	reHeading   = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)
	// reAsked is a question of a plain-text FAQ: "Q: …?", "Question: …?".
	reAsked = regexp.MustCompile(`^(?:Q|Question)\s*[:.)]\s*(.+\?)$`)
)

// HeadingText returns the text of a Markdown ATX heading line ("## Costs" → "Costs", a closing
// "#" sequence dropped), else "" (an empty heading too): how documents' headings are read.
func HeadingText(line string) string {
	i := 0
	for i < len(line) && i < 7 && line[i] == '#' {
		i++
	}
	if i == 0 || i > 6 || i == len(line) || line[i] != ' ' {
		return ""
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[i:]), "#"))
}

// Heading reports whether line is a Markdown ATX heading with some text after its marker, and
// returns that text as written (a closing "#" sequence kept): how a report's headings are read
// (its sources list, its continuation sections).
func Heading(line string) (string, bool) {
	m := reHeading.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ListItem is a list item line without its marker ("- a" and "2. a" are "a").
func ListItem(line string) (string, bool) {
	m := reListMark.FindString(line)
	return line[len(m):], m != ""
}

// withoutRunning blanks a text's running headers and footers: a short line ending in a page number
// that recurs with only its figures changed ("Pask et al. / Journal of … 214-229    217", "Page 3
// of 12"), as text copied from a PDF carries page by page. It is no heading and states nothing.
func withoutRunning(lines []string) []string {
	count := map[string]int{}
	key := func(l string) string {
		t := strings.TrimSpace(l)
		if t == "" || !rePageNumber.MatchString(t) || len(strings.Fields(t)) > 15 || reListItem.MatchString(l) {
			return ""
		}
		return strings.Join(strings.Fields(reDigits.ReplaceAllString(t, "#")), " ")
	}
	for _, l := range lines {
		if k := key(l); k != "" {
			count[k]++
		}
	}
	var out []string
	for i, l := range lines {
		if k := key(l); k != "" && count[k] > 1 {
			if out == nil {
				out = slices.Clone(lines)
			}
			out[i] = ""
		}
	}
	if out == nil {
		return lines
	}
	return out
}

var reDigits = regexp.MustCompile(`\d+`)

// rePageNumber is a line that ends in a page number: set apart from the rest ("… 214-229     217")
// or as a page ("Page 3 of 12", "- 4 -").
var rePageNumber = regexp.MustCompile(`(?i)(?:\S\s{3,}\d{1,4}|^page \d{1,4}(?: of \d{1,4})?|^-\s*\d{1,4}\s*-)$`)

// Parsed is one document cut into units and tables.
type Parsed struct {
	Units  []Unit
	Tables []Table
	Title  string
}

// ParseDocument cuts a document into units. CSV and TSV files are one table; other text is read
// as Markdown-like prose: headings (ATX, setext, or short unpunctuated lines standing alone),
// paragraphs joined across hard wraps, list items, field lines and pipe tables.
func ParseDocument(d int, doc Document, para *int) Parsed {
	switch strings.ToLower(path.Ext(doc.Path)) {
	case ".csv", ".tsv":
		return parseDelimited(d, doc, para)
	}
	p := &docParser{d: d, doc: doc, lines: doc.Lines, para: para}
	if doc.Kind == "text" || doc.Kind == "pdf" {
		p.lines = withoutRunning(doc.Lines)
	}
	p.run()
	p.setParents()
	title := docTitle(doc, p.heads)
	for i := range p.out.Tables {
		if p.out.Tables[i].Title == "" {
			p.out.Tables[i].Title = title
		}
	}
	p.out.Title = title
	return p.out
}

func parseDelimited(d int, doc Document, para *int) Parsed {
	out := Parsed{Title: docTitle(doc, nil)}
	r := csv.NewReader(bytes.NewReader([]byte(strings.Join(doc.Lines, "\n"))))
	if strings.EqualFold(path.Ext(doc.Path), ".tsv") {
		r.Comma = '\t'
	}
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	t := Table{Doc: d, Title: out.Title}
	for {
		rec, err := r.Read()
		if err != nil {
			break // io.EOF, or a malformed line: keep what was read
		}
		line, _ := r.FieldPos(0)
		if line < 1 || line > len(doc.Lines) || strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		cells := make([]string, len(rec))
		for i, c := range rec {
			cells[i] = nlp.Collapse(c)
		}
		text := strings.TrimSpace(doc.Lines[line-1])
		if t.Header == nil {
			t.Header, t.HeaderLine, t.HeaderText = cells, line, text
			continue
		}
		t.Rows = append(t.Rows, cells)
		t.RowLines = append(t.RowLines, line)
		t.RowText = append(t.RowText, text)
	}
	if len(t.Rows) > 0 {
		*para++
		out.Tables = append(out.Tables, t)
		for i := range t.Rows {
			out.Units = append(out.Units, Unit{Doc: d, Kind: UnitRow, Start: t.RowLines[i], End: t.RowLines[i],
				Text: t.RowText[i], Para: *para, Table: 0, Row: i, Prev: -1})
		}
	}
	return out
}

type outlined struct {
	level int
	text  string
}

type parentMark struct {
	from   int
	parent string
}

type docParser struct {
	d       int
	doc     Document
	lines   []string
	para    *int
	section string
	heads   []string
	lastPar string // the last prose paragraph, a table's caption
	// outline is the marked headings (level, text) the current one is under, itself last; parents
	// records, from each unit index on, the heading the current section is part of.
	outline []outlined
	parents []parentMark
	// headedAt is the number of units when the last heading was read, plus one (0: none yet).
	headedAt int
	out      Parsed
	// A line that ends in a colon and announces a list ("Common side effects (may affect up to
	// 1 in 10 people):") heads the list's items, not the paragraphs after the list: outer is the
	// section it interrupts, listed whether items have followed it.
	leadIn, listed bool
	outer          string
}

func (p *docParser) heading(text string) {
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "#"))
	if text == "" {
		return
	}
	if strings.HasSuffix(text, ":") && len(nlp.Terms(text)) == 0 {
		return // "These are:" names nothing: its list stays in the section that introduced it
	}
	if p.subtitle(text) {
		// "FENWICK MUTUAL BANK PLC" / "EVERYDAY CURRENT ACCOUNT": a plain-text title page's blocks
		// in capitals, with nothing between them, are one title.
		p.heads[0] += " " + text
		p.section = p.heads[0]
		return
	}
	parent := ""
	if n := len(p.outline); n > 0 {
		parent = p.outline[n-1].text // a heading without a level is under the marked one above
		if p.outline[n-1].text == text && n > 1 {
			parent = p.outline[n-2].text
		} else if p.outline[n-1].text == text {
			parent = ""
		}
	}
	p.parents = append(p.parents, parentMark{from: len(p.out.Units), parent: parent})
	outer := p.section
	if p.leadIn {
		outer = p.outer
	}
	p.leadIn, p.listed, p.outer = strings.HasSuffix(text, ":"), false, outer
	p.section = text
	p.heads = append(p.heads, text)
	p.lastPar = ""
	p.headedAt = len(p.out.Units) + 1
}

// outlineHeading notes a marked heading of the given level ("## " is 2): the headings of its level
// and below end where it starts.
func (p *docParser) outlineHeading(level int, text string) {
	for len(p.outline) > 0 && p.outline[len(p.outline)-1].level >= level {
		p.outline = p.outline[:len(p.outline)-1]
	}
	p.outline = append(p.outline, outlined{level, strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "#"))})
}

// setParents gives each unit the heading its section is part of.
func (p *docParser) setParents() {
	k := -1
	for u := range p.out.Units {
		for k+1 < len(p.parents) && p.parents[k+1].from <= u {
			k++
		}
		if k >= 0 && p.parents[k].parent != p.out.Units[u].Heading {
			p.out.Units[u].Parent = p.parents[k].parent
		}
	}
}

// subtitle: text, a heading in capitals, follows the title of a plain-text document with nothing
// between them (and is no numbered section heading: "1. ACCOUNT FEES").
func (p *docParser) subtitle(text string) bool {
	return p.doc.Kind == "text" && len(p.heads) == 1 && len(p.out.Units) == 0 && p.section == p.heads[0] &&
		allCaps(p.heads[0]) && allCaps(text) && !reListItem.MatchString(text) && !reClauseMark.MatchString(text)
}

// pageContent: a paragraph of a web page is content, however short, unless all in bold (pages
// that do not mark a heading embolden it): a page marks its headings, and "<dt>Start
// date</dt><dd>21 September 2026</dd>" is a heading and what it heads; "<p class="dates">7 March –
// 30 August 2026</p>" under the main heading is none. A plain-text document may stack a title
// above a section's heading.
func (p *docParser) pageContent(text string) bool {
	return p.doc.Kind == "html" && (p.headedAt == len(p.out.Units)+1 || Unemphasised(strings.TrimSpace(text)) == strings.TrimSpace(text))
}

// Unemphasised is a line without the emphasis that wraps it whole: "*Patient information · …*",
// "**Opening hours**".
func Unemphasised(t string) string {
	for _, m := range []string{"**", "__", "*", "_"} {
		if len(t) > 2*len(m) && strings.HasPrefix(t, m) && strings.HasSuffix(t, m) && t[len(m)] != ' ' {
			return strings.TrimSpace(t[len(m) : len(t)-len(m)])
		}
	}
	return t
}

// endLeadIn: prose after a lead-in's list is under the section the lead-in interrupted.
func (p *docParser) endLeadIn() {
	if p.leadIn && p.listed {
		p.section, p.leadIn = p.outer, false
	}
}

func (p *docParser) run() {
	n := len(p.lines)
	for i := 0; i < n; {
		t := strings.TrimSpace(p.lines[i])
		switch {
		case t == "":
			i++
		case reRule.MatchString(t) && (i == 0 || strings.TrimSpace(p.lines[i-1]) == "" || numberedHeading(p.lines, i-1)):
			i++ // "=====" after a blank line (or boxing a numbered heading) divides the text
		case reFence.MatchString(t):
			fence := reFence.FindStringSubmatch(t)[1]
			i++
			for i < n && !strings.HasPrefix(strings.TrimSpace(p.lines[i]), fence) {
				i++
			}
			i++
		case HeadingText(t) != "":
			p.outlineHeading(len(t)-len(strings.TrimLeft(t, "#")), HeadingText(t))
			p.heading(HeadingText(t))
			i++
		case i+1 < n && reSetext.MatchString(p.lines[i+1]) && !reListItem.MatchString(t) && !strings.HasPrefix(t, "|"):
			if j, ok := p.alignedTable(i); ok {
				i = j // "Service      Fee" ruled off from its rows: a table's header, no heading
				break
			}
			p.heading(t)
			i += 2
		case strings.Contains(t, "|") && i+1 < n && reTableSep.MatchString(p.lines[i+1]) && strings.Contains(p.lines[i+1], "|"):
			i = p.pipeTable(i)
		case p.clauseAt(i):
			i = p.clause(i)
		case reListItem.MatchString(p.lines[i]) && numberedHeading(p.lines, i):
			p.heading(strings.TrimSpace(reListMark.ReplaceAllString(p.lines[i], "")))
			i++
		case reListItem.MatchString(p.lines[i]):
			i = p.listItem(i)
		default:
			if j, ok := p.alignedTable(i); ok {
				i = j
				break
			}
			i = p.paragraph(i)
		}
	}
}

// structural reports whether a line starts something other than prose.
func structural(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || HeadingText(t) != "" || reListItem.MatchString(line) || reFence.MatchString(t) ||
		(strings.HasPrefix(t, "|") && strings.HasSuffix(t, "|"))
}

func splitPipeRow(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "|"), "|")
	cells := strings.Split(t, "|")
	for i := range cells {
		cells[i] = nlp.Collapse(strings.ReplaceAll(cells[i], "`", ""))
	}
	return cells
}

func (p *docParser) pipeTable(i int) int {
	t := Table{Doc: p.d, Title: p.section, Caption: p.lastPar, Header: splitPipeRow(p.lines[i]), HeaderLine: i + 1,
		HeaderText: strings.TrimSpace(p.lines[i])}
	j := i + 2
	for j < len(p.lines) && strings.Contains(p.lines[j], "|") && strings.TrimSpace(p.lines[j]) != "" {
		t.Rows = append(t.Rows, splitPipeRow(p.lines[j]))
		t.RowLines = append(t.RowLines, j+1)
		t.RowText = append(t.RowText, strings.TrimSpace(p.lines[j]))
		j++
	}
	if len(t.Rows) == 0 {
		return j
	}
	p.addTable(t)
	return j
}

// numberedHeading: line i is a numbered title in capitals standing alone ("2. RESULTS FOR THE
// QUARTER" between blank lines), as plain-text reports number their sections, not a list item.
func numberedHeading(lines []string, i int) bool {
	text := strings.TrimSpace(reListMark.ReplaceAllString(lines[i], ""))
	ruled := func(l string) bool { return strings.TrimSpace(l) == "" || reRule.MatchString(l) } // "=====" boxes a heading
	alone := (i == 0 || ruled(lines[i-1])) &&
		(i+1 == len(lines) || ruled(lines[i+1]) || reClauseMark.MatchString(lines[i+1]))
	return alone && allCaps(text) && len(strings.Fields(text)) <= 8 && !EndsSentence(text)
}

// addTable adds a table, each of its rows a unit of one paragraph.
func (p *docParser) addTable(t Table) {
	*p.para++
	ti := len(p.out.Tables)
	for r := range t.Rows {
		t.Units = append(t.Units, len(p.out.Units))
		p.out.Units = append(p.out.Units, Unit{Doc: p.d, Kind: UnitRow, Start: t.RowLines[r], End: t.RowLines[r], Text: t.RowText[r],
			Section: p.section, Heading: p.section, Para: *p.para, Table: ti, Row: r, Prev: -1})
	}
	p.out.Tables = append(p.out.Tables, t)
}

// listItem reads one item and its continuation lines (indented, or lazily continued prose).
func (p *docParser) listItem(i int) int {
	lines := []string{reListMark.ReplaceAllString(p.lines[i], "")}
	j := i + 1
	for j < len(p.lines) && !structural(p.lines[j]) && !p.clauseAt(j) {
		lines = append(lines, p.lines[j])
		j++
	}
	p.prose(i+1, lines, UnitItem)
	p.listed = true
	return j
}

// paragraph reads prose up to a blank or structural line: a heading when it is short, unpunctuated
// and alone; field lines when every line is "Label: value"; otherwise sentences.
func (p *docParser) paragraph(i int) int {
	p.endLeadIn()
	j := i
	for j < len(p.lines) && !structural(p.lines[j]) && (j == i || !p.clauseAt(j)) {
		j++
	}
	if j == i { // a lone "|" line or similar: skip it
		return i + 1
	}
	if q := reAsked.FindStringSubmatch(strings.TrimSpace(p.lines[i])); q != nil {
		// "Q: How long can I keep a book?" heads its answer, as an FAQ page's heading does.
		p.heading(q[1])
		if i+1 < len(p.lines) && !structural(p.lines[i+1]) {
			return p.paragraph(i + 1)
		}
		return i + 1
	}
	if first := strings.TrimSpace(p.lines[i]); j-i > 1 && looksLikeHeading(p.lines[i:i+1], first) &&
		reFieldLine.MatchString(strings.TrimSpace(p.lines[i+1])) && !reFieldLine.MatchString(first) {
		// A title line straight above "Present: …" or "From: …" heads them; it does not run
		// into them as one sentence.
		p.heading(first)
		return p.paragraph(i + 1)
	}
	lines := p.lines[i:j]
	if k := capsTitle(lines); k > 0 && (i == p.firstLine() || p.doc.Kind == "text") {
		// A title stacked in capitals above the document's version or date line heads it; in plain
		// text, a heading in capitals straight above its paragraph ("MIGRATION PROCEDURE") too.
		p.heading(nlp.Collapse(strings.Join(lines[:k], " ")))
		return p.paragraph(i + k)
	}
	if len(lines) == 1 && reFooter.MatchString(lines[0]) && len(strings.Fields(lines[0])) <= 25 {
		// "Lumenet Community Forums | Privacy | © 2025 Lumenet Broadband Ltd": a saved page's
		// footer, whatever its format, says nothing.
		return j
	}
	if leaderBlock(lines) {
		p.leaders(i+1, lines)
		return j
	}
	text := nlp.Collapse(strings.Join(lines, " "))
	if looksLikeHeading(lines, text) && !p.pageContent(text) {
		p.heading(text)
		return j
	}
	if fieldLines(lines) {
		// One record: the lines share a paragraph, and each has the others as context.
		*p.para++
		prev := -1
		for k, l := range lines {
			p.out.Units = append(p.out.Units, Unit{Doc: p.d, Kind: UnitField, Start: i + k + 1, End: i + k + 1, Text: nlp.Collapse(l),
				Section: p.section, Heading: p.section, Para: *p.para, Table: -1, Row: -1, Prev: prev})
			prev = len(p.out.Units) - 1
		}
		return j
	}
	p.prose(i+1, lines, UnitSentence)
	p.lastPar = text
	return j
}

// reFooter is a copyright notice, as a page's footer ends.
var reFooter = regexp.MustCompile(`(?i)(?:©|\(c\))\s*(?:\d{4}|copyright)|^\s*copyright\b|all rights reserved`)

// fieldLines: every line of a paragraph is a "Label: value" line, as a record's are. A line may
// hold a sentence or two ("Proposal: Change of use of the ground floor …; and use of the rear
// courtyard for outdoor seating.") when another line is a plain field ("Site: 3 Market Steps"): a
// lone "Note: the lido closes early." stays a sentence.
func fieldLines(lines []string) bool {
	plain := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if !reFieldLine.MatchString(t) {
			return false
		}
		plain = plain || !EndsSentence(t)
	}
	return plain && (len(lines) > 1 || !EndsSentence(strings.TrimSpace(lines[0])))
}

// IsFieldLine: line is a "Label: value" line ("Date: 3 May 2026", "**Property:** Flat 4B") that
// does not end as a sentence does.
func IsFieldLine(line string) bool {
	t := strings.TrimSpace(line)
	return reFieldLine.MatchString(t) && !EndsSentence(t)
}

// looksLikeHeading: one or two lines (up to four in capitals, as a title page stacks its issuer,
// product and kind of document), fourteen words at most, no sentence punctuation at the end, and
// not a field line. Plain-text documents title their sections this way.
func looksLikeHeading(lines []string, text string) bool {
	if len(lines) > 2 && (len(lines) > 4 || !allCaps(text)) || len(strings.Fields(text)) > 14 || EndsSentence(text) || strings.HasSuffix(text, ",") {
		return false
	}
	if allCaps(text) {
		return true
	}
	if reFieldLine.MatchString(text) && reLabelEnd.MatchString(text) && !strings.HasSuffix(text, ":") {
		return false
	}
	// A lower-case start reads as the rest of a sentence, not a title.
	r, _ := utf8.DecodeRuneInString(text)
	return !unicode.IsLower(r)
}

// allCaps: every letter is upper case (and there are some).
func allCaps(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if !unicode.IsUpper(r) {
				return false
			}
			n++
		}
	}
	return n >= 3
}

// EndsSentence: s ends as a sentence does, with ".", "!", "?" or "…", closing quotes or brackets
// aside.
func EndsSentence(s string) bool {
	s = strings.TrimRight(s, `)"'”’»`)
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "…")
}

// prose joins lines (first is the 1-based number of lines[0]) and cuts the text into sentences,
// each knowing the source lines it spans. A first sentence of one or two words ("Results.") is a
// run-in heading: it becomes the section of the sentences after it.
func (p *docParser) prose(first int, lines []string, kind string) {
	if p.doc.Kind == "html" && len(lines) > 1 {
		// A page's lines within a paragraph are broken by <br>: a sentence does not run across
		// one, as a plain-text document's wrapped lines do.
		*p.para++
		para, prev := *p.para, -1
		for k, l := range lines {
			prev = p.sentences(first+k, []string{l}, kind, para, prev)
		}
		return
	}
	*p.para++
	p.sentences(first, lines, kind, *p.para, -1)
}

// sentences adds the sentences of lines, one paragraph's text, after the unit prev (-1 for none)
// and returns the last one added.
func (p *docParser) sentences(first int, lines []string, kind string, para, prev int) int {
	var b strings.Builder
	var lineAt []int // byte offset in b → source line
	for k, l := range lines {
		l = nlp.Collapse(l)
		if l == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
			lineAt = append(lineAt, first+k)
		}
		b.WriteString(l)
		for range len(l) {
			lineAt = append(lineAt, first+k)
		}
	}
	text := b.String()
	if text == "" {
		return prev
	}
	section := p.section
	for _, sp := range sentenceSpans(text) {
		for sp[0] < sp[1] && text[sp[0]] == ' ' {
			sp[0]++
		}
		s := strings.TrimSpace(text[sp[0]:sp[1]])
		if s == "" {
			continue
		}
		if prev == -1 && kind == UnitSentence && len(strings.Fields(s)) <= 2 && strings.HasSuffix(s, ".") && sp[1] < len(text) {
			section = strings.TrimSuffix(s, ".")
			continue
		}
		u := Unit{Doc: p.d, Kind: kind, Start: lineAt[sp[0]], End: lineAt[max(sp[0], sp[1]-1)], Text: s,
			Section: section, Heading: p.section, Para: para, Table: -1, Row: -1, Prev: prev}
		prev = len(p.out.Units)
		p.out.Units = append(p.out.Units, u)
	}
	return prev
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "dr": true, "mr": true, "mrs": true, "ms": true,
	"prof": true, "st": true, "no": true, "fig": true, "approx": true, "inc": true, "ltd": true, "co": true,
	"jr": true, "sr": true, "cf": true, "al": true, "ca": true, "mt": true, "jan": true, "feb": true,
	"aug": true, "sept": true, "oct": true, "nov": true, "dec": true, "corp": true, "dept": true, "est": true,
}

// sentenceSpans cuts text into sentences: at ".", "!", "?" or "…" (after any closing quote or
// bracket) followed by a space and a character that can start a sentence. Abbreviations, initials
// ("L. Okafor") and decimals do not end sentences.
func sentenceSpans(text string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != '.' && r != '!' && r != '?' && r != '…' {
			continue
		}
		end := i
		for end < len(text) {
			c, sz := utf8.DecodeRuneInString(text[end:])
			if !strings.ContainsRune(`)"'”’»]`, c) {
				break
			}
			end += sz
		}
		if end < len(text) && text[end] != ' ' {
			continue
		}
		next := strings.TrimLeft(text[end:], " ")
		if next != "" {
			c, _ := utf8.DecodeRuneInString(next)
			if unicode.IsLower(c) {
				continue
			}
		}
		if r == '.' && (abbreviationBefore(text[start:i-1]) || numberedBefore(text[start:i-1], next)) {
			continue
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	if strings.TrimSpace(text[start:]) != "" {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

// numbered are abbreviations that stand before a number: a work's number ("Op. 21", "Vol. 2",
// "pp. 10–12") or a date of reign, birth, death or activity ("r. 1521–1567", "b. 1950").
var numbered = map[string]bool{"op": true, "opp": true, "nos": true, "vol": true, "vols": true, "pp": true,
	"ch": true, "fig": true, "figs": true, "art": true, "sec": true, "r": true, "b": true, "d": true, "fl": true}

// numberedBefore: the word before a period is such an abbreviation and a number follows.
func numberedBefore(s, next string) bool {
	if next == "" || next[0] < '0' || next[0] > '9' {
		return false
	}
	return numbered[strings.ToLower(wordBefore(s))]
}

// wordBefore is the last word of s, after its last space, bracket or quote.
func wordBefore(s string) string {
	return s[strings.LastIndexAny(s, " (\"“")+1:]
}

// abbreviationBefore: the word before a period is an abbreviation or an initial.
func abbreviationBefore(s string) bool {
	tok := wordBefore(s)
	if tok == "" {
		return false
	}
	if utf8.RuneCountInString(tok) == 1 {
		r, _ := utf8.DecodeRuneInString(tok)
		return unicode.IsUpper(r) || r == 'c' // an initial, or "c." for circa ("( c. 1190 – 1244)")
	}
	return abbreviations[strings.ToLower(tok)] || strings.Contains(tok, ".") && !isNumberLike(tok)
}

func isNumberLike(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return false
		}
	}
	return true
}
