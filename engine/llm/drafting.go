package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/researchd/researchd/engine"
)

// draftTokens bounds one drafting answer (an expert configuration, a plan, a workflow).
const draftTokens = 4096

// DraftJSON answers one prompt with a JSON object that matches schema: the expert authoring
// endpoints use it when a model is configured. The answer is read with the engine's one parser and
// validated here, so a caller gets a schema-valid object or an error naming the field, never a
// half-right one. An object with problems is sent back once with the validator's errors; an answer
// without any JSON is not (the caller falls back to its text rules at once).
//
// Drafting does not probe the server (a short prompt needs no window size, and some servers'
// catch-all routes would take a probe for a draft): it uses what runs learned about the model, or
// the defaults.
func (e *openaiEngine) DraftJSON(ctx context.Context, system, user string, schema map[string]any) (map[string]any, error) {
	sch, err := engine.CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	s := &session{e: e, em: engine.Emitter{Sink: engine.Discard{}}, caps: e.knownCaps()}
	fixed := []chatMsg{{Role: "system", Content: system}, {Role: "user", Content: user}}
	obj, problems, err := s.askJSON(ctx, jsonAsk{
		Build: func(budget int, tail []chatMsg) ([]chatMsg, error) {
			return fitMessages(append(append([]chatMsg(nil), fixed...), tail...), budget)
		},
		Prompt: "Answer with the JSON object only.", Format: jsonFormat{Name: "draft", Schema: schema}, Sch: sch, Want: draftTokens, What: "the draft",
		Fix: func(problems []string) string {
			return "That object does not match the JSON Schema: " + strings.Join(problems, "; ") + "\nReturn the corrected JSON object only."
		},
	})
	if err != nil {
		return nil, e.mapError(ctx, err)
	}
	if obj == nil || len(problems) > 0 {
		return nil, fmt.Errorf("draft: %w", errorNaming(engine.CodeStructuredOutputInvalid, "the model's answer is not a valid draft", problems))
	}
	return obj, nil
}

// knownCaps are the model's capabilities as far as runs learned them, else the defaults, without
// probing the server.
func (e *openaiEngine) knownCaps() capabilities {
	e.memory.mu.Lock()
	defer e.memory.mu.Unlock()
	if mc, ok := e.memory.models[e.opts.Model]; ok && mc.caps.Context > 0 {
		return mc.caps
	}
	c := capabilities{Tools: ToolsNative, Format: formatSchema, Context: unknownContext, ContextFrom: "assumed"}
	if e.opts.BaseURL == "" {
		c.Context = openAIContext
	}
	if e.opts.ContextTokens > 0 {
		c.Context = e.opts.ContextTokens
	}
	return c
}
