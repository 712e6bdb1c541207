package llm_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/mcptool"
)

// mcpRegistry serves a real MCP server ("sec": echo and fail) over streamable HTTP on loopback and
// returns the registry that reaches it, with the engine's view of the granted tools.
func mcpRegistry(t *testing.T) (*mcptool.Registry, []engine.GrantedTool) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sec", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("upstream closed")
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	reg := mcptool.New(mcptool.Config{
		Servers: []mcptool.ServerConfig{{Name: "sec", Transport: mcptool.TransportHTTP, URL: ts.URL}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	found := reg.Lookup(context.Background(), []string{"sec.echo", "sec.fail"})
	require.Len(t, found, 2)
	var granted []engine.GrantedTool
	for _, n := range []string{"sec.echo", "sec.fail"} {
		granted = append(granted, engine.GrantedTool{Name: n, Description: found[n].Description, InputSchema: found[n].InputSchema})
	}
	return reg, granted
}

func TestOpenAIGrantedMCPTools(t *testing.T) {
	t.Parallel()
	reg, granted := mcpRegistry(t)
	cs := newChatServer(t,
		toolCalls("", call{"sec__echo", `{"text":"hi"}`}, call{"sec__fail", `{}`}, call{"search_files", `{"query":"heat pump"}`}),
		answer(finalReport))
	res, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{
		Tools: granted, ToolCaller: reg, RequiredTools: []string{"sec.echo", "sec.fail", "search_files", "fetch_url"},
	})
	require.NoError(t, err)
	require.Equal(t, &engine.RequiredToolsOutcome{
		Required:  []string{"sec.echo", "sec.fail", "search_files", "fetch_url"},
		Succeeded: []string{"sec.echo", "search_files"},
		Missing:   []string{"sec.fail", "fetch_url"},
	}, res.RequiredTools)

	// The model was offered the granted tools as functions, with the servers' schemas, and told
	// which tools are required.
	reqs := cs.recorded()
	offered := map[string]map[string]any{}
	for _, tool := range reqs[0].Body["tools"].([]any) {
		fn := tool.(map[string]any)["function"].(map[string]any)
		offered[fn["name"].(string)] = fn
	}
	require.Contains(t, offered, "search_files")
	require.Equal(t, "Echo the text back.", offered["sec__echo"]["description"])
	require.Equal(t, "object", offered["sec__echo"]["parameters"].(map[string]any)["type"])
	require.Contains(t, offered["sec__echo"]["parameters"].(map[string]any)["properties"], "text")
	require.Contains(t, offered, "sec__fail")
	system := reqs[0].Body["messages"].([]any)[0].(map[string]any)["content"]
	require.Contains(t, system, "sec__echo, sec__fail, search_files, fetch_url")

	// The results went back to the model: the tool's text, and its error report as an error.
	toolMsgs := map[string]string{}
	for _, m := range reqs[1].Body["messages"].([]any) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			toolMsgs[mm["tool_call_id"].(string)] = mm["content"].(string)
		}
	}
	// A tool's answer is a stored source the report can cite.
	require.Equal(t, "[S1] tool:sec.echo#call_1\n\necho: hi", toolMsgs["call_1"])
	require.Contains(t, toolMsgs["call_2"], "error: ")
	require.Contains(t, toolMsgs["call_2"], "upstream closed")

	// The timeline records each call and result under the tool's own name, then the monitor's outcome.
	var calls, results []string
	var monitor *engine.Event
	for i, e := range sink.Events {
		switch {
		case e.Kind == engine.KindToolCall:
			calls = append(calls, e.Title)
		case e.Kind == engine.KindToolResult:
			results = append(results, e.Title)
			if e.Title == "sec.fail" {
				require.Equal(t, true, e.Data["error"])
			}
			if e.Title == "sec.echo" {
				require.Equal(t, false, e.Data["error"])
				require.Contains(t, e.Content, "echo: hi")
			}
		case e.Kind == engine.KindStatus && e.Data["met"] != nil:
			monitor = &sink.Events[i]
		}
	}
	require.Equal(t, []string{"sec.echo", "sec.fail", "search_files", "write_report"}, calls)
	require.Equal(t, calls, results)
	require.NotNil(t, monitor)
	require.Equal(t, "Required tool calls missed", monitor.Title)
	require.Equal(t, false, monitor.Data["met"])
	require.Equal(t, []string{"sec.fail", "fetch_url"}, monitor.Data["missing"])
	require.Equal(t, engine.KindFinalAnswer, sink.Events[len(sink.Events)-1].Kind)
}

func TestOpenAIRequiredToolsMet(t *testing.T) {
	t.Parallel()
	reg, granted := mcpRegistry(t)
	cs := newChatServer(t, toolCalls("", call{"sec__echo", `{"text":"x"}`}), answer(finalReport))
	res, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{Tools: granted, ToolCaller: reg, RequiredTools: []string{"sec.echo"}})
	require.NoError(t, err)
	require.True(t, res.RequiredTools.Met())
	var titles []string
	for _, e := range sink.Events {
		if e.Kind == engine.KindStatus {
			titles = append(titles, e.Title)
		}
	}
	require.Contains(t, titles, "Required tool calls met")

	// Without required tools there is no monitor event and no outcome.
	cs = newChatServer(t, answer(finalReport))
	res, sink, err = runAgent(t, newOpenAI(t, cs, nil), engine.Input{Tools: granted, ToolCaller: reg})
	require.NoError(t, err)
	require.Nil(t, res.RequiredTools)
	for _, e := range sink.Events {
		require.Nil(t, e.Data["met"], e.Title)
	}
}
