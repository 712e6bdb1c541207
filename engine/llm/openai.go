// Package llm is the engine that drives an OpenAI-compatible chat-completions endpoint (OpenAI,
// Ollama, vLLM, llama.cpp's server, …) as a tool-using agent: it searches and reads the files and
// the web, then writes a report whose claims each cite a stored source with a verified quote.
//
// Local models differ in what they can do, so the engine learns it per model (caps.go) and
// degrades step by step: native tool calls, tool calls written as text (texttools.go), or
// retrieve-then-read, where the service searches and reads and the model only writes
// (retrieve.go). Every request is fitted to the model's context window (call.go, fit.go), every
// JSON answer goes through one lenient, strict parser (jsonparse.go), and the server's answers are
// read whatever their shape (transport.go).
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	// ToolMode (RESEARCH_MODEL_TOOLS) is how the model gets its tools: ToolsAuto ("" too: learn
	// it), ToolsNative, ToolsText or ToolsRetrieve.
	ToolMode string
	// ContextTokens (RESEARCH_MODEL_CONTEXT) is the model's context window when the server does not
	// report it; when it does, the smaller of the two. 0: not configured.
	ContextTokens int
	// RetryBase is the first wait before retrying a busy server (doubling up to 30 s, or what its
	// Retry-After says); 0: one second.
	RetryBase time.Duration
	// Logger receives what the engine learns about the model server (nil: slog.Default()).
	Logger *slog.Logger
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
	http   *http.Client
	log    *slog.Logger
	memory capMemory // what each model can do, learned by this instance's runs
}

// New returns the engine that drives an OpenAI-compatible chat-completions endpoint (OpenAI,
// Ollama, vLLM, llama.cpp's server, …) as a tool-using agent.
func New(opts Options) (engine.Engine, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("engine: openai: a model is required")
	}
	mode, err := ParseToolMode(opts.ToolMode)
	if err != nil {
		return nil, fmt.Errorf("engine: openai: tool mode %w", err)
	}
	opts.ToolMode = mode
	if opts.ContextTokens < 0 {
		return nil, errors.New("engine: openai: the context window cannot be negative")
	}
	// Retries are the engine's own (session.send): inside the run's time, not a fixed count.
	reqOpts := []option.RequestOption{option.WithMaxRetries(0), option.WithMiddleware(readAnswers)}
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
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &openaiEngine{opts: opts, client: openai.NewClient(reqOpts...), http: hc, log: log,
		memory: capMemory{models: map[string]*modelCaps{}}}, nil
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
	s      *session
	in     engine.Input
	em     engine.Emitter
	ix     *index
	srcs   *sources.Store
	budget budget
	start  time.Time // by the run's clock
	began  time.Time // by the wall clock: the research deadline
	mode   string    // how tools are given this run: native, text or retrieve
	wrote  bool      // write_file changed the workspace since the last checkpoint
	// read are the sources this run read (by stored id), searches the web searches it made.
	read     map[string]bool
	searches int
	calls    int      // tool calls the model made
	notes    []string // what the model said between and after its tool calls
	// granted are the MCP tools offered as functions; succeeded holds every tool (built-in or MCP,
	// by toolName) that returned a successful result, for the required-tool monitor.
	granted   *grantedTools
	succeeded map[string]bool
	evidence  *evidenceIndex // the read sources' passages, built when the report is written
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
	em := engine.Emitter{Sink: sink, Redact: e.redactor()}
	caps := e.capsFor(ctx)
	r := &agentRun{e: e, s: &session{e: e, em: em, caps: caps}, in: in, em: em, srcs: srcs, budget: budgets[in.Effort],
		start: in.Time(), began: time.Now(), mode: caps.Tools, read: map[string]bool{},
		granted: newGrantedTools(in.Tools, builtinToolNames), succeeded: map[string]bool{}}
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
	if err := em.Event(ctx, engine.KindStatus, "Model capabilities", describeCaps(r.s.caps), r.s.caps.data()); err != nil {
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

	if err := r.research(ctx, docs); err != nil {
		return engine.Result{}, err
	}
	report, err := r.writeReport(ctx)
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
		if structured, err = r.structured(ctx, schema, sch); err != nil {
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

// research gathers the evidence: the agent loop when the model can call tools, else (or when the
// loop read nothing although there was something to read) the service's own retrieval.
func (r *agentRun) research(ctx context.Context, docs []extract.Document) error {
	auto := r.e.opts.ToolMode == ToolsAuto
	if r.mode == ToolsRetrieve {
		return r.retrieve(ctx, "Retrieve-then-read: "+r.s.caps.ToolsFrom+". The service searches and reads; the model writes the report from the passages it is given.")
	}
	err := r.agentLoop(ctx, docs)
	var refused *toolsRefused
	if errors.As(err, &refused) {
		if !auto {
			return engine.Errorf(engine.CodeProviderError, "the model server refused tools (%s) and RESEARCH_MODEL_TOOLS=%s: set RESEARCH_MODEL_TOOLS=auto or retrieve, so that researchd searches and reads for the model",
				problemText(refused.err), r.e.opts.ToolMode)
		}
		r.mode = ToolsRetrieve
		r.e.learn(func(c *capabilities) {
			c.Tools, c.ToolsFrom = ToolsRetrieve, "the model server refused tools"
		})
		return r.retrieve(ctx, "The model server refused tools ("+nlp.Truncate(problemText(refused.err), 200)+"), so the service searches and reads and the model writes the report from the passages it is given; later runs of this model start so.")
	}
	if err != nil {
		return err
	}
	if len(r.read) > 0 || (len(docs) == 0 && r.e.opts.Searcher == nil) {
		return nil
	}
	if r.calls == 0 && !auto {
		return engine.Errorf(engine.CodeProviderError, "the model called no tool, so the run read nothing (RESEARCH_MODEL_TOOLS=%s): the model may not support tool calls; set RESEARCH_MODEL_TOOLS=auto or retrieve, so that researchd searches and reads for it",
			r.e.opts.ToolMode)
	}
	if !auto {
		return nil // the model searched and found nothing; its report says so
	}
	why := "The model's tool calls read no source"
	if r.calls == 0 {
		why = "The model answered without calling a tool"
	}
	return r.retrieve(ctx, why+", so the service searches and reads for it: the report is written from the passages found.")
}

// agentLoop is the agent: the model calls tools until it stops or its budget is spent.
func (r *agentRun) agentLoop(ctx context.Context, docs []extract.Document) error {
	em := r.em
	history := []chatMsg{{Role: "system"}, {Role: "user", Content: r.userPrompt(docs)}}
	// The research time by the wall clock too: a stalled or busy server ends the research, not
	// the run, and the report is written from what was read.
	rctx, cancel := context.WithDeadline(ctx, r.began.Add(r.budget.Time))
	defer cancel()
	for step := 1; ; step++ {
		if why := r.spentOn(step); why != "" {
			return em.Event(ctx, engine.KindStatus, "Research budget spent", why+": the agent writes its report now.", map[string]any{"step": step})
		}
		history[0].Content = r.systemPrompt() // the tool mode may have changed
		var tools []toolSpec
		if r.mode == ToolsNative {
			tools = r.tools()
		}
		rep, err := r.s.chat(rctx, chatReq{Build: func(b int) ([]chatMsg, error) { return fitMessages(history, b) },
			Tools: tools, Want: r.budget.StepTokens, Least: 256, What: fmt.Sprintf("research step %d", step)})
		if err != nil {
			if ctx.Err() == nil && researchTimeUp(err, rctx) {
				return em.Event(ctx, engine.KindStatus, "Research budget spent",
					fmt.Sprintf("The model server did not answer research step %d within the effort's research time (%s): %s. The report is written from what was read.", step, r.budget.Time, nlp.Truncate(problemText(err), 200)),
					map[string]any{"step": step})
			}
			return err
		}
		if rep.Refusal != "" {
			return engine.Errorf(engine.CodeProviderError, "the model refused: %s", nlp.Truncate(rep.Refusal, 300))
		}
		content := strings.TrimSpace(rep.Content)
		calls, textual := rep.Calls, false
		if len(calls) == 0 {
			for i, tc := range parseTextCalls(content, r.offered) {
				calls, textual = append(calls, toolCall{ID: fmt.Sprintf("text_%d_%d", step, i+1), Name: tc.Name, Args: tc.Args}), true
			}
			if textual && r.mode == ToolsNative {
				if err := r.switchToText(ctx); err != nil {
					return err
				}
			}
		}
		if len(calls) == 0 {
			// The agent is done researching; what it said is its notes for the report.
			if notes := stripThinking(content); notes != "" {
				r.notes = append(r.notes, notes)
				if err := em.Event(ctx, engine.KindThinking, "Research notes", nlp.Truncate(notes, eventContentChars), nil); err != nil {
					return err
				}
			}
			return nil
		}
		if thought := stripThinking(content); thought != "" && !textual {
			r.notes = append(r.notes, thought)
			if err := em.Event(ctx, engine.KindThinking, fmt.Sprintf("Step %d", step), nlp.Truncate(thought, eventContentChars), nil); err != nil {
				return err
			}
		}
		r.calls += len(calls)
		if history, err = r.runCalls(ctx, history, content, calls, textual); err != nil {
			return err
		}
		if r.wrote {
			if _, err := em.Checkpoint(ctx, fmt.Sprintf("Agent files (step %d)", step), workspace.CheckpointProgress); err != nil {
				return err
			}
			r.wrote = false
		}
	}
}

// runCalls runs a step's tool calls and appends the step to the history: natively, an assistant
// message with its calls and one tool message per result; as text, the model's text and one user
// message with the results in <tool_response> blocks.
func (r *agentRun) runCalls(ctx context.Context, history []chatMsg, content string, calls []toolCall, textual bool) ([]chatMsg, error) {
	if textual {
		history = append(history, chatMsg{Role: "assistant", Content: content})
	} else {
		history = append(history, chatMsg{Role: "assistant", Content: content, Calls: calls})
	}
	var full, short []string
	for _, tc := range calls {
		out, err := r.callTool(ctx, tc)
		if err != nil {
			return nil, err
		}
		sh := shortResult(out)
		if textual {
			full, short = append(full, toolResponse(tc.Name, out)), append(short, toolResponse(tc.Name, firstNonEmpty(sh, out)))
			continue
		}
		history = append(history, chatMsg{Role: "tool", Content: out, CallID: tc.ID, Short: sh})
	}
	if textual {
		history = append(history, chatMsg{Role: "user", Content: strings.Join(full, "\n"), Short: strings.Join(short, "\n")})
	}
	return history, nil
}

// switchToText: the model wrote its tool calls as text although the tools were offered natively
// (a server without a tool-call parser for it); from now on it is told the text format.
func (r *agentRun) switchToText(ctx context.Context) error {
	r.mode = ToolsText
	if r.e.opts.ToolMode == ToolsAuto {
		r.e.learn(func(c *capabilities) {
			if c.Tools == ToolsNative {
				c.Tools, c.ToolsFrom = ToolsText, "the model wrote its tool calls as text"
			}
		})
	}
	return r.em.Event(ctx, engine.KindStatus, "Tool calls read from text",
		"The model wrote its tool calls as text instead of native tool calls; they are run, and from now on it is told the <tool_call> text format.",
		map[string]any{"tool_mode": ToolsText})
}

// researchTimeUp says whether err only means the research time is over (the run goes on to write).
func researchTimeUp(err error, rctx context.Context) bool {
	var gu *gaveUp
	return rctx.Err() != nil || (errors.As(err, &gu) && gu.deadline)
}

// spentOn says why the research must stop before step, or "".
func (r *agentRun) spentOn(step int) string {
	switch {
	case step > r.budget.Steps:
		return fmt.Sprintf("The effort's %d research steps are used", r.budget.Steps)
	case r.s.used >= r.budget.TotalTokens:
		return fmt.Sprintf("The effort's %d research tokens are used", r.budget.TotalTokens)
	case r.overCost():
		return "The run's estimated model spend passed the expert's max_cost_usd (spend ceiling reached)"
	case r.in.Time().Sub(r.start) >= r.budget.Time:
		return fmt.Sprintf("The effort's research time (%s) is over", r.budget.Time)
	}
	return ""
}

// overCost says whether the estimated spend passed the expert's ceiling (never without prices).
func (r *agentRun) overCost() bool {
	p := r.e.opts.Prices
	return p != nil && r.in.MaxCostUSD != nil && p.cost(r.s.promptUsed, r.s.completeUsed) >= *r.in.MaxCostUSD
}

// writeTokens bounds the answers that write the report and the structured output: twice a research
// step, so a report in JSON is not cut off at low effort.
func (r *agentRun) writeTokens() int64 { return max(2*r.budget.StepTokens, 4096) }

// providerCallError marks an error of the provider call (HTTP, network, decoding its answer).
type providerCallError struct{ err error }

func (e *providerCallError) Error() string { return e.err.Error() }
func (e *providerCallError) Unwrap() error { return e.err }

// mapError gives provider failures and timeouts a stable code and a message that says what the
// server did. Cancellation stays a context error so the job runner can tell a cancelled job from a
// failed one; other failures (the sink, the workspace) are returned as they are, like the
// extractive engine does.
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
	msg := ""
	var se *statusError
	var ae *answerError
	var sb *streamBroken
	var ne interface{ Timeout() bool }
	var ue *url.Error
	switch {
	case errors.As(err, &se):
		msg = "the model server answered " + se.Error()
		var gu *gaveUp
		if errors.As(err, &gu) {
			msg += fmt.Sprintf(", still after %d attempts over %s", gu.attempts, gu.elapsed.Round(time.Second))
		}
	case errors.As(err, &ae):
		msg = ae.what
	case errors.As(err, &sb) || errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the model server's answer broke off: " + nlp.Truncate(err.Error(), 300)
	case errors.As(err, &ne) && ne.Timeout():
		return engine.Errorf(engine.CodeTimeout, "the model server did not answer in time")
	case errors.As(err, &ue):
		msg = "the model server could not be reached: " + nlp.Truncate(ue.Err.Error(), 300)
	default:
		msg = "the model server's answer could not be read as a chat completion: " + nlp.Truncate(err.Error(), 300)
	}
	return &engine.Error{Code: engine.CodeProviderError, Message: redact(msg)}
}

func problemText(err error) string {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return ee.Message
	}
	return err.Error()
}
