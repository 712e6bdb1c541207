package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/workspace"
)

const apiKey = "sk-test-secret-0123456789"

// chatServer is a scripted OpenAI-compatible chat-completions endpoint: each request is answered
// by the next step of the script (the last step repeats).
type chatServer struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	script   []step
	requests []recorded
}

type step func(w http.ResponseWriter, r *http.Request, body map[string]any)

type recorded struct {
	Auth string
	Body map[string]any
}

func newChatServer(t *testing.T, script ...step) *chatServer {
	t.Helper()
	cs := &chatServer{t: t, script: script}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		cs.mu.Lock()
		n := len(cs.requests)
		cs.requests = append(cs.requests, recorded{Auth: r.Header.Get("Authorization"), Body: body})
		s := cs.script[min(n, len(cs.script)-1)]
		cs.mu.Unlock()
		s(w, r, body)
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func (cs *chatServer) recorded() []recorded {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]recorded(nil), cs.requests...)
}

func completion(message map[string]any, finish string) map[string]any {
	message["role"] = "assistant"
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": message}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	}
}

type call struct{ name, args string }

// toolCalls answers with tool calls (and optional thinking text).
func toolCalls(content string, calls ...call) step {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i+1), "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg := map[string]any{"content": nil, "tool_calls": tcs}
		if content != "" {
			msg["content"] = content
		}
		enginetest.WriteJSON(w, http.StatusOK, completion(msg, "tool_calls"))
	}
}

func answer(content string) step {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		enginetest.WriteJSON(w, http.StatusOK, completion(map[string]any{"content": content}, "stop"))
	}
}

func httpError(status int, message string, headers ...string) step {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		enginetest.WriteJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error", "code": "x"}})
	}
}

// hang answers only when the client gives up.
func hang(w http.ResponseWriter, r *http.Request, _ map[string]any) {
	<-r.Context().Done()
}

func newOpenAI(t *testing.T, cs *chatServer, fetch *http.Client) engine.Engine {
	t.Helper()
	e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", FetchClient: fetch,
		RetryBase: time.Millisecond, Logger: quietLog()})
	require.NoError(t, err)
	return e
}

func runAgent(t *testing.T, e engine.Engine, in engine.Input) (engine.Result, *enginetest.Sink, error) {
	t.Helper()
	if in.Workspace == nil {
		in.Workspace = enginetest.Workspace(t, enginetest.Inputs(t))
	}
	if in.Effort == "" {
		in.Effort = engine.EffortMedium
	}
	if in.Question == "" {
		in.Question = enginetest.Question
	}
	sink := &enginetest.Sink{Repo: in.Workspace}
	res, err := e.Run(context.Background(), in, sink)
	requireNoSecret(t, sink)
	return res, sink, err
}

// quietLog keeps the engine's logs out of the test output.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// requireNoSecret: the provider key appears in no event, ever.
func requireNoSecret(t *testing.T, sink *enginetest.Sink) {
	t.Helper()
	b, err := json.Marshal(sink.Events)
	require.NoError(t, err)
	require.NotContains(t, string(b), apiKey)
	for _, c := range sink.Checkpoints {
		require.NotContains(t, c.Message, apiKey)
	}
}

// finalReport is a model's report that cites nothing (no claims): valid whatever the run read.
const finalReport = `{"title": "Heat pumps", "summary": [], "sections": [], "open_questions": ["What do heat pumps cost to install?"]}`

type claimSpec struct{ text, origin, quote string }

// reportFrom answers with a report whose claims cite the sources stored under the given origins:
// ids are looked up in the workspace when the request arrives, as the model would read them.
func reportFrom(t *testing.T, repo *workspace.Repo, title string, claims ...claimSpec) step {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		srcs, err := sources.Open(repo, nil)
		require.NoError(t, err)
		var cs []any
		for _, c := range claims {
			id := c.origin // an origin that was never read stays as written: an unknown source
			if st, ok := srcs.Lookup(c.origin); ok {
				id = st.ID
			}
			cs = append(cs, map[string]any{"text": c.text, "citations": []any{map[string]any{"source": id, "quote": c.quote}}})
		}
		doc := map[string]any{"title": title, "summary": cs, "sections": []any{}, "open_questions": []any{"Running costs by region."}}
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		enginetest.WriteJSON(w, http.StatusOK, completion(map[string]any{"content": string(b)}, "stop"))
	}
}

// searxServer is a scripted SearXNG instance whose results point at web.
func searxServer(t *testing.T, results ...map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "json", r.URL.Query().Get("format"))
		enginetest.WriteJSON(w, http.StatusOK, map[string]any{"query": r.URL.Query().Get("q"), "results": results})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAIAgentLoop(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Sales 2023</title></head><body><script>nope()</script><p>Heat pump sales doubled in 2023.</p></body></html>`)
	}))
	t.Cleanup(web.Close)
	searx := searxServer(t, map[string]any{"url": web.URL + "/sales", "title": "Sales", "content": "Heat pump sales doubled"})
	repo := enginetest.Workspace(t, enginetest.Inputs(t))
	cs := newChatServer(t,
		toolCalls("Let me look at the files.",
			call{"search_files", `{"query":"heat pump installation cost","limit":2}`},
			call{"read_file", `{"path":"input_files/notes.md","start_line":1,"end_line":2}`}),
		toolCalls("",
			call{"write_file", `{"path":"data/costs.csv","content":"item,eur\ninstall,9000\n"}`},
			call{"web_search", `{"query":"heat pump sales 2023"}`},
			call{"fetch_url", `{"url":"` + web.URL + `/sales"}`}),
		answer("Grants cover part of the cost; sales doubled."),
		reportFrom(t, repo, "Heat pumps",
			claimSpec{"Grants pay up to 7,500 euros.", "input_files/notes.md", "Government grants of up to 7,500 euros cover part of the installation cost."},
			claimSpec{"Sales doubled in 2023.", web.URL + "/sales", "Heat pump sales doubled in 2023."}),
	)
	searcher, err := sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchSearXNG, URL: searx.URL})
	require.NoError(t, err)
	e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", FetchClient: web.Client(), Searcher: searcher})
	require.NoError(t, err)
	res, sink, err := runAgent(t, e, engine.Input{Workspace: repo, Now: enginetest.Clock})
	require.NoError(t, err)
	require.Nil(t, res.StructuredOutput)

	// The report is rendered from the model's claims: each quote as a block quote attributed to its
	// stored source, which the verifier accepts.
	got, err := repo.ReadFile("", engine.ReportPath)
	require.NoError(t, err)
	require.Equal(t, res.Report, string(got))
	require.Contains(t, res.Report, "# Heat pumps\n")
	require.Contains(t, res.Report, "Grants pay up to 7,500 euros. [1]\n\n> Government grants of up to 7,500 euros cover part of the installation cost.\n>\n> — `input_files/notes.md` [1]\n")
	require.Contains(t, res.Report, "Sales doubled in 2023. [2]\n\n> Heat pump sales doubled in 2023.\n>\n> — Sales 2023, <"+web.URL+"/sales> [2]\n")
	require.Contains(t, res.Report, "## Open questions\n\n- Running costs by region.\n")
	require.Contains(t, res.Report, "14 May 2026")
	require.Regexp(t, "2\\. Sales 2023, <"+web.URL+"/sales> — retrieved 2026-05-14 09:30 UTC; stored copy `sources/S\\d+-127-0-0-1-\\d+-sales.txt`", res.Report)
	v, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Equal(t, 2, v.Total)
	require.Equal(t, 2, v.Verified)

	// Every source read is stored, with its retrieval time; the search results are not sources.
	srcs, err := sources.Open(repo, nil)
	require.NoError(t, err)
	var origins []string
	for _, st := range srcs.All() {
		origins = append(origins, st.Origin)
		require.Equal(t, enginetest.Clock(), st.RetrievedAt)
	}
	require.Contains(t, origins, "input_files/notes.md")
	require.Contains(t, origins, web.URL+"/sales")
	page, _ := srcs.Lookup(web.URL + "/sales")
	require.Equal(t, "Sales 2023", page.Title)
	text, err := srcs.Text(page)
	require.NoError(t, err)
	require.Contains(t, text, "Heat pump sales doubled in 2023.")
	require.NotContains(t, text, "nope()")
	csv, err := repo.ReadFile("", "data/costs.csv")
	require.NoError(t, err)
	require.Equal(t, "item,eur\ninstall,9000\n", string(csv))

	// Checkpoints: the agent's file, the drafted report, the final.
	var types []string
	for _, c := range sink.Checkpoints {
		types = append(types, c.Type)
	}
	require.Equal(t, []string{"progress", "progress", "final"}, types)

	// Every step is an event.
	var calls []string
	for _, c := range sink.OfKind(engine.KindToolCall) {
		calls = append(calls, c.Title)
	}
	require.Equal(t, []string{"search_files", "read_file", "write_file", "web_search", "fetch_url", "write_report"}, calls)
	results := sink.OfKind(engine.KindToolResult)
	require.Regexp(t, `^\[S1 · input_files/notes.md, lines 1–3\]\nCustomer notes`, results[0].Content)
	require.Contains(t, results[1].Content, "] input_files/notes.md, lines 1–2 of 4\n1: Customer notes")
	require.Contains(t, results[2].Content, "wrote 22 bytes to data/costs.csv")
	require.Contains(t, results[3].Content, "1. Sales\n   "+web.URL+"/sales\n   Heat pump sales doubled")
	require.Contains(t, results[4].Content, "Heat pump sales doubled in 2023.")
	require.Contains(t, results[4].Content, "retrieved 2026-05-14 09:30 UTC")
	for _, r := range results[:5] {
		require.Equal(t, false, r.Data["error"], r.Content)
	}
	require.Len(t, sink.OfKind(engine.KindFinalAnswer), 1)
	require.Equal(t, res.Report, sink.OfKind(engine.KindFinalAnswer)[0].Content)

	// The protocol: auth, model, budget, tools, today's date, and tool answers tied to their calls.
	reqs := cs.recorded()
	require.Len(t, reqs, 4)
	for _, r := range reqs {
		require.Equal(t, "Bearer "+apiKey, r.Auth)
		require.Equal(t, "test-model", r.Body["model"])
	}
	for _, r := range reqs[:3] {
		require.EqualValues(t, 4096, r.Body["max_completion_tokens"])
		require.Nil(t, r.Body["response_format"])
	}
	require.Equal(t, []string{"search_files", "read_file", "write_file", "web_search", "fetch_url"}, toolNames(reqs[0].Body))
	system := systemMessage(t, reqs[0].Body)
	require.Contains(t, system, "Today's date is Thursday, 14 May 2026.")
	msgs := reqs[1].Body["messages"].([]any)
	require.Len(t, msgs, 5) // system, user, assistant with calls, two tool answers
	require.Contains(t, msgs[1].(map[string]any)["content"], "input_files/notes.md")
	tool := msgs[3].(map[string]any)
	require.Equal(t, "tool", tool["role"])
	require.Equal(t, "call_1", tool["tool_call_id"])
	// The report is asked for as JSON, without tools, naming the sources read.
	compose := reqs[3].Body
	require.Nil(t, compose["tools"])
	require.Equal(t, "research_report", compose["response_format"].(map[string]any)["json_schema"].(map[string]any)["name"])
	cm := compose["messages"].([]any)
	require.Contains(t, cm[len(cm)-1].(map[string]any)["content"], ": "+web.URL+"/sales (Sales 2023)")
}

func TestOpenAINoFetchClientNoFetchTool(t *testing.T) {
	t.Parallel()
	cs := newChatServer(t, toolCalls("", call{"fetch_url", `{"url":"http://127.0.0.1:1/"}`}, call{"web_search", `{"query":"x"}`}), answer(finalReport))
	_, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{})
	require.NoError(t, err)
	require.NotContains(t, toolNames(cs.recorded()[0].Body), "fetch_url")
	require.NotContains(t, toolNames(cs.recorded()[0].Body), "web_search")
	res := sink.OfKind(engine.KindToolResult)
	require.Equal(t, "error: fetch_url is not available", res[0].Content)
	require.Equal(t, "error: web_search is not available", res[1].Content)
}

func TestOpenAIToolErrorsGoBackToTheModel(t *testing.T) {
	t.Parallel()
	cs := newChatServer(t,
		toolCalls("",
			call{"write_file", `{"path":"../escape.txt","content":"x"}`},
			call{"write_file", `{"path":"input_files/notes.md","content":"overwritten"}`},
			call{"write_file", `{"path":"sources/S1-x.txt","content":"forged evidence"}`},
			call{"write_file", `{"path":".git/config","content":"x"}`},
			call{"read_file", `{"path":"/etc/passwd"}`},
			call{"no_such_tool", `{}`},
			call{"search_files", `not json`},
			call{"fetch_url", `{"url":"file:///etc/passwd"}`},
		),
		answer(finalReport),
	)
	_, sink, err := runAgent(t, newOpenAI(t, cs, http.DefaultClient), engine.Input{})
	require.NoError(t, err)
	var got []string
	for _, r := range sink.OfKind(engine.KindToolResult) {
		if r.Title == "write_report" || r.Data["by"] == "service" {
			continue // not the model's calls: every one of them failed, so the service read for it
		}
		require.Equal(t, true, r.Data["error"])
		got = append(got, r.Content)
	}
	require.Equal(t, []string{
		"error: invalid path: use a relative slash-separated path inside the workspace",
		"error: input_files/ is read-only",
		"error: sources/ is read-only",
		"error: invalid path: use a relative slash-separated path inside the workspace",
		`error: no provided file "/etc/passwd"`,
		`error: unknown tool "no_such_tool"`,
		"error: arguments are not a JSON object: no JSON object found",
		"error: only absolute http(s) URLs can be fetched",
	}, got)
	notes, err := sink.Repo.ReadFile("", "input_files/notes.md")
	require.NoError(t, err)
	require.NotContains(t, string(notes), "overwritten")
	// The model saw every error as a tool answer.
	msgs := cs.recorded()[1].Body["messages"].([]any)
	require.Len(t, msgs, 3+8)
}

func TestOpenAIProviderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   []step
		code     string
		contains string
		requests int           // exactly; 0: at least minReqs
		minReqs  int           // with a run deadline: retried until it
		deadline time.Duration // the run's limit (0: none)
	}{
		{name: "unauthorized, key echoed by the provider", script: []step{httpError(401, "Incorrect API key provided: "+apiKey)},
			code: engine.CodeProviderError, contains: "the model server answered HTTP 401: Incorrect API key provided: [REDACTED]", requests: 1},
		{name: "bad request", script: []step{httpError(400, "model not found")}, code: engine.CodeProviderError, contains: "HTTP 400: model not found", requests: 1},
		{name: "server error retried inside the run's time, then given up", script: []step{httpError(500, "boom", "Retry-After-Ms", "1")},
			code: engine.CodeProviderError, contains: "HTTP 500: boom, still after", minReqs: 5, deadline: 1500 * time.Millisecond},
		{name: "server error retried then success", script: []step{httpError(503, "busy", "Retry-After-Ms", "1"), answer(finalReport)}, requests: 3},
		{name: "rate limited", script: []step{httpError(429, "slow down", "Retry-After-Ms", "1")}, code: engine.CodeProviderError, contains: "HTTP 429: slow down",
			minReqs: 5, deadline: 1500 * time.Millisecond},
		{name: "not JSON", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "{not json")
		}}, code: engine.CodeProviderError, contains: "could not be read as a chat completion", requests: 1},
		{name: "an HTML page instead of JSON", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Bad gateway</body></html>")
		}}, code: engine.CodeProviderError, contains: `answered HTTP 200 with text/html instead of a chat completion: "<html><body>Bad gateway`, requests: 1},
		{name: "error body in plain text", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			http.Error(w, "upstream model crashed", http.StatusBadRequest)
		}}, code: engine.CodeProviderError, contains: "the model server answered HTTP 400: upstream model crashed", requests: 1},
		{name: "an error reported with status 200", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			enginetest.WriteJSON(w, 200, map[string]any{"error": map[string]any{"message": "model 'x' not found, try pulling it first"}})
		}}, code: engine.CodeProviderError, contains: "the model server answered HTTP 200: model 'x' not found", requests: 1},
		{name: "no choices", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			enginetest.WriteJSON(w, 200, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{}})
		}}, code: engine.CodeProviderError, contains: "no choices", requests: 1},
		{name: "report never in JSON", script: []step{answer("Heat pumps are great.")}, code: engine.CodeProviderError, contains: "did not return its report as JSON", requests: 3},
		{name: "refusal", script: []step{func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			enginetest.WriteJSON(w, 200, completion(map[string]any{"content": nil, "refusal": "I can't help with that"}, "stop"))
		}}, code: engine.CodeProviderError, contains: "refused: I can't help with that", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := newChatServer(t, tt.script...)
			repo := enginetest.Workspace(t, enginetest.Inputs(t))
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			sink := &enginetest.Sink{Repo: repo}
			_, err := newOpenAI(t, cs, nil).Run(ctx, engine.Input{Question: enginetest.Question, Effort: engine.EffortMedium, Workspace: repo}, sink)
			requireNoSecret(t, sink)
			if tt.requests > 0 {
				require.Len(t, cs.recorded(), tt.requests)
			} else {
				require.GreaterOrEqual(t, len(cs.recorded()), tt.minReqs)
			}
			if tt.code == "" {
				require.NoError(t, err)
				return
			}
			var ee *engine.Error
			require.ErrorAs(t, err, &ee)
			require.Equal(t, tt.code, ee.Code)
			require.Contains(t, ee.Message, tt.contains)
			require.NotContains(t, err.Error(), apiKey)
			require.Empty(t, sink.Checkpoints)
		})
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	t.Parallel()
	cs := newChatServer(t, answer(finalReport))
	url := cs.srv.URL
	cs.srv.Close()
	e, err := llm.New(llm.Options{BaseURL: url + "/v1", APIKey: apiKey, Model: "m"})
	require.NoError(t, err)
	_, _, err = runAgent(t, e, engine.Input{})
	var ee *engine.Error
	require.ErrorAs(t, err, &ee)
	require.Equal(t, engine.CodeProviderError, ee.Code)
	require.Contains(t, ee.Message, "could not be reached")
}

func TestOpenAITimeouts(t *testing.T) {
	t.Parallel()
	t.Run("run deadline", func(t *testing.T) {
		t.Parallel()
		cs := newChatServer(t, hang)
		repo := enginetest.Workspace(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := newOpenAI(t, cs, nil).Run(ctx, engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: repo}, &enginetest.Sink{Repo: repo})
		var ee *engine.Error
		require.ErrorAs(t, err, &ee)
		require.Equal(t, engine.CodeTimeout, ee.Code)
	})
	t.Run("provider client timeout", func(t *testing.T) {
		t.Parallel()
		cs := newChatServer(t, hang)
		e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "m",
			HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}})
		require.NoError(t, err)
		_, _, err = runAgent(t, e, engine.Input{})
		var ee *engine.Error
		require.ErrorAs(t, err, &ee)
		require.Equal(t, engine.CodeTimeout, ee.Code)
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		cs := newChatServer(t, hang)
		repo := enginetest.Workspace(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for len(cs.recorded()) == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
		}()
		_, err := newOpenAI(t, cs, nil).Run(ctx, engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: repo}, &enginetest.Sink{Repo: repo})
		require.ErrorIs(t, err, context.Canceled)
		var ee *engine.Error
		require.False(t, errors.As(err, &ee))
	})
}

func TestOpenAISecretsRedacted(t *testing.T) {
	t.Parallel()
	cs := newChatServer(t,
		toolCalls("My key is "+apiKey, call{"write_file", `{"path":"leak.txt","content":"` + apiKey + `"}`}),
		answer(finalReport),
	)
	_, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{}) // runAgent asserts no event holds the key
	require.NoError(t, err)
	require.Contains(t, sink.OfKind(engine.KindThinking)[0].Content, "[REDACTED]")
	require.Contains(t, sink.OfKind(engine.KindToolCall)[0].Content, "[REDACTED]")
	// The key is never sent anywhere but the Authorization header.
	for _, r := range cs.recorded()[:1] {
		b, _ := json.Marshal(r.Body)
		require.NotContains(t, string(b), apiKey)
	}
}

func TestOpenAIContinuationAndBuild(t *testing.T) {
	t.Parallel()
	prior := "# Heat pumps\n\n## Summary\n\nEarlier findings [1].\n\n## Sources\n\n1. `input_files/notes.md` — stored copy `sources/S1-input-files-notes-md.txt`\n"
	repo := enginetest.Workspace(t, enginetest.Inputs(t))
	cs := newChatServer(t,
		toolCalls("", call{"read_file", `{"path":"input_files/survey.csv"}`}),
		answer("The survey has regional counts."),
		reportFrom(t, repo, "More", claimSpec{"The south has 3,400 households with a heat pump.", "input_files/survey.csv", "south,3400,28"}))
	res, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{Workspace: repo, Effort: engine.EffortBuild, Continuation: true, PriorReport: prior, Now: enginetest.Clock})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Report, prior+"\n## Continuation\n\n"), res.Report)
	cont := strings.TrimPrefix(res.Report, prior)
	require.Contains(t, cont, "### Summary\n\nThe south has 3,400 households with a heat pump. [2]\n\n> south,3400,28\n>\n> — `input_files/survey.csv` [2]\n")
	require.Contains(t, cont, "### Continuation sources\n\n2. `input_files/survey.csv` — stored copy `sources/S1-input-files-survey-csv.txt`\n")
	require.Equal(t, workspace.CheckpointContinuation, sink.Checkpoints[len(sink.Checkpoints)-1].Type)
	system := cs.recorded()[0].Body["messages"].([]any)[0].(map[string]any)["content"].(string)
	require.Contains(t, system, "Earlier findings [1].")
	site, err := sink.Repo.ReadFile("", "site/index.html")
	require.NoError(t, err)
	require.Contains(t, string(site), "The south has 3,400 households")
	require.EqualValues(t, 16384, cs.recorded()[0].Body["max_completion_tokens"])
}

func TestNewOpenAIValidation(t *testing.T) {
	t.Parallel()
	_, err := llm.New(llm.Options{BaseURL: "http://127.0.0.1/v1"})
	require.Error(t, err)
	for _, u := range []string{"ftp://x/v1", "not a url", "http://"} {
		_, err = llm.New(llm.Options{BaseURL: u, Model: "m"})
		require.Error(t, err, u)
	}
	e, err := llm.New(llm.Options{Model: "m"})
	require.NoError(t, err)
	require.Equal(t, "openai", e.Name())
	require.Equal(t, "extractive", extractive.New(extractive.Options{}).Name()) // the former name, kept as an alias
}

func TestOpenAIFetchLimits(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/binary":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0, 0})
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, strings.Repeat("word ", 1<<20))
		}
	}))
	t.Cleanup(web.Close)
	cs := newChatServer(t,
		toolCalls("",
			call{"fetch_url", `{"url":"` + web.URL + `/missing"}`},
			call{"fetch_url", `{"url":"` + web.URL + `/binary"}`},
			call{"fetch_url", `{"url":"` + web.URL + `/big"}`}),
		answer(finalReport))
	_, sink, err := runAgent(t, newOpenAI(t, cs, web.Client()), engine.Input{})
	require.NoError(t, err)
	res := sink.OfKind(engine.KindToolResult)
	require.Equal(t, "error: HTTP 404", res[0].Content)
	require.Equal(t, `error: unsupported content type "image/png"`, res[1].Content)
	require.Equal(t, false, res[2].Data["error"])
	// What went back to the model is capped.
	msgs := cs.recorded()[1].Body["messages"].([]any)
	big := msgs[len(msgs)-1].(map[string]any)["content"].(string)
	require.LessOrEqual(t, len([]rune(big)), 20_001)
}
