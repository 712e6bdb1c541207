package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"

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

// writeReport asks for the report, retries once with the problems found (a quote not in its
// source, an unknown source, an uncited claim), and renders it.
func (r *agentRun) writeReport(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion) (string, error) {
	if err := r.em.Event(ctx, engine.KindToolCall, "write_report", "Writing the report from the evidence read", map[string]any{"tool": "write_report"}); err != nil {
		return "", err
	}
	messages = append(messages, openai.UserMessage(r.reportPrompt()))
	var doc reportDoc
	for attempt := 1; ; attempt++ {
		raw, err := r.jsonCall(ctx, messages, "research_report", reportSchema(), r.writeTokens())
		if err != nil {
			return "", err
		}
		doc = reportDoc{}
		var problems []string
		if err := json.Unmarshal([]byte(raw), &doc); err != nil {
			problems = []string{"the answer is not a JSON object of the report schema: " + nlp.Truncate(err.Error(), 200)}
		} else {
			problems = r.reportProblems(doc)
		}
		data := map[string]any{"tool": "write_report", "attempt": attempt, "problems": append([]string{}, problems...)}
		summary := fmt.Sprintf("Report written: %d summary claims, %d sections.", len(doc.Summary), len(doc.Sections))
		if len(problems) > 0 {
			summary += " Problems: " + strings.Join(problems, "; ")
		}
		if err := r.em.Event(ctx, engine.KindToolResult, "write_report", nlp.Truncate(summary, eventContentChars), data); err != nil {
			return "", err
		}
		if len(problems) == 0 || attempt == 2 {
			if doc.Title == "" && doc.Summary == nil && doc.Sections == nil {
				return "", engine.Errorf(engine.CodeProviderError, "the model did not return its report as JSON with cited claims, after a retry")
			}
			return r.renderReport(doc), nil
		}
		messages = append(messages, openai.AssistantMessage(raw), openai.UserMessage(
			"Your report has these problems:\n- "+strings.Join(problems, "\n- ")+
				"\nReturn the whole report again as JSON. Copy every quote exactly from its source's text; remove any claim you cannot support with an exact quote."))
	}
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
	rr := &reportRender{r: r, num: map[string]int{}}
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

// claim renders one claim with its citation numbers, then one block quote per citation.
func (rr *reportRender) claim(c reportClaim) string {
	var b, quotes strings.Builder
	b.WriteString(mdEscapeInline(nlp.Collapse(c.Text)))
	if len(c.Citations) == 0 {
		b.WriteString(" _(no source cited)_")
	}
	for _, ct := range c.Citations {
		n, st, ok := rr.number(ct.Source)
		ref := "`" + strings.ReplaceAll(nlp.Collapse(ct.Source), "`", "") + "`"
		mark := ""
		if ok {
			ref = rr.attribution(st)
			mark = fmt.Sprintf(" [%d]", n)
			fmt.Fprintf(&b, " [%d]", n)
		}
		fmt.Fprintf(&quotes, "> %s\n>\n> — %s%s\n\n", nlp.EscapeMarkdown(nlp.Collapse(ct.Quote)), ref, mark)
	}
	b.WriteString("\n\n")
	b.WriteString(quotes.String())
	return b.String()
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
