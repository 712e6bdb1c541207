package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What the model server can do, learned once per model and remembered by the engine instance (a
// process), so only the first run of a model probes and only one run pays for each lesson.

// Tool modes (Options.ToolMode, RESEARCH_MODEL_TOOLS): how the model is given its tools.
const (
	ToolsAuto     = "auto"     // learn it: native, then text calls, then retrieve-then-read
	ToolsNative   = "native"   // the API's tools parameter and tool_calls
	ToolsText     = "text"     // tools described in the prompt, calls written as <tool_call> text
	ToolsRetrieve = "retrieve" // no tools: the service searches and reads, the model writes from passages
)

// ParseToolMode reads a tool mode ("" is auto).
func ParseToolMode(s string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(s)); m {
	case "":
		return ToolsAuto, nil
	case ToolsAuto, ToolsNative, ToolsText, ToolsRetrieve:
		return m, nil
	}
	return "", fmt.Errorf("%q: want auto, native, text or retrieve", s)
}

// Structured answer formats, most to least constrained.
const (
	formatSchema = iota // response_format json_schema
	formatObject        // response_format json_object, the schema in the prompt
	formatPrompt        // no response_format, the schema in the prompt
)

var formatNames = []string{"json_schema", "json_object", "prompt"}

// Context windows assumed when nothing says otherwise (tokens).
const (
	openAIContext  = 128_000 // OpenAI's current models
	unknownContext = 32_768  // another server that does not report it: too large is corrected by its first refusal
	ollamaDefault  = 4_096   // what Ollama serves a model with unless OLLAMA_CONTEXT_LENGTH or num_ctx say more
	minContext     = 1_024   // below this nothing useful fits
)

// capabilities are what the engine knows about one model on its server.
type capabilities struct {
	Server      string // ollama, vllm, llama.cpp, openai, or "" when not recognised
	Tools       string // native, text or retrieve (never auto)
	ToolsFrom   string // why
	Format      int    // formatSchema, formatObject or formatPrompt
	Context     int    // the context window in tokens
	ContextFrom string // where Context comes from
}

// data is the capabilities as timeline event data.
func (c capabilities) data() map[string]any {
	return map[string]any{"server": firstNonEmpty(c.Server, "unknown"), "tool_mode": c.Tools, "tool_mode_from": c.ToolsFrom,
		"json_format": formatNames[c.Format], "context_tokens": c.Context, "context_from": c.ContextFrom}
}

// capMemory remembers each model's capabilities for the engine instance.
type capMemory struct {
	mu     sync.Mutex
	models map[string]*modelCaps
}

type modelCaps struct {
	once sync.Once // discovery runs once per model, whatever the number of concurrent runs
	caps capabilities
}

// capsFor returns the model's capabilities, discovering them on first use.
func (e *openaiEngine) capsFor(ctx context.Context) capabilities {
	m := &e.memory
	m.mu.Lock()
	mc, ok := m.models[e.opts.Model]
	if !ok {
		mc = &modelCaps{}
		m.models[e.opts.Model] = mc
	}
	m.mu.Unlock()
	mc.once.Do(func() {
		c := e.discover(ctx)
		m.mu.Lock()
		mc.caps = c
		if ctx.Err() != nil {
			// Cut short (a cancelled run): what was not learned is not remembered as absent.
			delete(m.models, e.opts.Model)
		}
		m.mu.Unlock()
		e.log.Info("model capabilities", "model", e.opts.Model, "server", c.Server, "tool_mode", c.Tools, "tool_mode_from", c.ToolsFrom,
			"context_tokens", c.Context, "context_from", c.ContextFrom)
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return mc.caps
}

// learn records a lesson about the model for later runs.
func (e *openaiEngine) learn(change func(*capabilities)) {
	m := &e.memory
	m.mu.Lock()
	defer m.mu.Unlock()
	if mc, ok := m.models[e.opts.Model]; ok {
		change(&mc.caps)
	}
}

// probeTimeout bounds each discovery request: a server that does not answer one is not that server.
const probeTimeout = 3 * time.Second

// discover asks the server what it is: vLLM's /v1/models (max_model_len), Ollama's /api/version,
// /api/show (model_info's context length, capabilities) and /api/ps (the window a loaded model runs
// with), llama.cpp's /props (n_ctx per slot). Failures only mean "not that server".
func (e *openaiEngine) discover(ctx context.Context) capabilities {
	c := capabilities{Tools: ToolsNative, ToolsFrom: "assumed", Format: formatSchema}
	switch e.opts.ToolMode {
	case ToolsNative, ToolsText, ToolsRetrieve:
		c.Tools, c.ToolsFrom = e.opts.ToolMode, "configured (RESEARCH_MODEL_TOOLS)"
	}
	configured := e.opts.ContextTokens
	if e.opts.BaseURL == "" {
		c.Server, c.Context, c.ContextFrom = "openai", openAIContext, "OpenAI default"
		if configured > 0 {
			c.Context, c.ContextFrom = configured, "configured (RESEARCH_MODEL_CONTEXT)"
		}
		return c
	}
	base := strings.TrimRight(e.opts.BaseURL, "/")
	root := strings.TrimSuffix(base, "/v1")
	reported, from := 0, ""
	report := func(n int, where string) {
		if n > 0 && (reported == 0 || n < reported) {
			reported, from = n, where
		}
	}

	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if e.probe(ctx, http.MethodGet, base+"/models", nil, &models) {
		for _, m := range models.Data {
			if m.ID == e.opts.Model && m.MaxModelLen > 0 {
				c.Server = "vllm"
				report(m.MaxModelLen, "vLLM /v1/models max_model_len")
			}
		}
	}

	var show struct {
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
		Parameters   string         `json:"parameters"`
	}
	// Only a server that says it is Ollama gets the POST: another server's catch-all route could
	// take it for a chat request.
	var version struct {
		Version string `json:"version"`
	}
	if c.Server == "" && e.probe(ctx, http.MethodGet, root+"/api/version", nil, &version) && version.Version != "" &&
		e.probe(ctx, http.MethodPost, root+"/api/show", map[string]any{"model": e.opts.Model}, &show) && show.ModelInfo != nil {
		c.Server = "ollama"
		maxLen := 0
		for k, v := range show.ModelInfo {
			if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") {
				maxLen = int(f)
			}
		}
		if show.Capabilities != nil && !slices.Contains(show.Capabilities, "tools") && e.opts.ToolMode == ToolsAuto {
			c.Tools, c.ToolsFrom = ToolsRetrieve, "Ollama: the model's capabilities do not include tools"
		}
		// The window Ollama serves the model with: a loaded model's context_length (/api/ps), else
		// its num_ctx parameter; the model's own maximum only caps them.
		var ps struct {
			Models []struct {
				Name          string `json:"name"`
				Model         string `json:"model"`
				ContextLength int    `json:"context_length"`
			} `json:"models"`
		}
		if e.probe(ctx, http.MethodGet, root+"/api/ps", nil, &ps) {
			for _, m := range ps.Models {
				if (m.Name == e.opts.Model || m.Model == e.opts.Model) && m.ContextLength > 0 {
					report(m.ContextLength, "Ollama /api/ps context_length")
				}
			}
		}
		if n := numCtx(show.Parameters); n > 0 {
			report(n, "Ollama num_ctx parameter")
		}
		if reported == 0 && configured == 0 {
			report(ollamaDefault, "Ollama's default window (set RESEARCH_MODEL_CONTEXT to OLLAMA_CONTEXT_LENGTH)")
		}
		if maxLen > 0 && reported > maxLen {
			reported, from = maxLen, "Ollama /api/show model_info context_length"
		}
	}

	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.Server == "" && e.probe(ctx, http.MethodGet, root+"/props", nil, &props) && props.Settings.NCtx > 0 {
		c.Server = "llama.cpp"
		report(props.Settings.NCtx, "llama.cpp /props n_ctx")
	}

	switch {
	case reported > 0 && configured > 0 && configured < reported:
		c.Context, c.ContextFrom = configured, "configured (RESEARCH_MODEL_CONTEXT, below the server's "+strconv.Itoa(reported)+")"
	case reported > 0:
		c.Context, c.ContextFrom = reported, from
	case configured > 0:
		c.Context, c.ContextFrom = configured, "configured (RESEARCH_MODEL_CONTEXT)"
	default:
		c.Context, c.ContextFrom = unknownContext, "assumed (the server does not report it; set RESEARCH_MODEL_CONTEXT)"
	}
	return c
}

var reNumCtx = regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`)

// numCtx reads num_ctx from Ollama's parameters text ("num_ctx 8192\nstop ...").
func numCtx(params string) int {
	if m := reNumCtx.FindStringSubmatch(params); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// probe makes one discovery request and decodes a 200 JSON answer into out.
func (e *openaiEngine) probe(ctx context.Context, method, url string, body any, out any) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return false
	}
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := e.http.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 4<<20)).Decode(out); err != nil {
		e.log.Debug("model server probe: answer not understood", "url", url, "err", err)
		return false
	}
	return true
}

// contextLimit reads the window a context-length refusal names ("maximum context length is 4096
// tokens", llama.cpp's n_ctx); 0 when it names none.
func contextLimit(msg string) int {
	for _, re := range reContextLimit {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

var reContextLimit = []*regexp.Regexp{
	regexp.MustCompile(`(?i)maximum context length is (\d+)`),
	regexp.MustCompile(`(?i)n_ctx[ :=]+(\d+)`),
	regexp.MustCompile(`(?i)context (?:window|length|size) (?:is|of) (\d+)`),
}

// reContextError recognises a refusal for a prompt too long for the window, in the words of
// OpenAI, vLLM, llama.cpp, LM Studio and others.
var reContextError = regexp.MustCompile(`(?i)context[ _](length|window|size)|maximum context|exceeds? (the )?(available )?context|too many tokens|prompt is too long|n_ctx|context_length_exceeded`)

// reToolsRefused recognises a server refusing the tools parameter (Ollama: "does not support
// tools"; llama.cpp without --jinja; vLLM without a tool parser).
var reToolsRefused = regexp.MustCompile(`(?i)tool`)

// reFormatRefused recognises a server refusing a response_format.
var reFormatRefused = regexp.MustCompile(`(?i)response_format|json_schema|json_object|structured output|grammar|guided|schema`)

// describeCaps is a one-line account of the capabilities for the timeline.
func describeCaps(c capabilities) string {
	return fmt.Sprintf("Tools: %s (%s). Structured answers: %s. Context window: %d tokens (%s).",
		c.Tools, c.ToolsFrom, formatNames[c.Format], c.Context, c.ContextFrom)
}
