package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/workspace"
)

// OpenAIOptions configure the openai engine.
type OpenAIOptions struct {
	BaseURL string // an OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1 ("" = OpenAI)
	APIKey  string // never written to events, errors or the workspace
	Model   string
	// HTTPClient talks to the provider (nil: a client with a 10-minute timeout).
	HTTPClient *http.Client
	// FetchClient serves the fetch_url tool; production passes the SSRF-safe netguard client.
	// nil: the tool is not offered.
	FetchClient *http.Client
	// Prices turn token usage into an estimated cost, checked against Input.MaxCostUSD; nil: the
	// run's spend cannot be estimated and MaxCostUSD is not enforced (the effort's token budget
	// still is).
	Prices *TokenPrices
	// Searcher serves the web_search tool (nil: the tool is not offered).
	Searcher Searcher
	// CorpusDir is an optional local folder (RESEARCH_CORPUS_DIR) searched besides each job's files.
	CorpusDir string
}

// budget is what an effort level may spend.
type budget struct {
	Steps       int   // model calls in the agent loop
	StepTokens  int64 // max_completion_tokens per call
	TotalTokens int64 // tokens (prompt + completion) across the run before the agent must answer
}

var budgets = map[string]budget{
	EffortLow:    {Steps: 4, StepTokens: 2048, TotalTokens: 40_000},
	EffortMedium: {Steps: 8, StepTokens: 4096, TotalTokens: 120_000},
	EffortHigh:   {Steps: 16, StepTokens: 8192, TotalTokens: 400_000},
	EffortBuild:  {Steps: 24, StepTokens: 16384, TotalTokens: 800_000},
}

// Tool limits.
const (
	toolResultChars   = 20_000
	writeFileMaxBytes = 1 << 20
	eventContentChars = 4_000
)

type openaiEngine struct {
	opts   OpenAIOptions
	client openai.Client
}

// NewOpenAI returns the engine that drives an OpenAI-compatible chat-completions endpoint.
func NewOpenAI(opts OpenAIOptions) (Engine, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("engine: openai: a model is required")
	}
	reqOpts := []option.RequestOption{option.WithMaxRetries(2)}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("engine: openai: base URL %q is not an http(s) URL", opts.BaseURL)
		}
		reqOpts = append(reqOpts, option.WithBaseURL(opts.BaseURL))
	}
	// Set explicitly (even when empty) so an OPENAI_API_KEY in the environment is not picked up
	// behind the configuration's back.
	reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Minute}
	}
	reqOpts = append(reqOpts, option.WithHTTPClient(hc))
	return &openaiEngine{opts: opts, client: openai.NewClient(reqOpts...)}, nil
}

func (*openaiEngine) Name() string { return "openai" }

// redactor hides the provider key wherever it could surface (a model echoing it, an error body).
func (e *openaiEngine) redactor() func(string) string {
	key := e.opts.APIKey
	return func(s string) string {
		if key == "" {
			return s
		}
		return strings.ReplaceAll(s, key, "[REDACTED]")
	}
}

// agentRun carries one openai run's state.
type agentRun struct {
	e      *openaiEngine
	in     Input
	em     emitter
	ix     *index
	budget budget
	used   int64 // tokens spent
	// spent is the estimated cost so far (with Prices); overCost is set once it passed MaxCostUSD.
	spent    float64
	overCost bool
	wrote    bool // write_file changed the workspace since the last checkpoint
	// granted are the MCP tools offered as functions; succeeded holds every tool (built-in or MCP,
	// by toolName) that returned a successful result, for the required-tool monitor.
	granted   *grantedTools
	succeeded map[string]bool
}

func (e *openaiEngine) Run(ctx context.Context, in Input, sink Sink) (Result, error) {
	if err := in.validate(); err != nil {
		return Result{}, err
	}
	schema, sch, err := in.outputSchema()
	if err != nil {
		return Result{}, err
	}
	r := &agentRun{e: e, in: in, em: emitter{sink: sink, redact: e.redactor()}, budget: budgets[in.Effort],
		granted: newGrantedTools(in.Tools, builtinToolNames), succeeded: map[string]bool{}}
	res, err := r.run(ctx, schema, sch)
	if err != nil {
		return Result{}, e.mapError(ctx, err)
	}
	return res, nil
}

func (r *agentRun) run(ctx context.Context, schema map[string]any, sch *jsonschema.Schema) (Result, error) {
	in, em := r.in, r.em
	err := em.event(ctx, KindStatus, "Research started", collapse(in.Question), map[string]any{
		"engine": "openai", "model": r.e.opts.Model, "effort": in.Effort, "continuation": in.Continuation,
		"max_steps": r.budget.Steps,
	})
	if err != nil {
		return Result{}, err
	}
	if err := recordExpert(ctx, em, in); err != nil {
		return Result{}, err
	}
	if in.MaxCostUSD != nil && r.e.opts.Prices == nil {
		err := em.event(ctx, KindStatus, "Spend ceiling not enforced",
			"The expert sets max_cost_usd, but no token prices are configured, so this run's spend cannot be estimated; the effort's token budget applies.", nil)
		if err != nil {
			return Result{}, err
		}
	}
	docs, skipped, err := loadSources(ctx, sourceDirs(in, r.e.opts.CorpusDir))
	if err != nil {
		return Result{}, err
	}
	r.ix = newIndex(docs)
	for _, s := range skipped {
		if err := em.event(ctx, KindStatus, "Skipped file", s.Path+": "+s.Reason, map[string]any{"path": s.Path, "reason": s.Reason}); err != nil {
			return Result{}, err
		}
	}

	messages := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(r.systemPrompt()),
		openai.UserMessage(r.userPrompt(docs)),
	}
	tools := r.tools()
	var answer string
	for step := 1; ; step++ {
		last := step >= r.budget.Steps || r.used >= r.budget.TotalTokens || r.overCost
		if r.overCost {
			err := em.event(ctx, KindStatus, "Spend ceiling reached",
				"The run's estimated model spend passed the expert's max_cost_usd: the agent writes its report now.", nil)
			if err != nil {
				return Result{}, err
			}
		}
		params := openai.ChatCompletionNewParams{
			Model:               r.e.opts.Model,
			Messages:            messages,
			MaxCompletionTokens: openai.Int(r.budget.StepTokens),
			Tools:               tools,
		}
		if last {
			// Out of steps or tokens: the agent must answer now, without tools.
			messages = append(messages, openai.UserMessage("Your research budget is spent. Write the final report now from what you have found, without calling tools."))
			params.Messages = messages
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))}
		}
		msg, err := r.complete(ctx, params, step)
		if err != nil {
			return Result{}, err
		}
		if len(msg.ToolCalls) == 0 || last {
			if msg.Refusal != "" {
				return Result{}, errorf(CodeProviderError, "the model refused: %s", truncate(msg.Refusal, 300))
			}
			answer = strings.TrimSpace(msg.Content)
			if answer == "" {
				return Result{}, errorf(CodeProviderError, "the model returned an empty answer")
			}
			// Tool calls ignored on the last step are left out: every call in the history must
			// have an answer, or the structured-output request would be refused.
			messages = append(messages, openai.AssistantMessage(answer))
			break
		}
		messages = append(messages, msg.ToParam())
		if c := strings.TrimSpace(msg.Content); c != "" {
			if err := em.event(ctx, KindThinking, fmt.Sprintf("Step %d", step), truncate(c, eventContentChars), nil); err != nil {
				return Result{}, err
			}
		}
		for _, tc := range msg.ToolCalls {
			out, err := r.callTool(ctx, tc)
			if err != nil {
				return Result{}, err
			}
			messages = append(messages, openai.ToolMessage(out, tc.ID))
		}
		if r.wrote {
			if _, err := em.checkpoint(ctx, fmt.Sprintf("Agent files (step %d)", step), workspace.CheckpointProgress); err != nil {
				return Result{}, err
			}
			r.wrote = false
		}
	}

	report := answer
	if in.Continuation && strings.TrimSpace(in.PriorReport) != "" {
		body := answer
		if !strings.HasPrefix(body, "## Continuation") {
			body = "## Continuation\n\n" + body
		}
		report = strings.TrimRight(in.PriorReport, "\n") + "\n\n" + body
	}
	if !strings.HasSuffix(report, "\n") {
		report += "\n"
	}
	if err := in.Workspace.WriteFile(ReportPath, []byte(report)); err != nil {
		return Result{}, fmt.Errorf("engine: write report: %w", err)
	}
	if err := em.event(ctx, KindPreview, "Report drafted", truncate(report, 800), nil); err != nil {
		return Result{}, err
	}
	if _, err := em.checkpoint(ctx, "Report drafted", workspace.CheckpointProgress); err != nil {
		return Result{}, err
	}

	var structured map[string]any
	if schema != nil {
		if structured, err = r.structured(ctx, messages, schema, sch); err != nil {
			return Result{}, err
		}
	}
	required, err := r.reportRequired(ctx)
	if err != nil {
		return Result{}, err
	}
	res, err := finish(ctx, em, in, report, structured, map[string]any{"path": ReportPath})
	res.RequiredTools = required
	return res, err
}

// complete makes one model call and accounts for its tokens.
func (r *agentRun) complete(ctx context.Context, params openai.ChatCompletionNewParams, step int) (openai.ChatCompletionMessage, error) {
	resp, err := r.e.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return openai.ChatCompletionMessage{}, &providerCallError{err}
	}
	r.used += resp.Usage.TotalTokens
	if p := r.e.opts.Prices; p != nil && r.in.MaxCostUSD != nil {
		r.spent += p.cost(resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
		r.overCost = r.spent >= *r.in.MaxCostUSD
	}
	if len(resp.Choices) == 0 {
		return openai.ChatCompletionMessage{}, errorf(CodeProviderError, "the provider returned no choices (step %d)", step)
	}
	return resp.Choices[0].Message, nil
}

// structured asks for the structured output with response_format json_schema, then validates it
// ourselves: providers differ in how strictly they follow a schema.
func (r *agentRun) structured(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion, schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	em := r.em
	if err := em.event(ctx, KindToolCall, "structured_output", "Requesting output that matches json_schema", map[string]any{"tool": "structured_output"}); err != nil {
		return nil, err
	}
	messages = append(messages, openai.UserMessage("Now return the structured output for the question as a JSON object that matches the given JSON Schema, using only the evidence gathered above. Return JSON only."))
	params := openai.ChatCompletionNewParams{
		Model:               r.e.opts.Model,
		Messages:            messages,
		MaxCompletionTokens: openai.Int(r.budget.StepTokens),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "structured_output",
					Schema: schema,
					// Strict mode accepts only a subset of JSON Schema; callers' schemas are arbitrary.
					Strict: openai.Bool(false),
				},
			},
		},
	}
	msg, err := r.complete(ctx, params, 0)
	if err != nil {
		return nil, err
	}
	raw := stripFence(msg.Content)
	if err := em.event(ctx, KindToolResult, "structured_output", truncate(raw, eventContentChars), map[string]any{"tool": "structured_output"}); err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(raw), &out); err != nil || out == nil {
		e := errorf(CodeStructuredOutputInvalid, "the model's structured output is not a JSON object")
		_ = em.event(ctx, KindStatus, "Structured output invalid", e.Error(), nil)
		return nil, e
	}
	if err := validateAgainst(sch, out); err != nil {
		_ = em.event(ctx, KindStatus, "Structured output invalid", err.Error(), nil)
		return nil, err
	}
	return out, nil
}

// stripFence removes a Markdown code fence some models put around JSON.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// providerCallError marks an error of the provider call (HTTP, network, decoding its answer).
type providerCallError struct{ err error }

func (e *providerCallError) Error() string { return e.err.Error() }
func (e *providerCallError) Unwrap() error { return e.err }

// mapError gives provider failures and timeouts a stable code. Cancellation stays a context error
// so the job runner can tell a cancelled job from a failed one; other failures (the sink, the
// workspace) are returned as they are, like the offline engine does.
func (e *openaiEngine) mapError(ctx context.Context, err error) error {
	redact := e.redactor()
	var ee *Error
	switch {
	case errors.As(err, &ee):
		return &Error{Code: ee.Code, Message: redact(ee.Message)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return errorf(CodeTimeout, "the run timed out")
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("engine: %w", err)
	}
	var pe *providerCallError
	if !errors.As(err, &pe) {
		return err
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("the provider answered HTTP %d", apiErr.StatusCode)
		if m := strings.TrimSpace(apiErr.Message); m != "" {
			msg += ": " + truncate(collapse(m), 300)
		}
		return &Error{Code: CodeProviderError, Message: redact(msg)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errorf(CodeTimeout, "the provider did not answer in time")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &Error{Code: CodeProviderError, Message: redact("the provider could not be reached: " + truncate(ue.Err.Error(), 300))}
	}
	return &Error{Code: CodeProviderError, Message: redact("the provider's answer could not be used: " + truncate(err.Error(), 300))}
}

func (r *agentRun) systemPrompt() string {
	var b strings.Builder
	b.WriteString(expertInstructions(r.in))
	b.WriteString(`You are a careful research agent. Answer the user's question with a Markdown report built from evidence.
Use the tools to find evidence: search_files and read_file over the provided files`)
	if r.e.opts.FetchClient != nil {
		b.WriteString(`, fetch_url for web pages`)
	}
	b.WriteString(`; write_file saves extra workspace files (for example data or charts as text formats).
Report format: a "# " title, a "## Summary" section, one "## " section per sub-question with quoted evidence, and a
"## Sources" list. Cite evidence with numbered references like [1] that point to file paths with line ranges
(for example ` + "`input_files/data.csv`, lines 3–7" + `) or URLs. Say plainly when the evidence is missing or weak; never invent sources.
`)
	fmt.Fprintf(&b, "Effort: %s. You have at most %d tool-using steps.\n", r.in.Effort, r.budget.Steps)
	if len(r.in.RequiredTools) > 0 {
		fmt.Fprintf(&b, "Call each of these tools at least once and make sure it succeeds: %s.\n", strings.Join(r.requiredFunctions(), ", "))
	}
	if r.in.Continuation && strings.TrimSpace(r.in.PriorReport) != "" {
		b.WriteString("This is a continuation: extend the prior report below. Return ONLY the new material as a section that starts with \"## Continuation\", answering follow-up questions the prior report left open, with citations numbered after the prior report's.\n\nPrior report:\n\n")
		b.WriteString(r.in.PriorReport)
	}
	return b.String()
}

func (r *agentRun) userPrompt(docs []document) string {
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

// tools lists the function tools offered to the model.
func (r *agentRun) tools() []openai.ChatCompletionToolUnionParam {
	fn := func(name, desc string, props map[string]any, required ...string) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:        name,
			Description: openai.String(desc),
			Parameters: openai.FunctionParameters{
				"type": "object", "properties": props, "required": required, "additionalProperties": false,
			},
		})
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	integer := func(desc string) map[string]any { return map[string]any{"type": "integer", "description": desc} }
	tools := []openai.ChatCompletionToolUnionParam{
		fn("search_files", "Rank passages of the provided files by relevance (BM25) to a query; returns passages with their file path and line range.",
			map[string]any{"query": str("keywords to search for"), "limit": integer("passages to return, 1-20 (default 5)")}, "query"),
		fn("read_file", "Read lines of a provided file, numbered.",
			map[string]any{"path": str("file path as listed, e.g. input_files/notes.md"), "start_line": integer("first line, 1-based (default 1)"), "end_line": integer("last line (default start_line+199)")}, "path"),
		fn("write_file", "Write a text file into the job workspace (not under input_files/).",
			map[string]any{"path": str("slash-separated relative path, e.g. data/table.csv"), "content": str("file content")}, "path", "content"),
	}
	if r.e.opts.FetchClient != nil {
		tools = append(tools, fn("fetch_url", "Fetch a public http(s) URL and return its text.",
			map[string]any{"url": str("absolute http or https URL")}, "url"))
	}
	return append(tools, r.granted.params()...)
}

// callTool runs one tool call and records it. Tool failures go back to the model as text so it
// can recover; only a failing sink or a cancelled context ends the run.
func (r *agentRun) callTool(ctx context.Context, tc openai.ChatCompletionMessageToolCallUnion) (string, error) {
	fn, args := tc.Function.Name, tc.Function.Arguments
	name := r.toolName(fn)
	if err := r.em.event(ctx, KindToolCall, name, truncate(args, eventContentChars), map[string]any{"tool": name, "call_id": tc.ID}); err != nil {
		return "", err
	}
	out, err := r.execTool(ctx, fn, args)
	if cerr := ctx.Err(); cerr != nil {
		return "", cerr
	}
	if err != nil {
		out = "error: " + err.Error()
	} else {
		r.succeeded[name] = true
	}
	out = r.em.redact(truncate(out, toolResultChars))
	data := map[string]any{"tool": name, "call_id": tc.ID, "error": err != nil}
	if err := r.em.event(ctx, KindToolResult, name, truncate(out, eventContentChars), data); err != nil {
		return "", err
	}
	return out, nil
}

func (r *agentRun) execTool(ctx context.Context, name, rawArgs string) (string, error) {
	if t, ok := r.granted.byFunc[name]; ok {
		return r.callMCP(ctx, t, rawArgs)
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
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
		return "", fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	switch name {
	case "search_files":
		return r.searchFiles(args.Query, args.Limit), nil
	case "read_file":
		return r.readFile(args.Path, args.StartLine, args.EndLine)
	case "write_file":
		return r.writeFile(args.Path, args.Content)
	case "fetch_url":
		if r.e.opts.FetchClient == nil {
			return "", errors.New("fetch_url is not available")
		}
		return r.fetch(ctx, args.URL)
	}
	return "", fmt.Errorf("unknown tool %q", name)
}

func (r *agentRun) searchFiles(query string, limit int) string {
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, 20)
	hits := r.ix.search(terms(query), limit, nil)
	if len(hits) == 0 {
		return "No matching passages."
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "[%s]\n%s\n\n", strings.ReplaceAll(r.ix.cite(h.P), "`", ""), r.ix.passages[h.P].Text)
	}
	return b.String()
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
		var b strings.Builder
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
	if p == InputDir || strings.HasPrefix(p, InputDir+"/") {
		return "", errors.New("input_files/ is read-only")
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

// fetch GETs a URL through the FetchClient (the SSRF-safe client in production) and returns its
// text. The body is capped; HTML and PDF are converted to text.
func (r *agentRun) fetch(ctx context.Context, raw string) (string, error) {
	p, err := FetchPage(ctx, r.e.opts.FetchClient, raw, r.in.Now)
	if err != nil {
		return "", err
	}
	text := p.Text
	if p.Truncated {
		text += "\n[truncated]"
	}
	return fmt.Sprintf("URL: %s\nHTTP %d, %s\n\n%s", p.URL, p.Status, p.ContentType, text), nil
}
