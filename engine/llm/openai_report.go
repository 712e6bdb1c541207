package llm

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/output"
	"github.com/researchd/researchd/engine/sources"
)

// The openai engine writes its report as JSON (title, summary and sections of claims, each claim
// with its citations: a source id and a verbatim quote), checks it, and renders the Markdown itself,
// so every quote reaches the report in the form citation verification reads.

type reportDoc struct {
	Title         string          `json:"title"`
	Summary       []reportClaim   `json:"summary"`
	Sections      []reportSection `json:"sections"`
	OpenQuestions []string        `json:"open_questions"`
}

type reportSection struct {
	Heading string        `json:"heading"`
	Claims  []reportClaim `json:"claims"`
}

type reportClaim struct {
	Text      string                 `json:"text"`
	Citations []engine.BasisCitation `json:"citations"`
}

// citationSchema is one citation: a source id and a verbatim quote.
func citationSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"source", "quote"},
		"properties": map[string]any{
			"source": map[string]any{"type": "string", "description": "the id of a source you read, e.g. S3"},
			"quote":  map[string]any{"type": "string", "description": "one or two sentences copied word for word from that source"},
		},
	}
}

// reportSchema is the JSON the report is asked in (no $ref: local servers' grammars vary).
func reportSchema() map[string]any {
	claims := map[string]any{"type": "array", "items": map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"text", "citations"},
		"properties": map[string]any{
			"text":      map[string]any{"type": "string", "description": "one factual sentence in your words"},
			"citations": map[string]any{"type": "array", "items": citationSchema()},
		},
	}}
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"title", "summary", "sections", "open_questions"},
		"properties": map[string]any{
			"title":   map[string]any{"type": "string"},
			"summary": claims,
			"sections": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []any{"heading", "claims"},
				"properties": map[string]any{"heading": map[string]any{"type": "string"}, "claims": claims},
			}},
			"open_questions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	}
}

// reportCheckSchema validates a report answer: the report schema without its top-level required
// fields and without additionalProperties, so a model that leaves out an empty part (no open
// questions) or adds a field is not sent back for it; a part of the wrong type, or a claim without
// its text or citations, is.
func reportCheckSchema() map[string]any {
	s := reportSchema()
	delete(s, "required")
	var open func(v any)
	open = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "additionalProperties")
			for _, c := range x {
				open(c)
			}
		case []any:
			for _, c := range x {
				open(c)
			}
		}
	}
	open(s)
	return s
}

// writeReport asks for the report, retries once with the problems found (a quote not in its
// source, an unknown source, an uncited claim, a field of the wrong type), and renders it.
func (r *agentRun) writeReport(ctx context.Context) (string, error) {
	if err := r.em.Event(ctx, engine.KindToolCall, "write_report", "Writing the report from the evidence read", map[string]any{"tool": "write_report"}); err != nil {
		return "", err
	}
	sch, err := engine.CompileSchema(reportCheckSchema())
	if err != nil {
		return "", fmt.Errorf("engine: report schema: %w", err)
	}
	var doc reportDoc
	obj, problems, err := r.s.askJSON(ctx, jsonAsk{
		Build: r.writing, Prompt: r.reportPrompt(), Format: jsonFormat{Name: "research_report", Schema: reportSchema()}, Sch: sch,
		Want: r.writeTokens(), What: "the report", RetryUnreadable: true,
		Check: func(obj map[string]any) []string {
			doc = reportDoc{}
			if err := decodeInto(obj, &doc); err != nil {
				return []string{"the report does not match the report schema: " + nlp.Truncate(err.Error(), 200)}
			}
			return r.reportProblems(doc)
		},
		Fix: func(problems []string) string {
			return "Your report has these problems:\n- " + strings.Join(problems, "\n- ") +
				"\nReturn the whole report again as JSON. Copy every quote exactly from its source's text; remove any claim you cannot support with an exact quote."
		},
		Answered: func(attempt int, _ string, obj map[string]any, problems []string) error {
			var d reportDoc
			if obj != nil {
				_ = decodeInto(obj, &d)
			}
			data := map[string]any{"tool": "write_report", "attempt": attempt, "problems": append([]string{}, problems...)}
			summary := fmt.Sprintf("Report written: %d summary claims, %d sections.", len(d.Summary), len(d.Sections))
			if len(problems) > 0 {
				summary += " Problems: " + strings.Join(problems, "; ")
			}
			return r.em.Event(ctx, engine.KindToolResult, "write_report", nlp.Truncate(summary, eventContentChars), data)
		},
	})
	if err != nil {
		return "", err
	}
	if obj == nil || decodeInto(obj, &doc) != nil || (doc.Title == "" && doc.Summary == nil && doc.Sections == nil) {
		return "", errorNaming(engine.CodeProviderError, "the model did not return its report as JSON with cited claims, after a retry", problems)
	}
	return r.renderReport(doc), nil
}

func (r *agentRun) reportPrompt() string {
	var b strings.Builder
	b.WriteString(`Write the final report now, as a JSON object:
- "title": a short title for the answer;
- "summary": the direct answer to the question, as claims;
- "sections": one per aspect of the question, each with a "heading" and its "claims";
- "open_questions": what the evidence you read does not answer.
A claim is one factual sentence in your own words ("text") and its "citations": each a "source" (an id such as S3 of
a source you read) and a "quote" copied word for word from that source's text (one or two whole sentences) that
supports the claim. Every claim needs at least one citation. Use only the sources listed below; never invent a
quote or a number.
`)
	if r.in.Continuation && strings.TrimSpace(r.in.PriorReport) != "" {
		b.WriteString("This is a continuation: report only new findings, not those of the prior report.\n")
	}
	all := r.srcs.All()
	var read []sources.StoredSource
	for _, st := range all {
		if r.read[st.ID] {
			read = append(read, st)
		}
	}
	if len(read) == 0 {
		b.WriteString("\nYou read no sources, so you have no evidence: leave summary and sections empty and put the question under open_questions.\n")
		return b.String()
	}
	b.WriteString("\nSources you read:\n")
	for _, st := range read {
		fmt.Fprintf(&b, "- %s: %s", st.ID, st.Origin)
		if st.Title != "" && st.Title != st.Origin {
			fmt.Fprintf(&b, " (%s)", st.Title)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// reportProblems checks a report before it is rendered: the same rule the runner applies
// afterwards, so the model gets one chance to fix a quote.
func (r *agentRun) reportProblems(doc reportDoc) []string {
	var out []string
	texts := map[string][]string{}
	check := func(where string, c reportClaim) {
		if strings.TrimSpace(c.Text) == "" {
			out = append(out, where+" has no text")
		}
		if len(c.Citations) == 0 {
			out = append(out, fmt.Sprintf("%s (%q) cites no source", where, nlp.Truncate(c.Text, 80)))
		}
		for _, ct := range c.Citations {
			st, ok := r.srcs.Lookup(ct.Source)
			if !ok || !r.read[st.ID] {
				out = append(out, fmt.Sprintf("%s cites %q, which is not a source you read", where, ct.Source))
				continue
			}
			v, ok := texts[st.ID]
			if !ok {
				if text, err := r.srcs.Text(st); err == nil {
					v = citations.SourceVariants(text)
				}
				texts[st.ID] = v
			}
			if ok, why := citations.MatchQuote(ct.Quote, v); !ok {
				out = append(out, fmt.Sprintf("%s: the quote %q is not in %s (%s)", where, nlp.Truncate(ct.Quote, 120), st.ID, why))
			}
		}
	}
	if strings.TrimSpace(doc.Title) == "" {
		out = append(out, "the title is empty")
	}
	for i, c := range doc.Summary {
		check(fmt.Sprintf("summary claim %d", i+1), c)
	}
	for i, s := range doc.Sections {
		for j, c := range s.Claims {
			check(fmt.Sprintf("section %d claim %d", i+1, j+1), c)
		}
	}
	return out
}

// reCiteNumber finds citation numbers of a prior report.
var reCiteNumber = regexp.MustCompile(`\[(\d+)\]`)

// reportRender numbers sources in order of first citation.
type reportRender struct {
	r      *agentRun
	offset int
	num    map[string]int // stored id (or unresolved ref) → number
	order  []string
	texts  map[string][]string // stored id → its text's variants, for quote checks
}

func (rr *reportRender) number(ref string) (int, sources.StoredSource, bool) {
	st, ok := rr.r.srcs.Lookup(ref)
	key := ref
	if ok {
		key = st.ID
	}
	if n, seen := rr.num[key]; seen {
		return n, st, ok
	}
	if !ok {
		return 0, st, false
	}
	rr.order = append(rr.order, key)
	rr.num[key] = rr.offset + len(rr.order)
	return rr.num[key], st, ok
}

// renderReport writes the Markdown: the claims, each followed by its quotes in the block-quote form
// citation verification reads, then the open questions and the sources with their stored copies.
func (r *agentRun) renderReport(doc reportDoc) string {
	continuing := r.in.Continuation && strings.TrimSpace(r.in.PriorReport) != ""
	rr := &reportRender{r: r, num: map[string]int{}, texts: map[string][]string{}}
	h := "##"
	var b strings.Builder
	if continuing {
		for _, m := range reCiteNumber.FindAllStringSubmatch(r.in.PriorReport, -1) {
			n, _ := strconv.Atoi(m[1])
			rr.offset = max(rr.offset, n)
		}
		h = "###"
		title := "## Continuation"
		if k := strings.Count(r.in.PriorReport, "\n## Continuation"); k > 0 {
			title = fmt.Sprintf("## Continuation %d", k+1)
		}
		b.WriteString(title + "\n\n")
	} else {
		fmt.Fprintf(&b, "# %s\n\n", nlp.EscapeMarkdown(firstNonEmpty(nlp.Collapse(doc.Title), output.Title(r.in.Question))))
	}
	fmt.Fprintf(&b, "_Research report by the openai engine (%s) · effort %s · %s · %d sources read_\n\n",
		nlp.EscapeMarkdown(r.e.opts.Model), r.in.Effort, r.in.Time().Format("2 January 2006"), len(r.read))
	fmt.Fprintf(&b, "%s Summary\n\n", h)
	if len(doc.Summary) == 0 {
		b.WriteString("The sources read do not answer the question.\n\n")
	}
	for _, c := range doc.Summary {
		b.WriteString(rr.claim(c))
	}
	for _, s := range doc.Sections {
		if len(s.Claims) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s %s\n\n", h, nlp.EscapeMarkdown(firstNonEmpty(nlp.Collapse(s.Heading), "Findings")))
		for _, c := range s.Claims {
			b.WriteString(rr.claim(c))
		}
	}
	if len(doc.OpenQuestions) > 0 {
		fmt.Fprintf(&b, "%s Open questions\n\n", h)
		for _, q := range doc.OpenQuestions {
			if q = nlp.Collapse(q); q != "" {
				fmt.Fprintf(&b, "- %s\n", nlp.EscapeMarkdown(q))
			}
		}
		b.WriteString("\n")
	}
	if continuing {
		b.WriteString("### Continuation sources\n\n")
	} else {
		b.WriteString("## Sources\n\n")
	}
	b.WriteString(rr.sources())
	report := b.String()
	if continuing {
		report = strings.TrimRight(r.in.PriorReport, "\n") + "\n\n" + report
	}
	return report
}

// claim renders one claim with its citation numbers, then one block quote per citation. A
// citation whose quote is not in its source (by the rule the runner's verification applies) gets
// no number after the claim: its block quote still follows, and verification replaces it with the
// unverified mark, so a claim whose only quote was invented is shown without a citation and
// marked, never as cited.
func (rr *reportRender) claim(c reportClaim) string {
	var b, quotes strings.Builder
	b.WriteString(mdEscapeInline(nlp.Collapse(c.Text)))
	if len(c.Citations) == 0 {
		b.WriteString(" _(no source cited)_")
	}
	cited := 0
	for _, ct := range c.Citations {
		n, st, ok := rr.number(ct.Source)
		ref := "`" + strings.ReplaceAll(nlp.Collapse(ct.Source), "`", "") + "`"
		mark := ""
		if ok {
			ref = rr.attribution(st)
			mark = fmt.Sprintf(" [%d]", n)
			if rr.verifies(st, ct.Quote) {
				fmt.Fprintf(&b, " [%d]", n)
				cited++
			}
		}
		fmt.Fprintf(&quotes, "> %s\n>\n> — %s%s\n\n", nlp.EscapeMarkdown(nlp.Collapse(ct.Quote)), ref, mark)
	}
	if len(c.Citations) > 0 && cited == 0 {
		b.WriteString(" _(unverified: no quote given for it was found in its source)_")
	}
	b.WriteString("\n\n")
	b.WriteString(quotes.String())
	return b.String()
}

// verifies says whether quote is in the stored source st.
func (rr *reportRender) verifies(st sources.StoredSource, quote string) bool {
	v, ok := rr.texts[st.ID]
	if !ok {
		if text, err := rr.r.srcs.Text(st); err == nil {
			v = citations.SourceVariants(text)
		}
		rr.texts[st.ID] = v
	}
	ok, _ = citations.MatchQuote(quote, v)
	return ok
}

// attribution names a stored source the way the verifier resolves it: a URL for pages, the cited
// path for files, the stored id for tool answers.
func (rr *reportRender) attribution(st sources.StoredSource) string {
	title := strings.NewReplacer("`", "", "<", "", ">", "").Replace(nlp.Collapse(st.Title))
	switch st.Kind {
	case sources.KindWeb:
		if title != "" {
			return mdEscapeInline(title) + ", <" + st.Origin + ">"
		}
		return "<" + st.Origin + ">"
	case sources.KindTool:
		return "`" + st.ID + "` (" + mdEscapeInline(title) + " result)"
	}
	return "`" + st.Origin + "`"
}

func (rr *reportRender) sources() string {
	if len(rr.order) == 0 {
		return "No sources were cited.\n"
	}
	var b strings.Builder
	for _, id := range rr.order {
		st, _ := rr.r.srcs.Lookup(id)
		fmt.Fprintf(&b, "%d. %s — ", rr.num[id], rr.attribution(st))
		switch st.Kind {
		case sources.KindWeb:
			fmt.Fprintf(&b, "retrieved %s; ", st.RetrievedAt.Format("2006-01-02 15:04 MST"))
		case sources.KindTool:
			b.WriteString("tool answer; ")
		}
		fmt.Fprintf(&b, "stored copy `%s`\n", st.Path)
	}
	return b.String()
}

// mdEscapeInline escapes the inline markup characters of model prose (claims, titles) so they are
// shown as written; unlike nlp.EscapeMarkdown it leaves prose punctuation such as "-" alone.
func mdEscapeInline(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`, "|", `\|`).Replace(s)
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
