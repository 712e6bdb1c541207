package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// OfflineOptions configure the offline engine.
type OfflineOptions struct {
	// CorpusDir is an optional local folder searched besides each job's own files.
	CorpusDir string
}

// NewOffline returns the built-in extractive engine: no network, same inputs → same report.
func NewOffline(opts OfflineOptions) Engine { return &offline{opts: opts} }

type offline struct{ opts OfflineOptions }

func (*offline) Name() string { return "offline" }

// quoteChars caps one quoted passage in the report.
const quoteChars = 600

// section is one sub-question with the passages found for it.
type section struct {
	Sub  subQuestion
	Hits []hit
}

// run carries one offline run's state.
type offlineRun struct {
	in      Input
	depth   depth
	em      emitter
	ix      *index
	skipped []skippedFile
	cites   *citations
}

// citations numbers passages in order of first use, starting after an offset (a continuation
// continues the prior report's numbering).
type citations struct {
	offset int
	order  []int
	num    map[int]int
}

func (c *citations) of(p int) int {
	if n, ok := c.num[p]; ok {
		return n
	}
	c.order = append(c.order, p)
	c.num[p] = c.offset + len(c.order)
	return c.num[p]
}

func (e *offline) Run(ctx context.Context, in Input, sink Sink) (Result, error) {
	if err := in.validate(); err != nil {
		return Result{}, err
	}
	schema, sch, err := in.outputSchema()
	if err != nil {
		return Result{}, err
	}
	r := &offlineRun{in: in, depth: depths[in.Effort], em: emitter{sink: sink}}
	return r.run(ctx, schema, sch, e.opts.CorpusDir)
}

func (r *offlineRun) run(ctx context.Context, schema map[string]any, sch *jsonschema.Schema, corpus string) (Result, error) {
	in, em := r.in, r.em
	err := em.event(ctx, KindStatus, "Research started", collapse(in.Question), map[string]any{
		"engine": "offline", "effort": in.Effort, "continuation": in.Continuation,
	})
	if err != nil {
		return Result{}, err
	}
	if err := recordExpert(ctx, em, in); err != nil {
		return Result{}, err
	}
	if in.Expert != nil && (in.SystemPrompt != "" || len(in.Skills) > 0 || len(in.Tools) > 0) {
		// Honest about what an engine without a model cannot follow: prose instructions and tools.
		err := em.event(ctx, KindStatus, "Expert instructions not applied",
			"The extractive engine has no model: it uses the expert's context files and output schema, but cannot follow its system prompt or skills or call its tools.", nil)
		if err != nil {
			return Result{}, err
		}
	}

	// Plan.
	var prior priorReport
	continuing := in.Continuation && strings.TrimSpace(in.PriorReport) != ""
	var subs []subQuestion
	if continuing {
		prior = parsePrior(in.PriorReport)
		subs = followUps(in.Question, r.depth.SubQuestions, prior)
	} else {
		subs = subQuestions(in.Question, r.depth.SubQuestions)
	}
	r.cites = &citations{offset: prior.maxCite, num: map[int]int{}}
	var plan strings.Builder
	var planned []string
	for i, s := range subs {
		fmt.Fprintf(&plan, "%d. %s\n", i+1, s.Text)
		planned = append(planned, s.Text)
	}
	title := "Planning sub-questions"
	if continuing {
		title = "Planning follow-up questions"
	}
	if err := em.event(ctx, KindThinking, title, plan.String(), map[string]any{"sub_questions": planned}); err != nil {
		return Result{}, err
	}

	// Read.
	dirs := sourceDirs(in, corpus)
	labels := make([]string, len(dirs))
	for i, d := range dirs {
		labels[i] = d.Label
	}
	if err := em.event(ctx, KindToolCall, "read_sources", strings.Join(labels, ", "), map[string]any{"tool": "read_sources", "folders": labels}); err != nil {
		return Result{}, err
	}
	docs, skipped, err := loadSources(ctx, dirs)
	if err != nil {
		return Result{}, err
	}
	r.ix, r.skipped = newIndex(docs), skipped
	paths := make([]string, len(docs))
	for i, d := range docs {
		paths[i] = d.Path
	}
	err = em.event(ctx, KindToolResult, "read_sources",
		fmt.Sprintf("%d readable files, %d passages, %d skipped", len(docs), len(r.ix.passages), len(skipped)),
		map[string]any{"tool": "read_sources", "files": paths, "passages": len(r.ix.passages), "skipped": len(skipped)})
	if err != nil {
		return Result{}, err
	}
	for _, s := range skipped {
		if err := em.event(ctx, KindStatus, "Skipped file", s.Path+": "+s.Reason, map[string]any{"path": s.Path, "reason": s.Reason}); err != nil {
			return Result{}, err
		}
	}

	// Search, one sub-question at a time; a draft is checkpointed halfway.
	var skip func(int) bool
	if continuing {
		skip = func(p int) bool { return prior.cited[citeKey(r.ix, p)] }
	}
	var sections []section
	used := map[int]bool{}
	draftAt := (len(subs) + 1) / 2
	for i, sq := range subs {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("engine: %w", err)
		}
		err := em.event(ctx, KindToolCall, "search", sq.Text, map[string]any{"tool": "search", "query": sq.Text, "terms": sq.Terms, "k": r.depth.Passages})
		if err != nil {
			return Result{}, err
		}
		hits := r.ix.search(sq.Terms, r.depth.Passages*3, r.ix.requireAny(sq.Must, skip))
		if sq.Numbers {
			hits = r.ix.boostFigures(hits)
		}
		hits = diversify(hits, used, r.depth.Passages)
		for _, h := range hits {
			used[h.P] = true
		}
		var lines []string
		var found []map[string]any
		for _, h := range hits {
			ps := r.ix.passages[h.P]
			score := math.Round(h.Score*1e4) / 1e4
			lines = append(lines, fmt.Sprintf("%s (score %s)", strings.ReplaceAll(r.ix.cite(h.P), "`", ""), strconv.FormatFloat(score, 'f', -1, 64)))
			found = append(found, map[string]any{"path": r.ix.docs[ps.Doc].Path, "start_line": ps.Start, "end_line": ps.End, "score": score})
		}
		if len(lines) == 0 {
			lines = []string{"no matching passage"}
		}
		if err := em.event(ctx, KindToolResult, "search", strings.Join(lines, "\n"), map[string]any{"tool": "search", "query": sq.Text, "hits": found}); err != nil {
			return Result{}, err
		}
		sections = append(sections, section{Sub: sq, Hits: hits})
		md := r.renderSection(i, sections[i], continuing)
		if err := em.event(ctx, KindText, "Section: "+sq.Text, md, map[string]any{"section": i + 1}); err != nil {
			return Result{}, err
		}
		if i+1 == draftAt {
			draft := r.render(subs, sections, prior, continuing, true)
			if err := in.Workspace.WriteFile(ReportPath, []byte(draft)); err != nil {
				return Result{}, fmt.Errorf("engine: write draft: %w", err)
			}
			if err := em.event(ctx, KindPreview, "Draft report", truncate(draft, 800), nil); err != nil {
				return Result{}, err
			}
			msg := fmt.Sprintf("Draft report (%d of %d sub-questions)", i+1, len(subs))
			if _, err := em.checkpoint(ctx, msg, "progress"); err != nil {
				return Result{}, err
			}
		}
	}
	report := r.render(subs, sections, prior, continuing, false)

	// Structured output.
	var structured map[string]any
	if schema != nil {
		if structured, err = r.structured(ctx, schema, sch); err != nil {
			return Result{}, err
		}
	}

	// The extractive engine calls no tools: required tool calls are reported as missed, not hidden.
	required, err := reportRequired(ctx, em, in.RequiredTools, nil)
	if err != nil {
		return Result{}, err
	}
	res, err := finish(ctx, em, in, report, structured, map[string]any{"path": ReportPath, "sources": len(r.cites.order)})
	res.RequiredTools = required
	return res, err
}

func (r *offlineRun) structured(ctx context.Context, schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	em := r.em
	if err := em.event(ctx, KindToolCall, "extract_structured_output", "Filling json_schema from the evidence", map[string]any{"tool": "extract_structured_output"}); err != nil {
		return nil, err
	}
	x := &extractor{ix: r.ix, k: r.depth.Passages, question: r.in.Question}
	out, err := normalizeJSON(x.fillObject(schema, ""))
	if err != nil {
		return nil, errorf(CodeStructuredOutputInvalid, "structured output is not JSON: %v", err)
	}
	b, _ := json.Marshal(out)
	if err := em.event(ctx, KindToolResult, "extract_structured_output", string(b), map[string]any{"tool": "extract_structured_output", "notes": x.notes}); err != nil {
		return nil, err
	}
	if err := validateAgainst(sch, out); err != nil {
		if e2 := em.event(ctx, KindStatus, "Structured output invalid", err.Error(), nil); e2 != nil {
			return nil, e2
		}
		return nil, err
	}
	return out, nil
}

// render builds the whole report (or, with continuing, the prior report plus a continuation).
func (r *offlineRun) render(subs []subQuestion, sections []section, prior priorReport, continuing, draft bool) string {
	// Number citations in section order before the summary refers to them.
	for _, s := range sections {
		for _, h := range s.Hits {
			r.cites.of(h.P)
		}
	}
	if continuing {
		return strings.TrimRight(r.in.PriorReport, "\n") + "\n\n" + r.renderContinuation(subs, sections, prior, draft)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(reportTitle(r.in.Question)))
	fmt.Fprintf(&b, "_Extractive report by the offline engine · effort %s · %d source files · %d passages searched_\n\n",
		r.in.Effort, len(r.ix.docs), len(r.ix.passages))
	if draft {
		fmt.Fprintf(&b, "> **Draft:** %d of %d sub-questions researched so far.\n\n", len(sections), len(subs))
	}
	b.WriteString("## Summary\n\n")
	b.WriteString(r.summary(sections))
	if len(subs) > 1 {
		b.WriteString("## Sub-questions\n\n")
		for i, s := range subs {
			fmt.Fprintf(&b, "%d. %s\n", i+1, mdEscape(s.Text))
		}
		b.WriteString("\n")
	}
	for i, s := range sections {
		b.WriteString(r.renderSection(i, s, false))
	}
	if r.depth.KeyTerms && !draft {
		b.WriteString(r.keyTerms())
	}
	if r.depth.Limitations && !draft {
		b.WriteString(r.limitations(sections))
	}
	b.WriteString("## Sources\n\n")
	b.WriteString(r.sourceList())
	return b.String()
}

func (r *offlineRun) summary(sections []section) string {
	var b strings.Builder
	answered := 0
	for _, s := range sections {
		if len(s.Hits) > 0 {
			answered++
		}
	}
	switch {
	case len(r.ix.docs) == 0:
		b.WriteString("No evidence was found: no readable source files were provided (no input files, context files or corpus documents), so this report cannot answer the question from evidence.\n\n")
		if len(r.skipped) > 0 {
			fmt.Fprintf(&b, "%d file(s) could not be read as text; see the skipped files below.\n\n", len(r.skipped))
			b.WriteString(r.skippedList())
		}
		return b.String()
	case answered == 0:
		fmt.Fprintf(&b, "No evidence was found: none of the %d readable source files contains a passage that matches the question. The sources may not cover this topic.\n\n", len(r.ix.docs))
		return b.String()
	}
	fmt.Fprintf(&b, "The sources address %d of %d sub-questions.\n\n", answered, len(sections))
	for _, s := range sections {
		if len(s.Hits) == 0 {
			fmt.Fprintf(&b, "- **%s** No passage in the sources addresses this.\n", mdEscape(s.Sub.Text))
			continue
		}
		lead, p := r.lead(s)
		fmt.Fprintf(&b, "- **%s** %s [%d]\n", mdEscape(s.Sub.Text), mdEscape(truncate(lead, 300)), r.cites.of(p))
	}
	b.WriteString("\n")
	return b.String()
}

// renderSection writes one sub-question: the best sentence, then each passage quoted and cited.
func (r *offlineRun) renderSection(i int, s section, continuing bool) string {
	var b strings.Builder
	if continuing {
		fmt.Fprintf(&b, "### %s\n\n", mdEscape(s.Sub.Text))
	} else {
		fmt.Fprintf(&b, "## %d. %s\n\n", i+1, mdEscape(s.Sub.Text))
	}
	if len(s.Hits) == 0 {
		if continuing {
			b.WriteString("No further passage in the sources addresses this.\n\n")
		} else {
			b.WriteString("No passage in the sources addresses this sub-question.\n\n")
		}
		return b.String()
	}
	lead, p := r.lead(s)
	fmt.Fprintf(&b, "%s [%d]\n\n", mdEscape(truncate(lead, 400)), r.cites.of(p))
	for _, h := range s.Hits {
		fmt.Fprintf(&b, "%s>\n> — %s [%d]\n\n", r.quote(h.P), r.ix.cite(h.P), r.cites.of(h.P))
	}
	return b.String()
}

// quote renders a passage as the body of a block quote. Tables (CSV, TSV) keep their rows in a
// code block; prose is joined into one paragraph and escaped.
func (r *offlineRun) quote(p int) string {
	ps := r.ix.passages[p]
	switch strings.ToLower(path.Ext(r.ix.docs[ps.Doc].Path)) {
	case ".csv", ".tsv":
		fence := "```"
		if strings.Contains(ps.Text, fence) {
			fence = "~~~"
		}
		var b strings.Builder
		b.WriteString("> " + fence + "\n")
		for _, line := range strings.Split(ps.Text, "\n") {
			b.WriteString("> " + truncate(line, 200) + "\n")
		}
		b.WriteString("> " + fence + "\n")
		return b.String()
	}
	return "> " + mdEscape(truncate(collapse(ps.Text), quoteChars)) + "\n"
}

// lead is a section's answer sentence: the best one among its top three passages.
func (r *offlineRun) lead(s section) (string, int) {
	var ps []int
	for _, h := range s.Hits[:min(3, len(s.Hits))] {
		ps = append(ps, h.P)
	}
	return r.ix.lead(ps, s.Sub.Terms)
}

func (r *offlineRun) sourceList() string {
	if len(r.cites.order) == 0 {
		return "No sources were cited.\n"
	}
	var b strings.Builder
	for _, p := range r.cites.order {
		fmt.Fprintf(&b, "%d. %s", r.cites.num[p], r.ix.cite(p))
		if k := r.ix.docs[r.ix.passages[p].Doc].Kind; k != "text" {
			fmt.Fprintf(&b, " (text extracted from %s)", strings.ToUpper(k))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *offlineRun) skippedList() string {
	var b strings.Builder
	for _, s := range r.skipped {
		fmt.Fprintf(&b, "- `%s`: %s\n", s.Path, s.Reason)
	}
	b.WriteString("\n")
	return b.String()
}

// keyTerms counts, for each key phrase of the question, the passages and files that contain it.
func (r *offlineRun) keyTerms() string {
	phrases := keyPhrases(r.in.Question)
	if len(phrases) == 0 {
		return ""
	}
	if len(phrases) > 8 {
		phrases = phrases[:8]
	}
	var b strings.Builder
	b.WriteString("## Key terms\n\n| Term | Passages | Files |\n|---|---|---|\n")
	for _, ph := range phrases {
		passages := r.ix.containingAll(uniq(terms(ph)))
		files := map[int]bool{}
		for _, p := range passages {
			files[r.ix.passages[p].Doc] = true
		}
		fmt.Fprintf(&b, "| %s | %d | %d |\n", mdEscape(ph), len(passages), len(files))
	}
	b.WriteString("\n")
	return b.String()
}

func (r *offlineRun) limitations(sections []section) string {
	var b strings.Builder
	b.WriteString("## Limitations\n\n")
	b.WriteString("- This report is extractive: it quotes the sources verbatim and does not check them against each other or against anything outside them.\n")
	var missing []string
	for _, s := range sections {
		if len(s.Hits) == 0 {
			missing = append(missing, mdEscape(s.Sub.Text))
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "- No evidence for: %s\n", strings.Join(missing, " "))
	}
	for _, d := range r.ix.docs {
		if d.Kind != "text" {
			b.WriteString("- Line numbers of HTML, PDF and DOCX sources count lines of their extracted text.\n")
			break
		}
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

func (r *offlineRun) renderContinuation(subs []subQuestion, sections []section, prior priorReport, draft bool) string {
	var b strings.Builder
	if prior.continuations == 0 {
		b.WriteString("## Continuation\n\n")
	} else {
		fmt.Fprintf(&b, "## Continuation %d\n\n", prior.continuations+1)
	}
	fmt.Fprintf(&b, "_Follow-up research by the offline engine · effort %s · passages already cited above are left out_\n\n", r.in.Effort)
	if draft {
		fmt.Fprintf(&b, "> **Draft:** %d of %d follow-up questions researched so far.\n\n", len(sections), len(subs))
	}
	answered := 0
	for _, s := range sections {
		if len(s.Hits) > 0 {
			answered++
		}
	}
	if answered == 0 {
		b.WriteString("No new evidence was found in the sources for the follow-up questions.\n\n")
	} else {
		fmt.Fprintf(&b, "New evidence was found for %d of %d follow-up questions.\n\n", answered, len(sections))
	}
	for i, s := range sections {
		b.WriteString(r.renderSection(i, s, true))
	}
	if len(r.cites.order) > 0 {
		b.WriteString("### Continuation sources\n\n")
		b.WriteString(r.sourceList())
	}
	return b.String()
}

// priorReport is what a continuation needs from the last report.
type priorReport struct {
	cited         map[string]bool // citeKey of every passage it cites
	maxCite       int
	headings      map[string]bool // termKey of every heading
	continuations int
}

var (
	reCitation = regexp.MustCompile("(?m)^(\\d+)\\. `([^`]+)`, lines? (\\d+)(?:–(\\d+))?")
	reHeading  = regexp.MustCompile(`(?m)^#{1,6} +(?:\d+\. +)?(.+)$`)
)

func parsePrior(md string) priorReport {
	p := priorReport{cited: map[string]bool{}, headings: map[string]bool{}}
	for _, m := range reCitation.FindAllStringSubmatch(md, -1) {
		n, _ := strconv.Atoi(m[1])
		p.maxCite = max(p.maxCite, n)
		end := m[4]
		if end == "" {
			end = m[3]
		}
		p.cited[m[2]+":"+m[3]+"-"+end] = true
	}
	for _, m := range reHeading.FindAllStringSubmatch(md, -1) {
		h := strings.TrimSpace(m[1])
		if strings.HasPrefix(h, "Continuation") && !strings.HasPrefix(h, "Continuation sources") {
			p.continuations++
		}
		p.headings[termKey(strings.ReplaceAll(h, `\`, ""))] = true
	}
	return p
}

func citeKey(ix *index, p int) string {
	ps := ix.passages[p]
	return ix.docs[ps.Doc].Path + ":" + strconv.Itoa(ps.Start) + "-" + strconv.Itoa(ps.End)
}

// followUps are the sub-questions a continuation answers: those of a deeper decomposition that the
// prior report has no section for, then focus questions on the question's key phrases.
func followUps(q string, n int, prior priorReport) []subQuestion {
	var out []subQuestion
	seen := map[string]bool{}
	add := func(s subQuestion) {
		k := termKey(s.Text)
		if k == "" || seen[k] || prior.headings[k] || len(out) >= n {
			return
		}
		seen[k] = true
		out = append(out, s)
	}
	for _, s := range subQuestions(q, n*2+len(facets)+4) {
		add(s)
	}
	for _, ph := range keyPhrases(q) {
		add(plainSub("What further evidence is there on " + ph))
	}
	if len(out) == 0 {
		out = append(out, plainSub("What further evidence bears on "+strings.TrimRight(collapse(q), "?.! ")))
	}
	return out
}
