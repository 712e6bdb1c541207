package extractive

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/output"
)

// quoteRef is one quoted thing: a unit, or rows of a table quoted under their header row.
type quoteRef struct {
	Unit  int // -1 for a table quote
	Table int
	Rows  []int
}

func unitRef(u int) quoteRef { return quoteRef{Unit: u, Table: -1} }

func (q quoteRef) key() string {
	if q.Unit >= 0 {
		return "u" + strconv.Itoa(q.Unit)
	}
	var b strings.Builder
	b.WriteString("t" + strconv.Itoa(q.Table))
	for _, r := range q.Rows {
		b.WriteString("," + strconv.Itoa(r))
	}
	return b.String()
}

// citations numbers quotes in order of first use, after an offset (a continuation continues the
// prior report's numbering).
type citations struct {
	offset int
	order  []quoteRef
	num    map[string]int
}

func newCitations(offset int) *citations { return &citations{offset: offset, num: map[string]int{}} }

func (c *citations) of(q quoteRef) int {
	if n, ok := c.num[q.key()]; ok {
		return n
	}
	c.order = append(c.order, q)
	c.num[q.key()] = c.offset + len(c.order)
	return c.num[q.key()]
}

// answerRef is what an answer's citation points at: a unit, a table row (quoted with its
// header), or a comparison's rows.
func (r *extractiveRun) answerRefs(f finding) []quoteRef {
	if f.Compare != nil {
		return []quoteRef{{Unit: -1, Table: f.Compare.Table, Rows: f.Compare.Rows}}
	}
	var out []quoteRef
	for _, u := range f.Answer {
		out = append(out, r.refOf(u))
	}
	return out
}

func (r *extractiveRun) refOf(u int) quoteRef {
	if un := r.c.units[u]; un.Kind == extract.UnitRow {
		return quoteRef{Unit: -1, Table: un.Table, Rows: []int{un.Row}}
	}
	return unitRef(u)
}

// answerText is a finding's answer: the answering sentences verbatim, or for a table the sentence
// that states the row or the comparison, each cited.
func (r *extractiveRun) answerText(f finding, cites *citations) string {
	if f.Compare != nil {
		return nlp.EscapeMarkdown(f.Compare.Sentence) + fmt.Sprintf(" [%d]", cites.of(r.answerRefs(f)[0]))
	}
	s := r.c.scorer(f.Q)
	var parts []string
	for i, u := range f.Answer {
		if i < len(f.Parts) && f.Parts[i] != "" && (i == 0 || f.Parts[i] != f.Parts[i-1]) {
			parts = append(parts, "**"+nlp.EscapeMarkdown(capitalize(f.Parts[i]))+":**")
		}
		ref := r.refOf(u)
		if n, done := cites.num[ref.key()]; done {
			// Stated for an earlier sub-question: cited, not repeated.
			parts = append(parts, fmt.Sprintf("Stated above [%d].", n))
			continue
		}
		raw := r.c.units[u].Text
		text := nlp.EscapeMarkdown(raw)
		if r.c.units[u].Kind == extract.UnitRow {
			text = nlp.EscapeMarkdown(s.rowSentence(u)) // states the row, which the evidence quotes
		} else if !strings.ContainsAny(raw, "“”") {
			text = "“" + nlp.EscapeMarkdownInline(raw) + "”" // verbatim: verified as an inline quotation
		}
		parts = append(parts, text+fmt.Sprintf(" [%d]", cites.of(ref)))
	}
	return strings.Join(parts, " ")
}

func notAnswered(f finding) string {
	return "The sources do not answer this. " + f.Missing
}

// render builds the whole report, or, in a continuation, the prior report plus a continuation.
func (r *extractiveRun) render(subs []subQuestion, found []finding, dropped []subQuestion, draft bool) string {
	cites := newCitations(r.prior.maxCite)
	r.cites = cites
	if r.prior.text != "" {
		return strings.TrimRight(r.in.PriorReport, "\n") + "\n\n" + r.renderContinuation(subs, found, dropped, draft, cites)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", nlp.EscapeMarkdown(output.Title(r.in.Question)))
	fmt.Fprintf(&b, "_Extractive report · effort %s · %s · %s_\n\n", r.in.Effort, r.sourceCount(found), plural(len(subs), "sub-question"))
	if draft {
		fmt.Fprintf(&b, "> **Draft:** %d of %d sub-questions researched so far.\n\n", len(found), len(subs))
	}
	b.WriteString("## Answer\n\n")
	switch {
	case len(found) == 1 && found[0].answered():
		b.WriteString(r.answerText(found[0], cites) + "\n\n")
	case len(found) == 1:
		b.WriteString(notAnswered(found[0]) + "\n\n")
	default:
		for _, f := range found {
			if f.answered() {
				fmt.Fprintf(&b, "- **%s** %s\n", nlp.EscapeMarkdown(f.Sub.Text), r.answerText(f, cites))
			} else {
				fmt.Fprintf(&b, "- **%s** %s\n", nlp.EscapeMarkdown(f.Sub.Text), notAnswered(f))
			}
		}
		b.WriteString("\n")
	}
	var ev strings.Builder
	for i, f := range found {
		q := r.renderQuotes(f, cites)
		if q == "" {
			continue
		}
		if len(found) > 1 {
			fmt.Fprintf(&ev, "### %d. %s\n\n", i+1, nlp.EscapeMarkdown(f.Sub.Text))
		}
		ev.WriteString(q)
	}
	if ev.Len() > 0 {
		b.WriteString("## Evidence\n\n" + ev.String())
	}
	b.WriteString(r.openQuestions(found, dropped, "##"))
	if !draft {
		b.WriteString(r.limitations())
	}
	b.WriteString("## Sources\n\n")
	b.WriteString(r.sourceList(cites))
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// sourceCount says how many sources there were and how many were quoted.
func (r *extractiveRun) sourceCount(found []finding) string {
	docs := map[int]bool{}
	for _, f := range found {
		for _, ref := range append(r.answerRefs(f), r.supportRefs(f)...) {
			docs[r.refDoc(ref)] = true
		}
	}
	return fmt.Sprintf("%s, quotes from %d", plural(len(r.c.docs), "source"), len(docs))
}

func (r *extractiveRun) refDoc(q quoteRef) int {
	if q.Unit >= 0 {
		return r.c.units[q.Unit].Doc
	}
	return r.c.tables[q.Table].Doc
}

func (r *extractiveRun) supportRefs(f finding) []quoteRef {
	var out []quoteRef
	seen := map[string]bool{}
	for _, u := range f.Support {
		ref := r.refOf(u)
		if !seen[ref.key()] {
			seen[ref.key()] = true
			out = append(out, ref)
		}
	}
	return out
}

// renderQuotes quotes a finding's evidence: a table answer's rows under their header, then the
// supporting passages. Prose answer sentences are not quoted again (they are the answer).
func (r *extractiveRun) renderQuotes(f finding, cites *citations) string {
	var b strings.Builder
	for _, ref := range r.answerRefs(f) {
		if ref.Unit < 0 {
			b.WriteString(r.quote(ref, cites))
		}
	}
	for _, ref := range r.supportRefs(f) {
		if _, done := cites.num[ref.key()]; done {
			continue // quoted already (for another sub-question): cite, do not repeat
		}
		b.WriteString(r.quote(ref, cites))
	}
	return b.String()
}

// renderFinding is one finding alone, for the timeline.
func (r *extractiveRun) renderFinding(f finding) string {
	cites := newCitations(0)
	var b strings.Builder
	if f.answered() {
		b.WriteString(r.answerText(f, cites) + "\n\n")
	} else {
		b.WriteString(notAnswered(f) + "\n\n")
	}
	b.WriteString(r.renderQuotes(f, cites))
	return b.String()
}

// quote renders one quote as a block quote with its citation. Prose is one escaped paragraph;
// table rows keep their lines (header first) in a code block.
func (r *extractiveRun) quote(ref quoteRef, cites *citations) string {
	n := cites.of(ref)
	var b strings.Builder
	switch {
	case ref.Unit >= 0:
		fmt.Fprintf(&b, "> %s\n", nlp.EscapeMarkdown(r.c.units[ref.Unit].Text))
	case r.c.docs[r.c.tables[ref.Table].Doc].Kind != "text":
		// A table of an HTML page or a Word or PDF file has no "| a | b |" lines of its own: its
		// cells are quoted as they stand in the page, in order, "…" between them.
		for _, l := range r.tableQuoteLines(ref) {
			fmt.Fprintf(&b, "> %s\n", nlp.EscapeMarkdown(strings.Join(pipeCells(l), " … ")))
		}
	default:
		lines := r.tableQuoteLines(ref)
		fence := "```"
		if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "```") }) {
			fence = "~~~"
		}
		b.WriteString("> " + fence + "\n")
		for _, l := range lines {
			b.WriteString("> " + l + "\n")
		}
		b.WriteString("> " + fence + "\n")
	}
	fmt.Fprintf(&b, ">\n> — %s [%d]\n\n", r.citeOf(ref), n)
	return b.String()
}

// pipeCells are the cells of a "| a | b |" row; "…" (lines left out) is itself.
func pipeCells(row string) []string {
	var out []string
	for _, c := range strings.Split(strings.Trim(row, "| "), " | ") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// tableQuoteLines are a table quote's source lines in source order: the header row, then the
// quoted rows, with "…" where lines between them are left out (a verifier reads the pieces in order).
func (r *extractiveRun) tableQuoteLines(ref quoteRef) []string {
	t := r.c.tables[ref.Table]
	lines := []string{t.HeaderText}
	prev := t.HeaderLine
	for _, row := range sortedRows(ref.Rows) {
		if t.RowLines[row] > prev+1 {
			lines = append(lines, "…")
		}
		lines = append(lines, t.RowText[row])
		prev = t.RowLines[row]
	}
	return lines
}

func sortedRows(rows []int) []int {
	out := slices.Clone(rows)
	slices.Sort(out)
	return out
}

// citeOf is a quote's location: "`a.md`, lines 3–4" or, for table rows, "`t.csv`, lines 1, 7, 9".
func (r *extractiveRun) citeOf(ref quoteRef) string {
	if ref.Unit >= 0 {
		u := r.c.units[ref.Unit]
		return engine.CiteRange(r.c.docs[u.Doc].Path, u.Start, u.End)
	}
	t := r.c.tables[ref.Table]
	nums := []string{strconv.Itoa(t.HeaderLine)}
	for _, row := range sortedRows(ref.Rows) {
		nums = append(nums, strconv.Itoa(t.RowLines[row]))
	}
	return "`" + r.c.docs[t.Doc].Path + "`, lines " + strings.Join(nums, ", ")
}

func (r *extractiveRun) sourceList(cites *citations) string {
	if len(cites.order) == 0 {
		return "No sources were quoted.\n"
	}
	var b strings.Builder
	for _, ref := range cites.order {
		fmt.Fprintf(&b, "%d. %s", cites.num[ref.key()], r.citeOf(ref))
		if ref.Unit < 0 {
			b.WriteString(" (table rows with their header row)")
		}
		d := r.c.docs[r.refDoc(ref)]
		if d.Web {
			// A page is cited by URL; its title and retrieval date say which copy was read.
			if d.Title != "" {
				fmt.Fprintf(&b, ", “%s”", nlp.EscapeMarkdown(d.Title))
			}
			if !d.Retrieved.IsZero() {
				fmt.Fprintf(&b, ", retrieved %s", d.Retrieved.UTC().Format("2006-01-02"))
			}
		}
		if d.Kind != "text" {
			fmt.Fprintf(&b, " (text extracted from %s)", strings.ToUpper(d.Kind))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// openQuestions lists what the report could not answer, in the words a continuation reads back.
func (r *extractiveRun) openQuestions(found []finding, dropped []subQuestion, level string) string {
	var b strings.Builder
	for _, f := range found {
		if !f.answered() {
			fmt.Fprintf(&b, "- %s — %s\n", nlp.EscapeMarkdown(f.Sub.Text), f.Missing)
		}
	}
	for _, s := range dropped {
		fmt.Fprintf(&b, "- %s — not researched at effort %s.\n", nlp.EscapeMarkdown(s.Text), r.in.Effort)
	}
	if b.Len() == 0 {
		return ""
	}
	return level + " Open questions\n\n" + b.String() + "\n"
}

// limitations are concrete: files that could not be read, a time budget that ran out.
func (r *extractiveRun) limitations() string {
	if len(r.skipped) == 0 && len(r.notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Limitations\n\n")
	for _, n := range r.notes {
		b.WriteString("- " + n + "\n")
	}
	if len(r.skipped) > 0 {
		b.WriteString("- Files that could not be read as text:\n")
		for _, s := range r.skipped {
			fmt.Fprintf(&b, "  - `%s`: %s\n", s.Path, s.Reason)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func (r *extractiveRun) continuationHeading() string {
	if r.prior.continuations == 0 {
		return "## Continuation\n\n"
	}
	return fmt.Sprintf("## Continuation %d\n\n", r.prior.continuations+1)
}

// renderContinuation adds to a prior report only what is new: for each open question it named
// (or, when it named none, each of its questions), new cited findings or a plain "still open".
func (r *extractiveRun) renderContinuation(subs []subQuestion, found []finding, dropped []subQuestion, draft bool, cites *citations) string {
	var b strings.Builder
	b.WriteString(r.continuationHeading())
	what := "the open questions of the report above"
	if !r.prior.hadOpen {
		what = "the question, for evidence the report above does not quote"
	}
	fmt.Fprintf(&b, "_Follow-up research by the extractive engine on %s · effort %s · passages quoted above are not quoted again_\n\n", what, r.in.Effort)
	if draft {
		fmt.Fprintf(&b, "> **Draft:** %d of %d follow-up questions researched so far.\n\n", len(found), len(subs))
	}
	if answeredCount(found) == 0 {
		b.WriteString("No new findings: the sources hold nothing more on these questions than the report above.\n\n")
	}
	for _, f := range found {
		fmt.Fprintf(&b, "### %s\n\n", nlp.EscapeMarkdown(f.Sub.Text))
		if !f.answered() {
			b.WriteString("Still not answered. " + f.Missing + "\n\n")
			continue
		}
		b.WriteString(r.answerText(f, cites) + "\n\n")
		b.WriteString(r.renderQuotes(f, cites))
	}
	b.WriteString(r.openQuestions(found, dropped, "###"))
	if len(cites.order) > 0 {
		b.WriteString("### Continuation sources\n\n")
		b.WriteString(r.sourceList(cites))
	}
	return b.String()
}
