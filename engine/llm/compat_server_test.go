package llm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchd/researchd/engine/enginetest"
)

// localModel is a scripted OpenAI-compatible server that behaves like a small local model on
// Ollama, llama.cpp's server or vLLM: it answers from what it is sent (it calls tools while it has
// read nothing, then writes notes; it writes the report, the structured output and its basis from
// the evidence in its prompt, quoting only what it was given) and reproduces one server's quirks.
type localModel struct {
	t *testing.T
	q quirks

	mu       sync.Mutex
	requests []map[string]any
	refused  map[string]int // why → requests refused
}

// quirks are the behaviours of one row of TestLocalModels.
type quirks struct {
	noTools      string // refuse any request with tools, with this message (HTTP 400)
	textCalls    bool   // write tool calls as JSON text in the content
	context      int    // refuse prompts (and completions) over this many tokens, in vLLM's words
	reportModels bool   // say the context at /v1/models (vLLM's max_model_len)
	ollama       bool   // answer Ollama's /api/version, /api/show (no tools capability) and /api/ps
	props        int    // answer llama.cpp's /props with this n_ctx
	think        bool   // wrap every answer in <think>…</think> and prose, JSON in a fence
	noJSONSchema bool   // refuse response_format json_schema (json_object works)
	stream       bool   // answer with server-sent events although no stream was asked
	busy429      int    // refuse the first n requests with 429 and Retry-After: 1
	burst503     int    // refuse the first n requests with 503
	slow         time.Duration
	stall        bool // never answer
	invent       bool // add a claim and a basis citation whose quote is in no source
}

// The facts the model reports, each with its source and the quote it copies.
const (
	grantQuote   = "Government grants of up to 7,500 euros cover part of the installation cost."
	costQuote    = "A typical air-source heat pump costs 9,000 euros to install."
	inventedText = "Heat pumps last fifty years on average."
)

func newLocalModel(t *testing.T, q quirks) (*localModel, *httptest.Server) {
	t.Helper()
	m := &localModel{t: t, q: q, refused: map[string]int{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

// seen returns the chat requests so far and how many were refused, by reason.
func (m *localModel) seen() ([]map[string]any, map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	refused := map[string]int{}
	for k, v := range m.refused {
		refused[k] = v
	}
	return append([]map[string]any(nil), m.requests...), refused
}

func (m *localModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := m.q
	switch {
	case r.URL.Path == "/v1/models" && q.reportModels:
		enginetest.WriteJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "small-model", "max_model_len": q.context}}})
		return
	case r.URL.Path == "/api/version" && q.ollama:
		enginetest.WriteJSON(w, 200, map[string]any{"version": "0.6.5"})
		return
	case r.URL.Path == "/api/show" && q.ollama:
		enginetest.WriteJSON(w, 200, map[string]any{"model_info": map[string]any{"llama.context_length": 131072.0},
			"capabilities": []any{"completion"}, "parameters": "num_ctx                        8192\nstop \"<|eot_id|>\""})
		return
	case r.URL.Path == "/api/ps" && q.ollama:
		enginetest.WriteJSON(w, 200, map[string]any{"models": []any{}})
		return
	case r.URL.Path == "/props" && q.props > 0:
		enginetest.WriteJSON(w, 200, map[string]any{"default_generation_settings": map[string]any{"n_ctx": q.props}, "total_slots": 1})
		return
	case r.URL.Path != "/v1/chat/completions":
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, body)
	m.mu.Unlock()
	if q.slow > 0 {
		time.Sleep(q.slow)
	}
	if q.stall {
		<-r.Context().Done()
		return
	}
	refuse := func(why string, status int, msg string, headers ...string) {
		m.mu.Lock()
		m.refused[why]++
		m.mu.Unlock()
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		enginetest.WriteJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": status}})
	}
	rf, _ := body["response_format"].(map[string]any)
	switch {
	case n < q.busy429:
		refuse("429", 429, "Rate limit reached: 1 request per second", "Retry-After", "1")
	case n < q.burst503:
		refuse("503", 503, "The server is overloaded")
	case q.noTools != "" && body["tools"] != nil:
		refuse("tools", 400, q.noTools)
	case q.noJSONSchema && rf["type"] == "json_schema":
		refuse("json_schema", 400, "response_format type json_schema is not supported by this server")
	case q.context > 0 && promptTokens(body) > q.context:
		refuse("context", 400, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens. Please reduce the length of the messages or completion.", q.context, promptTokens(body)))
	default:
		content, calls := m.answer(body)
		if q.stream {
			writeSSE(w, content, calls)
			return
		}
		msg := map[string]any{"content": content}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		enginetest.WriteJSON(w, 200, completion(msg, "stop"))
	}
}

// promptTokens counts like a real tokenizer roughly does (four bytes a token), plus the completion
// asked for.
func promptTokens(body map[string]any) int {
	b, _ := json.Marshal(body["messages"])
	t, _ := json.Marshal(body["tools"])
	want, _ := body["max_completion_tokens"].(float64)
	return (len(b)+len(t))/4 + int(want)
}

var reEvidenceHeader = regexp.MustCompile(`=== (S\d+): (\S+)`)

// answer is the model: what it says to one request.
func (m *localModel) answer(body map[string]any) (string, []any) {
	var text strings.Builder
	read := false
	msgs, _ := body["messages"].([]any)
	for _, x := range msgs {
		mm, _ := x.(map[string]any)
		c, _ := mm["content"].(string)
		text.WriteString(c)
		text.WriteString("\n")
		if mm["role"] == "tool" || (mm["role"] == "user" && strings.Contains(c, "<tool_response")) {
			read = true
		}
	}
	all := text.String()
	var out any
	switch {
	case strings.Contains(all, "For each top-level field"):
		out = m.basis(all)
	case strings.Contains(all, "Now return the structured output"):
		out = m.structured()
	case strings.Contains(all, "Write the final report now"):
		out = m.report(all)
	case read || (body["tools"] == nil && !strings.Contains(all, "<tool_call>")):
		return m.wrap("Grants cover part of the cost; a typical installation costs 9,000 euros."), nil
	default:
		return m.callTools(body)
	}
	b, err := json.Marshal(out)
	if err != nil {
		m.t.Errorf("encode answer: %v", err)
	}
	return m.wrap(string(b)), nil
}

// callTools reads the handbook and searches the files: natively, or as text.
func (m *localModel) callTools(body map[string]any) (string, []any) {
	calls := [][2]string{{"read_file", `{"path": "input_files/handbook.md"}`}, {"search_files", `{"query": "heat pump grants installation cost", "limit": 3}`}}
	if m.q.textCalls || body["tools"] == nil {
		var b strings.Builder
		b.WriteString("I will look at the files first.\n")
		for _, c := range calls {
			if body["tools"] == nil {
				fmt.Fprintf(&b, "<tool_call>{\"name\": %q, \"arguments\": %s}</tool_call>\n", c[0], c[1])
			} else {
				fmt.Fprintf(&b, "```json\n{\"name\": %q, \"arguments\": %s}\n```\n", c[0], c[1])
			}
		}
		return m.wrap(b.String()), nil
	}
	var tcs []any
	for i, c := range calls {
		tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i+1), "type": "function", "function": map[string]any{"name": c[0], "arguments": c[1]}})
	}
	return "", tcs
}

// wrap dresses an answer the way reasoning models do.
func (m *localModel) wrap(s string) string {
	if !m.q.think {
		return s
	}
	if strings.HasPrefix(s, "{") {
		s = "Sure! Here is the JSON you asked for:\n```json\n" + s + "\n```\nLet me know if you need anything else."
	}
	return "<think>The user wants {\"draft\": true}. Let me think about the sources first.</think>\n" + s
}

// ids maps the origins of the evidence in the prompt to their source ids.
func ids(prompt string) map[string]string {
	out := map[string]string{}
	for _, m := range reEvidenceHeader.FindAllStringSubmatch(prompt, -1) {
		out[m[2]] = m[1]
	}
	return out
}

// cite is a citation of origin with quote, made only when the quote was in the prompt: the model
// copies what it was given.
func cite(prompt, origin, quote string) []any {
	id, ok := ids(prompt)[origin]
	if !ok || !strings.Contains(prompt, quote) {
		return nil
	}
	return []any{map[string]any{"source": id, "quote": quote}}
}

func (m *localModel) report(prompt string) map[string]any {
	var claims []any
	add := func(text string, cs []any) {
		if cs != nil {
			claims = append(claims, map[string]any{"text": text, "citations": cs})
		}
	}
	add("Grants pay up to 7,500 euros of the installation.", cite(prompt, "input_files/notes.md", grantQuote))
	add("A typical installation costs 9,000 euros.", cite(prompt, "input_files/handbook.md", costQuote))
	if m.q.invent {
		if id, ok := ids(prompt)["input_files/notes.md"]; ok {
			add("Heat pumps last 50 years.", []any{map[string]any{"source": id, "quote": inventedText}})
		}
	}
	return map[string]any{"title": "Heat pump costs", "summary": claims, "sections": []any{}, "open_questions": []any{"How solar power changes running costs."}}
}

func (m *localModel) structured() map[string]any {
	out := map[string]any{"install_cost_eur": 9000, "max_grant_eur": 7500, "lifetime_years": nil}
	if m.q.invent {
		out["lifetime_years"] = 50
	}
	return out
}

func (m *localModel) basis(prompt string) map[string]any {
	field := func(cs []any) map[string]any {
		if cs == nil {
			return map[string]any{"citations": []any{}, "confidence": "low"}
		}
		return map[string]any{"citations": cs, "confidence": "high"}
	}
	out := map[string]any{
		"install_cost_eur": field(cite(prompt, "input_files/handbook.md", costQuote)),
		"max_grant_eur":    field(cite(prompt, "input_files/notes.md", grantQuote)),
		"lifetime_years":   field(nil),
	}
	if id, ok := ids(prompt)["input_files/notes.md"]; ok && m.q.invent {
		out["lifetime_years"] = field([]any{map[string]any{"source": id, "quote": inventedText}})
	}
	return out
}

// writeSSE streams an answer in chunks, as a server does that streams whatever was asked.
func writeSSE(w http.ResponseWriter, content string, calls []any) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000, "model": "small-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for len(content) > 0 {
		n := min(len(content), 17)
		chunk(map[string]any{"content": content[:n]}, nil)
		content = content[n:]
	}
	for i, c := range calls {
		fn := c.(map[string]any)["function"].(map[string]any)
		args := fn["arguments"].(string)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i+1), "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": args[:len(args)/2]}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[len(args)/2:]}}}}, nil)
	}
	chunk(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}
