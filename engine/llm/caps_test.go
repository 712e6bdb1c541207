package llm

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDiscover: what each server says sets the window and the tool mode; the configured window
// fills in where the server says nothing, and caps it where the server says more.
func TestDiscover(t *testing.T) {
	t.Parallel()
	routes := func(r map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			v, ok := r[req.Method+" "+req.URL.Path]
			if !ok {
				http.NotFound(w, req)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}
	}
	ollama := map[string]any{
		"GET /api/version": map[string]any{"version": "0.9.0"},
		"POST /api/show":   map[string]any{"model_info": map[string]any{"qwen2.context_length": 32768}, "capabilities": []any{"completion", "tools"}},
	}
	loaded := map[string]any{"GET /api/ps": map[string]any{"models": []any{map[string]any{"name": "m", "model": "m", "context_length": 16384}}}}
	for k, v := range ollama {
		loaded[k] = v
	}
	tests := []struct {
		name       string
		routes     map[string]any
		configured int
		mode       string
		want       capabilities
	}{
		{name: "nothing reported", want: capabilities{Tools: ToolsNative, Context: unknownContext}},
		{name: "nothing reported, configured", configured: 6000, want: capabilities{Tools: ToolsNative, Context: 6000}},
		{name: "vLLM", routes: map[string]any{"GET /v1/models": map[string]any{"data": []any{map[string]any{"id": "m", "max_model_len": 8192}}}},
			want: capabilities{Server: "vllm", Tools: ToolsNative, Context: 8192}},
		{name: "vLLM, configured smaller", configured: 4096, routes: map[string]any{"GET /v1/models": map[string]any{"data": []any{map[string]any{"id": "m", "max_model_len": 8192}}}},
			want: capabilities{Server: "vllm", Tools: ToolsNative, Context: 4096}},
		{name: "llama.cpp", routes: map[string]any{"GET /props": map[string]any{"default_generation_settings": map[string]any{"n_ctx": 2048}}},
			want: capabilities{Server: "llama.cpp", Tools: ToolsNative, Context: 2048}},
		{name: "Ollama, model not loaded: its default window", routes: ollama, want: capabilities{Server: "ollama", Tools: ToolsNative, Context: ollamaDefault}},
		{name: "Ollama, not loaded, configured", routes: ollama, configured: 12000, want: capabilities{Server: "ollama", Tools: ToolsNative, Context: 12000}},
		{name: "Ollama, loaded", routes: loaded, want: capabilities{Server: "ollama", Tools: ToolsNative, Context: 16384}},
		{name: "forced text mode", mode: ToolsText, want: capabilities{Tools: ToolsText, Context: unknownContext}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(routes(tt.routes))
			t.Cleanup(srv.Close)
			e, err := New(Options{BaseURL: srv.URL + "/v1", Model: "m", ContextTokens: tt.configured, ToolMode: tt.mode, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			got := e.(*openaiEngine).capsFor(context.Background())
			require.NotEmpty(t, got.ContextFrom)
			got.ContextFrom, got.ToolsFrom = "", ""
			require.Equal(t, tt.want, got)
		})
	}
}
