package llm

import (
	"fmt"
	"strings"

	"github.com/researchd/researchd/engine/extract"
)

// systemPrompt is the research agent's system message; in text mode it also describes the tools
// and the <tool_call> format.
func (r *agentRun) systemPrompt() string {
	var b strings.Builder
	b.WriteString(expertInstructions(r.in))
	fmt.Fprintf(&b, "You are a careful research agent. Today's date is %s.\n", r.in.Time().Format("Monday, 2 January 2006"))
	b.WriteString("Research the user's question with the tools, then write a report built only from the evidence you read.\n")
	b.WriteString("Tools: search_files and read_file over the provided files")
	if r.e.opts.Searcher != nil {
		b.WriteString("; web_search to find web pages (its snippets are leads, not evidence)")
	}
	if r.e.opts.FetchClient != nil {
		b.WriteString("; fetch_url to read a web page")
	}
	b.WriteString("; write_file saves extra workspace files (data, tables as text formats).\n")
	b.WriteString(`Every source you read is stored and gets an id such as S3, shown with its text. Only what you read is evidence:
each fact in your report will cite a source id with a quote copied word for word from that source's text, and every
quote is checked against the stored copy; a quote that is not in its source is removed from the report. Never invent
sources, quotes or numbers. When the evidence is missing or weak, say so.
`)
	fmt.Fprintf(&b, "Effort: %s. Budget: at most %d tool-using steps and %d sources", r.in.Effort, r.budget.Steps, r.budget.Sources)
	if r.e.opts.Searcher != nil {
		fmt.Fprintf(&b, ", %d web searches", r.searchBudget())
	}
	b.WriteString(". When you have enough evidence, stop calling tools and answer with short notes of what you found.\n")
	if len(r.in.RequiredTools) > 0 {
		fmt.Fprintf(&b, "Call each of these tools at least once and make sure it succeeds: %s.\n", strings.Join(r.requiredFunctions(), ", "))
	}
	if r.mode == ToolsText {
		b.WriteString(textToolsPrompt(r.tools()))
	}
	if r.in.Continuation && strings.TrimSpace(r.in.PriorReport) != "" {
		b.WriteString("This is a continuation: research the questions the prior report below left open and find new evidence; do not repeat its findings.\n\nPrior report:\n\n")
		b.WriteString(r.in.PriorReport)
	}
	return b.String()
}

func (r *agentRun) userPrompt(docs []extract.Document) string {
	var b strings.Builder
	b.WriteString("Question: ")
	b.WriteString(r.in.Question)
	b.WriteString("\n\n")
	if len(docs) == 0 {
		b.WriteString("No files were provided.\n")
		return b.String()
	}
	b.WriteString("Files available to search_files and read_file:\n")
	for _, d := range docs {
		fmt.Fprintf(&b, "- %s (%d lines)\n", d.Path, len(d.Lines))
	}
	return b.String()
}

// writerSystem is the system message of the calls that write: the report, the structured output
// and its basis. priorChars bounds the prior report of a continuation.
func (r *agentRun) writerSystem(priorChars int) string {
	var b strings.Builder
	b.WriteString(expertInstructions(r.in))
	fmt.Fprintf(&b, "You are a careful research writer. Today's date is %s.\n", r.in.Time().Format("Monday, 2 January 2006"))
	b.WriteString(`You write from the evidence given below only: passages of the sources read for the question, each source
under its id (such as S3). A quote must be copied word for word from the passages of the source it cites; every
quote is checked against the stored source and a quote that is not in it is removed. Never invent sources, quotes or
numbers; when the evidence does not answer something, say so.
`)
	if prior := strings.TrimSpace(r.in.PriorReport); r.in.Continuation && prior != "" && priorChars > 0 {
		b.WriteString("This is a continuation of the prior report below: report new findings only.\n\nPrior report:\n\n")
		b.WriteString(cutText(prior, priorChars))
		b.WriteString("\n")
	}
	return b.String()
}
