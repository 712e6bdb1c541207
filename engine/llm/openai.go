// Package llm is the engine that drives an OpenAI-compatible chat-completions endpoint (OpenAI,
// Ollama, vLLM, llama.cpp's server, …) as a tool-using agent: it searches and reads the files and
// the web, then writes a report whose claims each cite a stored source with a verified quote.
package llm

import (
	"context"
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

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/output"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/workspace"
)

// Options configure the openai engine.
type Options struct {
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
	Searcher sources.Searcher
	// CorpusDir is an optional local folder (RESEARCH_CORPUS_DIR) searched besides each job's files.
	CorpusDir string
}

// budget is what an effort level may spend on research; writing the report and the structured
// output afterwards takes a few more calls (each retried at most once).
type budget struct {
	Steps       int   // model calls in the agent loop
	StepTokens  int64 // max_completion_tokens per call
	TotalTokens int64 // tokens (prompt + completion) across the research before the agent must write
	Sources     int   // distinct sources (pages, files, tool results) the run may read
	Searches    int   // web_search calls
	// Time is how long the agent may research (by the run's clock) before it must write; the rest
	// of the effort's job timeout is left for writing.
	Time time.Duration
}

var budgets = map[string]budget{
	engine.EffortLow:    {Steps: 4, StepTokens: 2048, TotalTokens: 40_000, Sources: 4, Searches: 2, Time: 3 * time.Minute},
	engine.EffortMedium: {Steps: 8, StepTokens: 4096, TotalTokens: 120_000, Sources: 10, Searches: 4, Time: 9 * time.Minute},
	engine.EffortHigh:   {Steps: 16, StepTokens: 8192, TotalTokens: 400_000, Sources: 25, Searches: 10, Time: 18 * time.Minute},
	engine.EffortBuild:  {Steps: 24, StepTokens: 16384, TotalTokens: 800_000, Sources: 40, Searches: 16, Time: 36 * time.Minute},
}

// Tool limits.
const (
	toolResultChars   = 20_000
	writeFileMaxBytes = 1 << 20
	eventContentChars = 4_000
)

type openaiEngine struct {
	opts   Options
	client openai.Client
}

// New returns the engine that drives an OpenAI-compatible chat-completions endpoint (OpenAI,
// Ollama, vLLM, llama.cpp's server, …) as a tool-using agent.
func New(opts Options) (engine.Engine, error) {
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

// redactor hides the provider and search keys wherever they could surface (a model echoing one,
// an error body).
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
	in     engine.Input
	em     engine.Emitter
	ix     *index
	srcs   *sources.Store
	budget budget
	start  time.Time
	used   int64 // tokens spent
	// spent is the estimated cost so far (with Prices); overCost is set once it passed MaxCostUSD.
	spent    float64
	overCost bool
	wrote    bool // write_file changed the workspace since the last checkpoint
	// read are the sources this run read (by stored id), searches the web searches it made.
	read     map[string]bool
	searches int
	// granted are the MCP tools offered as functions; succeeded holds every tool (built-in or MCP,
	// by toolName) that returned a successful result, for the required-tool monitor.
	granted   *grantedTools
	succeeded map[string]bool
}

func (e *openaiEngine) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	if err := in.Validate(); err != nil {
		return engine.Result{}, err
	}
	schema, sch, err := in.OutputSchema()
	if err != nil {
		return engine.Result{}, err
	}
	srcs, err := sources.Open(in.Workspace, in.Now)
	if err != nil {
		return engine.Result{}, err
	}
	r := &agentRun{e: e, in: in, em: engine.Emitter{Sink: sink, Redact: e.redactor()}, srcs: srcs, budget: budgets[in.Effort],
		start: in.Time(), read: map[string]bool{}, granted: newGrantedTools(in.Tools, builtinToolNames), succeeded: map[string]bool{}}
	res, err := r.run(ctx, schema, sch)
	if err != nil {
		return engine.Result{}, e.mapError(ctx, err)
	}
	return res, nil
}

func (r *agentRun) run(ctx context.Context, schema map[string]any, sch *jsonschema.Schema) (engine.Result, error) {
	in, em := r.in, r.em
	err := em.Event(ctx, engine.KindStatus, "Research started", nlp.Collapse(in.Question), map[string]any{
		"engine": "openai", "model": r.e.opts.Model, "effort": in.Effort, "continuation": in.Continuation,
		"max_steps": r.budget.Steps, "max_sources": r.budget.Sources, "max_searches": r.searchBudget(),
		"max_tokens": r.budget.TotalTokens, "max_seconds": int(r.budget.Time.Seconds()), "web_search": r.e.opts.Searcher != nil,
	})
	if err != nil {
		return engine.Result{}, err
	}
	if err := engine.RecordExpert(ctx, em, in); err != nil {
		return engine.Result{}, err
	}
	if in.MaxCostUSD != nil && r.e.opts.Prices == nil {
		err := em.Event(ctx, engine.KindStatus, "Spend ceiling not enforced",
			"The expert sets max_cost_usd, but no token prices are configured, so this run's spend cannot be estimated; the effort's token budget applies.", nil)
		if err != nil {
			return engine.Result{}, err
		}
	}
	docs, skipped, err := sources.Load(ctx, sources.Folders(in, r.e.opts.CorpusDir))
	if err != nil {
		return engine.Result{}, err
	}
	r.ix = newIndex(docs)
	for _, s := range skipped {
		if err := em.Event(ctx, engine.KindStatus, "Skipped file", s.Path+": "+s.Reason, map[string]any{"path": s.Path, "reason": s.Reason}); err != nil {
			return engine.Result{}, err
		}
	}

	messages, err := r.research(ctx, docs)
	if err != nil {
		return engine.Result{}, err
	}
	report, err := r.writeReport(ctx, messages)
	if err != nil {
		return engine.Result{}, err
	}
	report = em.Redact(report) // a model that echoes the provider key does not publish it
	if err := in.Workspace.WriteFile(engine.ReportPath, []byte(report)); err != nil {
		return engine.Result{}, fmt.Errorf("engine: write report: %w", err)
	}
	if err := em.Event(ctx, engine.KindPreview, "Report drafted", nlp.Truncate(report, 800), nil); err != nil {
		return engine.Result{}, err
	}
	if _, err := em.Checkpoint(ctx, "Report drafted", workspace.CheckpointProgress); err != nil {
		return engine.Result{}, err
	}

	var structured map[string]any
	if schema != nil {
		if structured, err = r.structured(ctx, messages, schema, sch); err != nil {
			return engine.Result{}, err
		}
	}
	required, err := r.reportRequired(ctx)
	if err != nil {
		return engine.Result{}, err
	}
	res, err := output.Finish(ctx, em, in, report, structured, map[string]any{"path": engine.ReportPath, "sources": len(r.read)}, output.Site{})
	res.RequiredTools = required
	return res, err
}

// research is the agent loop: the model calls tools until it stops or its budget is spent. It
// returns the conversation, which the report and structured output are written from.
func (r *agentRun) research(ctx context.Context, docs []extract.Document) ([]openai.ChatCompletionMessageParamUnion, error) {
	em := r.em
	messages := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(r.systemPrompt()),
		openai.UserMessage(r.userPrompt(docs)),
	}
	tools := r.tools()
	for step := 1; ; step++ {
		if why := r.spentOn(step); why != "" {
			if err := em.Event(ctx, engine.KindStatus, "Research budget spent", why+": the agent writes its report now.", map[string]any{"step": step}); err != nil {
				return nil, err
			}
			return messages, nil
		}
		msg, err := r.complete(ctx, openai.ChatCompletionNewParams{
			Model: r.e.opts.Model, Messages: messages, MaxCompletionTokens: openai.Int(r.budget.StepTokens), Tools: tools,
		}, step)
		if err != nil {
			return nil, err
		}
		if msg.Refusal != "" {
			return nil, engine.Errorf(engine.CodeProviderError, "the model refused: %s", nlp.Truncate(msg.Refusal, 300))
		}
		content := strings.TrimSpace(msg.Content)
		if len(msg.ToolCalls) == 0 {
			// The agent is done researching; what it said is its notes for the report.
			if content != "" {
				messages = append(messages, openai.AssistantMessage(content))
				if err := em.Event(ctx, engine.KindThinking, "Research notes", nlp.Truncate(content, eventContentChars), nil); err != nil {
					return nil, err
				}
			}
			return messages, nil
		}
		messages = append(messages, msg.ToParam())
		if content != "" {
			if err := em.Event(ctx, engine.KindThinking, fmt.Sprintf("Step %d", step), nlp.Truncate(content, eventContentChars), nil); err != nil {
				return nil, err
			}
		}
		for _, tc := range msg.ToolCalls {
			out, err := r.callTool(ctx, tc)
			if err != nil {
				return nil, err
			}
			messages = append(messages, openai.ToolMessage(out, tc.ID))
		}
		if r.wrote {
			if _, err := em.Checkpoint(ctx, fmt.Sprintf("Agent files (step %d)", step), workspace.CheckpointProgress); err != nil {
				return nil, err
			}
			r.wrote = false
		}
	}
}

// spentOn says why the research must stop before step, or "".
func (r *agentRun) spentOn(step int) string {
	switch {
	case step > r.budget.Steps:
		return fmt.Sprintf("The effort's %d research steps are used", r.budget.Steps)
	case r.used >= r.budget.TotalTokens:
		return fmt.Sprintf("The effort's %d research tokens are used", r.budget.TotalTokens)
	case r.overCost:
		return "The run's estimated model spend passed the expert's max_cost_usd (spend ceiling reached)"
	case r.in.Time().Sub(r.start) >= r.budget.Time:
		return fmt.Sprintf("The effort's research time (%s) is over", r.budget.Time)
	}
	return ""
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
		return openai.ChatCompletionMessage{}, engine.Errorf(engine.CodeProviderError, "the provider returned no choices (step %d)", step)
	}
	return resp.Choices[0].Message, nil
}

// jsonCall asks for a JSON object matching schema (response_format json_schema, not strict: strict
// mode accepts only a subset of JSON Schema) and returns the raw answer without a code fence.
func (r *agentRun) jsonCall(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion, name string, schema map[string]any, tokens int64) (string, error) {
	msg, err := r.complete(ctx, openai.ChatCompletionNewParams{
		Model: r.e.opts.Model, Messages: messages, MaxCompletionTokens: openai.Int(tokens),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
			JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: schema, Strict: openai.Bool(false)},
		}},
	}, 0)
	if err != nil {
		return "", err
	}
	if msg.Refusal != "" {
		return "", engine.Errorf(engine.CodeProviderError, "the model refused: %s", nlp.Truncate(msg.Refusal, 300))
	}
	return stripFence(msg.Content), nil
}

// writeTokens bounds the answers that write the report and the structured output: twice a research
// step, so a report in JSON is not cut off at low effort.
func (r *agentRun) writeTokens() int64 { return max(2*r.budget.StepTokens, 4096) }

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
// workspace) are returned as they are, like the extractive engine does.
func (e *openaiEngine) mapError(ctx context.Context, err error) error {
	redact := e.redactor()
	var ee *engine.Error
	switch {
	case errors.As(err, &ee):
		return &engine.Error{Code: ee.Code, Message: redact(ee.Message)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return engine.Errorf(engine.CodeTimeout, "the run timed out")
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
			msg += ": " + nlp.Truncate(nlp.Collapse(m), 300)
		}
		return &engine.Error{Code: engine.CodeProviderError, Message: redact(msg)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return engine.Errorf(engine.CodeTimeout, "the provider did not answer in time")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &engine.Error{Code: engine.CodeProviderError, Message: redact("the provider could not be reached: " + nlp.Truncate(ue.Err.Error(), 300))}
	}
	return &engine.Error{Code: engine.CodeProviderError, Message: redact("the provider's answer could not be used: " + nlp.Truncate(err.Error(), 300))}
}

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
