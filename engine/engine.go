// Package engine runs research: one interface, two engines. The extractive engine (formerly
// "offline") answers from the sources without a model, by quoting them; the openai engine drives any OpenAI-compatible
// chat-completions endpoint as a tool-using agent. Both write report.md into the job's workspace,
// report every step through a Sink (it becomes the job's timeline) and take checkpoints (commits).
//
// This package is the seam every caller uses: Engine, Input, Result, events and the Sink, errors
// and their codes, efforts, in-process answers (Answerer), MCP tool grants, and the structured
// output's schema checks and basis. The engines and their parts are subpackages, which import this
// one and each other in one direction only (imports_test.go checks it; docs/architecture.md):
//
//	nlp         text analysis: words, stems, stopwords, sentences, negation, BM25
//	extract     files to text (HTML, PDF, DOCX) and text to units and tables
//	sources     local source folders, web search and page fetching, the store of what a run read
//	citations   quote matching and citation verification
//	output      the end of every run: report.md, structured output, the build site, the checkpoint
//	extractive  the extractive engine (extractive.New)
//	llm         the openai engine (llm.New)
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/schema"
	"github.com/researchd/researchd/workspace"
)

// Event kinds (the timeline event kind of openapi/v2.json).
const (
	KindStatus      = "status"
	KindThinking    = "thinking"
	KindToolCall    = "tool_call"
	KindToolResult  = "tool_result"
	KindSubagent    = "subagent"
	KindText        = "text"
	KindFinalAnswer = "final_answer"
	KindPreview     = "preview"
)

// Effort levels.
const (
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
	EffortBuild  = "build"
)

// Error codes of a failed run.
const (
	CodeStructuredOutputInvalid = "structured_output_invalid"
	CodeInvalidJSONSchema       = "invalid_json_schema"
	CodeEngineError             = "engine_error"
	CodeProviderError           = "provider_error"
	CodeTimeout                 = "timeout"
)

// Paths inside the workspace.
const (
	ReportPath           = "report.md"
	InputDir             = "input_files"
	SiteDir              = "site"
	StructuredOutputPath = "structured_output.json"
)

// Event is one step of a run; the sink turns it into a timeline event.
type Event struct {
	Kind, Title, Content string
	Data                 map[string]any
}

// Sink receives a run's events and checkpoints.
type Sink interface {
	// Event records a timeline event.
	Event(ctx context.Context, e Event) error
	// Checkpoint commits the workspace; checkpointType is progress, final or continuation.
	Checkpoint(ctx context.Context, message, checkpointType string) (sha string, err error)
}

// Input is what a run works on.
type Input struct {
	Question     string
	Effort       string         // low|medium|high|build (already clamped)
	JSONSchema   map[string]any // nil = no structured output
	Workspace    *workspace.Repo
	ContextDirs  []string // extra read-only folders (expert context files, local corpus)
	Continuation bool     // a continuation run: PriorReport holds the last report
	PriorReport  string
	// Tools are the MCP tools granted to the run (an expert's mcp_tool_names), called through
	// ToolCaller; engines without a model ignore them.
	Tools      []GrantedTool
	ToolCaller ToolCaller
	// RequiredTools (required_tool_calls) must each return a successful result during the run; the
	// monitor only observes: the run's timeline and Result say which did not.
	RequiredTools []string
	// Expert names the expert the run runs as (nil: the default researcher); SystemPrompt and
	// Skills are its instructions and linked skills. Engines with a model put them in the system
	// message; every engine records in the timeline what it was given.
	Expert       *ExpertInfo
	SystemPrompt string
	Skills       []Skill
	// MaxCostUSD caps the run's estimated model spend (the expert's max_cost_usd); an engine stops
	// researching and writes its report once the estimate passes it. Engines without a model or
	// without token prices spend nothing they can count and ignore it (they record that they do).
	MaxCostUSD *float64
	// Now is the run's clock (the job service's, so tests can fix it): today's date in a model's
	// prompt, retrieval times of stored sources. nil: time.Now.
	Now func() time.Time
}

// Time reads the run's clock.
func (in Input) Time() time.Time {
	if in.Now == nil {
		return time.Now()
	}
	return in.Now()
}

// Result is what a successful run produced (report.md is also in the workspace).
type Result struct {
	Report           string
	StructuredOutput map[string]any
	RequiredTools    *RequiredToolsOutcome // nil when the run had no required tools
	// NoSources: the run had nothing to read (no files, no corpus, no web search), said so in its
	// report, and is not to be charged: the runner refunds it.
	NoSources bool
}

// Error is a run failure with a stable code (structured_output_invalid, engine_error,
// provider_error, timeout, invalid_json_schema).
type Error struct{ Code, Message string }

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf is a run failure with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Engine runs research.
type Engine interface {
	Name() string
	Run(ctx context.Context, in Input, sink Sink) (Result, error)
}

// Validate checks the parts of an Input every engine relies on.
func (in Input) Validate() error {
	switch in.Effort {
	case EffortLow, EffortMedium, EffortHigh, EffortBuild:
	default:
		return Errorf(CodeEngineError, "unknown effort %q", in.Effort)
	}
	if in.Workspace == nil {
		return Errorf(CodeEngineError, "no workspace")
	}
	return nil
}

// OutputSchema normalises and compiles Input.JSONSchema; both are nil when no structured output is asked.
func (in Input) OutputSchema() (map[string]any, *jsonschema.Schema, error) {
	if in.JSONSchema == nil {
		return nil, nil, nil
	}
	doc, err := NormalizeJSON(in.JSONSchema)
	if err != nil {
		return nil, nil, Errorf(CodeInvalidJSONSchema, "json_schema is not JSON: %v", err)
	}
	sch, err := CompileSchema(doc)
	if err != nil {
		return nil, nil, err
	}
	if schema.Type(doc) != "object" {
		return nil, nil, Errorf(CodeInvalidJSONSchema, "json_schema must describe an object")
	}
	return doc, sch, nil
}

// FinalType is the checkpoint type of a run's last checkpoint.
func (in Input) FinalType() string {
	if in.Continuation {
		return workspace.CheckpointContinuation
	}
	return workspace.CheckpointFinal
}

// Emitter wraps a Sink so every event passes through one place (the openai engine redacts there).
type Emitter struct {
	Sink   Sink
	Redact func(string) string // nil: events pass as they are
}

// Event records a timeline event of kind.
func (m Emitter) Event(ctx context.Context, kind, title, content string, data map[string]any) error {
	if m.Redact != nil {
		title, content = m.Redact(title), m.Redact(content)
		data = redactData(data, m.Redact)
	}
	if err := m.Sink.Event(ctx, Event{Kind: kind, Title: title, Content: content, Data: data}); err != nil {
		return fmt.Errorf("engine: record %s event: %w", kind, err)
	}
	return nil
}

// Discards reports whether events go nowhere (the discard sink), so their payloads need not be
// built.
func (m Emitter) Discards() bool {
	_, ok := m.Sink.(Discard)
	return ok
}

// Checkpoint commits the workspace; typ is progress, final or continuation.
func (m Emitter) Checkpoint(ctx context.Context, message, typ string) (string, error) {
	sha, err := m.Sink.Checkpoint(ctx, message, typ)
	if err != nil {
		return "", fmt.Errorf("engine: %s checkpoint: %w", typ, err)
	}
	return sha, nil
}

func redactData(v map[string]any, redact func(string) string) map[string]any {
	if v == nil {
		return nil
	}
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = redactValue(x, redact)
	}
	return out
}

func redactValue(v any, redact func(string) string) any {
	switch x := v.(type) {
	case string:
		return redact(x)
	case map[string]any:
		return redactData(x, redact)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = redactValue(x[i], redact)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i := range x {
			out[i] = redact(x[i])
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i := range x {
			out[i] = redactData(x[i], redact)
		}
		return out
	default:
		return v
	}
}
