package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// scriptedModel is an OpenAI-compatible chat-completions endpoint on loopback: request n gets
// replies[n] (the last repeats); every request body is kept.
type scriptedModel struct {
	mu      sync.Mutex
	replies []map[string]any // assistant messages
	bodies  []map[string]any
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	msg := m.replies[min(len(m.bodies), len(m.replies)-1)]
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	msg["role"] = "assistant"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func (m *scriptedModel) requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.bodies...)
}

// TestResearchAsExpertOpenAI: through the API, the openai engine receives the expert's system
// prompt and skill text in its system message and the granted MCP tool in its tools; the model
// calls the tool on a real MCP server, and the job detail shows the required tool succeeded.
func TestResearchAsExpertOpenAI(t *testing.T) {
	t.Parallel()
	kb := mcp.NewServer(&mcp.Implementation{Name: "kb", Version: "1"}, nil)
	mcp.AddTool(kb, &mcp.Tool{Name: "lookup", Description: "Look a topic up in the fleet register."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Topic string `json:"topic"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "register: 42 battery ferries (" + in.Topic + ")"}}}, nil, nil
		})
	kbSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return kb }, nil))
	t.Cleanup(kbSrv.Close)
	catalog, err := skill.Catalog()
	require.NoError(t, err)
	skillText := strings.TrimSpace(catalog["fact-checking"].Content)
	require.NotEmpty(t, skillText)

	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			model := &scriptedModel{replies: []map[string]any{
				{"content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "kb__lookup", "arguments": `{"topic":"ferries"}`}}}},
				{"content": "The register lists 42 battery ferries."},
				// The report cites the tool's answer, stored as source S1.
				{"content": `{"title": "Ferries", "sections": [], "open_questions": [], "summary": [{"text": "The register lists 42 battery ferries.",
					"citations": [{"source": "S1", "quote": "register: 42 battery ferries"}]}]}`},
			}}
			modelSrv := httptest.NewServer(model)
			t.Cleanup(modelSrv.Close)
			eng, err := llm.New(llm.Options{BaseURL: modelSrv.URL + "/v1", APIKey: "test-key", Model: "test-model"})
			require.NoError(t, err)
			e := newExpertResearchEnv(t, d, eng, []mcptool.ServerConfig{{Name: "kb", Transport: mcptool.TransportHTTP, URL: kbSrv.URL}})
			owner := e.NewAccount(t, store.TierPro, false, 100)
			id, _ := e.createExpert(t, owner.Key, map[string]any{
				"name": "Fleet Register Analyst", "system_prompt": "You are FJORD-EXPERT-9. Always consult the fleet register first.",
				"skill_names": []string{"fact-checking"}, "mcp_tool_names": []string{"kb.lookup"}, "required_tool_calls": []string{"kb.lookup"},
			})

			job := e.mustCreate(t, owner.Key, map[string]any{"question": "How many battery ferries are registered?", "expert_id": id, "effort": "low"})
			done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Equal(t, gen.RequiredToolCallsOutcome{Required: []string{"kb.lookup"}, Succeeded: []string{"kb.lookup"}, Missing: []string{}},
				done.RequiredToolCalls.MustGet())
			require.Equal(t, 1, done.Expert.MustGet().Version.MustGet())
			require.Equal(t, gen.CitationCounts{Total: 1, Verified: 1}, done.Citations.MustGet())

			reqs := model.requests()
			require.GreaterOrEqual(t, len(reqs), 2)
			msgs, _ := reqs[0]["messages"].([]any)
			require.NotEmpty(t, msgs)
			sys, _ := msgs[0].(map[string]any)["content"].(string)
			require.Contains(t, sys, "You are FJORD-EXPERT-9. Always consult the fleet register first.")
			require.Contains(t, sys, skillText)
			var fns []string
			tools, _ := reqs[0]["tools"].([]any)
			for _, x := range tools {
				fn, _ := x.(map[string]any)["function"].(map[string]any)
				name, _ := fn["name"].(string)
				fns = append(fns, name)
			}
			require.Contains(t, fns, "kb__lookup")
			// The tool's result went back to the model.
			last, _ := json.Marshal(reqs[1]["messages"])
			require.Contains(t, string(last), "register: 42 battery ferries (ferries)")

			events := e.timeline(t, owner.Key, job.JobId.String())
			require.NotNil(t, eventTitled(events, "Required tool calls met"))
			ev := eventTitled(events, "Expert")
			require.NotNil(t, ev)
			require.Contains(t, ev.Content, "kb.lookup")
		})
	}
}
