package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
)

// scriptedDrafter is an OpenAI-compatible chat endpoint that answers each authoring prompt with the
// next scripted content.
func scriptedDrafter(t *testing.T, answers ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ResponseFormat map[string]any `json:"response_format"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		require.Equal(t, "json_schema", req.ResponseFormat["type"], "authoring asks for schema-shaped JSON")
		n := int(calls.Add(1)) - 1
		content := answers[min(n, len(answers)-1)]
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestExpertAuthoringWithModel(t *testing.T) {
	t.Parallel()
	good := `{"system_prompt": "You are a vendor risk analyst.", "output_sop": {"steps": ["Confirm the entity"]},
		"output_schema": {"type": "object", "required": ["risk_level"], "properties": {"risk_level": {"type": "string", "enum": ["low", "high"]}}}}`
	badSchema := `{"system_prompt": "x", "output_sop": null, "output_schema": {"$ref": "file:///etc/passwd"}}`
	srv, calls := scriptedDrafter(t, good, "not json at all", badSchema)
	eng, err := llm.New(llm.Options{BaseURL: srv.URL, Model: "m"})
	require.NoError(t, err)
	model, ok := eng.(authoring.Model)
	require.True(t, ok, "the openai engine drafts for authoring")
	e := servertest.New(t, store.SQLite, func(cfg *servertest.Config) { cfg.AuthoringModel = model })
	a := e.NewAccount(t, store.TierPro, false, 0)
	text := "Vendor review playbook\n1. Confirm the legal entity.\n2. Rate risk low/medium/high and write a summary."
	extract := func() gen.ExpertExtractResponse {
		r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/extract", Token: a.Key, Body: map[string]any{"text": text}})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var x gen.ExpertExtractResponse
		r.JSON(t, &x)
		return x
	}
	x := extract()
	require.Equal(t, "You are a vendor risk analyst.", x.SystemPrompt, "the model's draft")
	require.Equal(t, []any{"risk_level"}, x.OutputSchema.MustGet()["required"])
	for range 2 { // unparseable, then a schema with an external $ref: both fall back to the text rules
		x = extract()
		require.True(t, strings.Contains(x.SystemPrompt, "Vendor review playbook"), x.SystemPrompt)
		require.Equal(t, []any{"risk_level", "summary"}, x.OutputSchema.MustGet()["required"])
	}
	require.Equal(t, int32(3), calls.Load())
}
