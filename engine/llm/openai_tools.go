package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/workspace"
)

// toolSpec is a function tool: offered natively (toolUnion) or described in the prompt
// (textToolsPrompt).
type toolSpec struct {
	Name, Desc string
	Params     map[string]any
}

// tools lists the tools offered to the model.
func (r *agentRun) tools() []toolSpec {
	fn := func(name, desc string, props map[string]any, required ...string) toolSpec {
		return toolSpec{Name: name, Desc: desc, Params: map[string]any{
			"type": "object", "properties": props, "required": required, "additionalProperties": false,
		}}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	integer := func(desc string) map[string]any { return map[string]any{"type": "integer", "description": desc} }
	tools := []toolSpec{
		fn("search_files", "Rank passages of the provided files by relevance (BM25) to a query; returns passages with their source id, file path and line range.",
			map[string]any{"query": str("keywords to search for"), "limit": integer("passages to return, 1-20 (default 5)")}, "query"),
		fn("read_file", "Read lines of a provided file, numbered, with its source id.",
			map[string]any{"path": str("file path as listed, e.g. input_files/notes.md"), "start_line": integer("first line, 1-based (default 1)"), "end_line": integer("last line (default start_line+199)")}, "path"),
		fn("write_file", "Write a text file into the job workspace (not under input_files/ or sources/).",
			map[string]any{"path": str("slash-separated relative path, e.g. data/table.csv"), "content": str("file content")}, "path", "content"),
	}
	if r.e.opts.Searcher != nil {
		tools = append(tools, fn("web_search", "Search the web; returns titles, URLs and snippets. Snippets are not evidence: fetch_url the pages you want to cite.",
			map[string]any{"query": str("search query"), "limit": integer("results to return, 1-10 (default 5)")}, "query"))
	}
	if r.e.opts.FetchClient != nil {
		tools = append(tools, fn("fetch_url", "Fetch a public http(s) URL and return its text, with its source id.",
			map[string]any{"url": str("absolute http or https URL")}, "url"))
	}
	return append(tools, r.granted.specs()...)
}

// offered says whether name is a tool offered to the model (for calls written as text).
func (r *agentRun) offered(name string) bool {
	for _, t := range r.tools() {
		if t.Name == name {
			return true
		}
	}
	return false
}

// toolUnion is the tools in the API's form.
func toolUnion(specs []toolSpec) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, t := range specs {
		out = append(out, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Desc), Parameters: openai.FunctionParameters(t.Params),
		}))
	}
	return out
}

// callTool runs one tool call and records it. Tool failures go back to the model as text so it
// can recover; only a failing sink or a cancelled context ends the run. The result is cut to a
// third of the model's context window at most (and toolResultChars).
func (r *agentRun) callTool(ctx context.Context, tc toolCall) (string, error) {
	fn, args := tc.Name, tc.Args
	name := r.toolName(fn)
	if err := r.em.Event(ctx, engine.KindToolCall, name, nlp.Truncate(args, eventContentChars), map[string]any{"tool": name, "call_id": tc.ID}); err != nil {
		return "", err
	}
	out, err := r.execTool(ctx, fn, args, tc.ID)
	if cerr := ctx.Err(); cerr != nil {
		return "", cerr
	}
	if err != nil {
		out = "error: " + err.Error()
	} else {
		r.succeeded[name] = true
	}
	out = r.em.Redact(nlp.Truncate(out, min(toolResultChars, max(2000, r.s.caps.Context))))
	data := map[string]any{"tool": name, "call_id": tc.ID, "error": err != nil}
	if err := r.em.Event(ctx, engine.KindToolResult, name, nlp.Truncate(out, eventContentChars), data); err != nil {
		return "", err
	}
	return out, nil
}

func (r *agentRun) execTool(ctx context.Context, name, rawArgs, callID string) (string, error) {
	if t, ok := r.granted.byFunc[name]; ok {
		out, err := r.callMCP(ctx, t, rawArgs)
		if err != nil {
			return "", err
		}
		// A tool's answer is evidence the model may cite: it is stored like a page or a file.
		return r.cite(sources.Source{Origin: "tool:" + t.Name + "#" + callID, Kind: sources.KindTool, Title: t.Name, Text: out}, out)
	}
	var args struct {
		Query     string `json:"query"`
		Limit     int    `json:"limit"`
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
		Content   string `json:"content"`
		URL       string `json:"url"`
	}
	if err := decodeArgs(rawArgs, &args); err != nil {
		return "", err
	}
	switch name {
	case "search_files":
		return r.searchFiles(args.Query, args.Limit)
	case "read_file":
		return r.readFile(args.Path, args.StartLine, args.EndLine)
	case "write_file":
		return r.writeFile(args.Path, args.Content)
	case "web_search":
		if r.e.opts.Searcher == nil {
			return "", errors.New("web_search is not available")
		}
		return r.webSearch(ctx, args.Query, args.Limit)
	case "fetch_url":
		if r.e.opts.FetchClient == nil {
			return "", errors.New("fetch_url is not available")
		}
		return r.fetch(ctx, args.URL)
	}
	return "", fmt.Errorf("unknown tool %q", name)
}

// admit stores a source the run reads, within the effort's source budget (a source read before
// costs nothing).
func (r *agentRun) admit(src sources.Source) (sources.StoredSource, error) {
	if st, ok := r.srcs.Stored(src); ok && r.read[st.ID] {
		return st, nil
	}
	if len(r.read) >= r.budget.Sources {
		return sources.StoredSource{}, fmt.Errorf("the source budget of this effort (%d sources) is spent: write the report from the sources you have", r.budget.Sources)
	}
	st, err := r.srcs.Save(src)
	if err != nil {
		return sources.StoredSource{}, err
	}
	r.read[st.ID] = true
	return st, nil
}

// cite stores src and returns body labelled with its source id.
func (r *agentRun) cite(src sources.Source, body string) (string, error) {
	st, err := r.admit(src)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("[%s] %s\n\n%s", st.ID, src.Origin, body), nil
}

func (r *agentRun) searchFiles(query string, limit int) (string, error) {
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, 20)
	hits := r.ix.search(nlp.Terms(query), limit, nil)
	if len(hits) == 0 {
		return "No matching passages.", nil
	}
	var b strings.Builder
	hidden := 0
	for _, h := range hits {
		ps := r.ix.passages[h.P]
		st, err := r.admit(sources.FromDocument(r.ix.docs[ps.Doc]))
		if err != nil {
			hidden++
			continue
		}
		fmt.Fprintf(&b, "[%s · %s]\n%s\n\n", st.ID, strings.ReplaceAll(r.ix.cite(h.P), "`", ""), ps.Text)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "%d passage(s) from files not read yet are left out: the source budget (%d sources) is spent.\n", hidden, r.budget.Sources)
	}
	return b.String(), nil
}

func (r *agentRun) readFile(p string, start, end int) (string, error) {
	for _, d := range r.ix.docs {
		if d.Path != p {
			continue
		}
		start = max(start, 1)
		if end < start {
			end = start + 199
		}
		end = min(end, len(d.Lines), start+399)
		if start > len(d.Lines) {
			return "", fmt.Errorf("%s has %d lines", p, len(d.Lines))
		}
		st, err := r.admit(sources.FromDocument(d))
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s] %s, lines %d–%d of %d\n", st.ID, p, start, end, len(d.Lines))
		for i := start; i <= end; i++ {
			fmt.Fprintf(&b, "%d: %s\n", i, d.Lines[i-1])
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no provided file %q", p)
}

func (r *agentRun) writeFile(p, content string) (string, error) {
	if _, err := workspace.CleanPath(p); err != nil {
		return "", errors.New("invalid path: use a relative slash-separated path inside the workspace")
	}
	for _, dir := range []string{engine.InputDir, sources.Dir} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return "", errors.New(dir + "/ is read-only")
		}
	}
	if len(content) > writeFileMaxBytes {
		return "", fmt.Errorf("content is over %d bytes", writeFileMaxBytes)
	}
	if err := r.in.Workspace.WriteFile(p, []byte(content)); err != nil {
		return "", errors.New("could not write " + p)
	}
	r.wrote = true
	return fmt.Sprintf("wrote %d bytes to %s", len(content), p), nil
}

// searchBudget is how many web searches the run may make (0 without a search provider).
func (r *agentRun) searchBudget() int {
	if r.e.opts.Searcher == nil {
		return 0
	}
	return r.budget.Searches
}

// webSearch asks the configured provider; results are leads for fetch_url, not sources.
func (r *agentRun) webSearch(ctx context.Context, query string, limit int) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", errors.New("the query is empty")
	}
	if r.searches >= r.searchBudget() {
		return "", fmt.Errorf("the search budget of this effort (%d searches) is spent", r.searchBudget())
	}
	r.searches++
	if limit <= 0 {
		limit = 5
	}
	results, err := r.e.opts.Searcher.Search(ctx, query, min(limit, 10))
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	if len(results) == 0 {
		return "No results.", nil
	}
	var b strings.Builder
	for i, res := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n   %s\n", i+1, res.Title, res.URL, res.Snippet)
	}
	return b.String(), nil
}

// fetch GETs a URL through the FetchClient (the SSRF-safe client in production), stores the page
// and returns its text with its source id.
func (r *agentRun) fetch(ctx context.Context, raw string) (string, error) {
	var p sources.Page
	var err error
	if pr, ok := r.e.opts.Searcher.(sources.PageReader); ok && pr.Reads(raw) {
		// A page of the search provider's own site (Wikipedia) is read through its API.
		p, err = pr.ReadPage(ctx, raw, r.in.Now)
	} else {
		p, err = sources.FetchPage(ctx, r.e.opts.FetchClient, raw, r.in.Now)
	}
	if err != nil {
		return "", err
	}
	st, err := r.admit(sources.Source{Origin: p.URL, Kind: sources.KindWeb, Title: p.Title, Text: p.Text, RetrievedAt: p.RetrievedAt})
	if err != nil {
		return "", err
	}
	text := p.Text
	if p.Truncated {
		text += "\n[truncated]"
	}
	title := p.Title
	if title == "" {
		title = p.URL
	}
	return fmt.Sprintf("[%s] %s\nURL: %s\nHTTP %d, %s, retrieved %s\n\n%s", st.ID, title, p.URL, p.Status, p.ContentType,
		p.RetrievedAt.Format("2006-01-02 15:04 MST"), text), nil
}
