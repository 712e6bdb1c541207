package llm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Tool calls written as text. A model whose server cannot pass tool calls natively (no tool parser,
// a chat template without tools) is told the tools in its system message and calls them by writing
//
//	<tool_call>{"name": "search_files", "arguments": {"query": "heat pump cost"}}</tool_call>
//
// one block per call (the Hermes/Qwen form most local models were trained on). The parser also
// accepts what models write unprompted: a bare or fenced JSON object (or array of them) with
// "name" and "arguments" ("parameters", "args" or "input" too), OpenAI's {"type": "function",
// "function": {...}} form, and Mistral's [TOOL_CALLS] prefix. Only names of offered tools count, so
// a JSON report is never mistaken for a call. Results go back in <tool_response> blocks.

var reToolCallTag = regexp.MustCompile(`(?is)<(?:tool_call|function_call)>(.*?)(?:</(?:tool_call|function_call)>|\z)`)

// textCall is a tool call found in a model's text.
type textCall struct{ Name, Args string }

// parseTextCalls finds the tool calls in an answer; known says which names are offered tools.
func parseTextCalls(answer string, known func(string) bool) []textCall {
	s := stripThinking(answer)
	if !strings.ContainsAny(s, "{[") {
		return nil
	}
	var out []textCall
	if tags := reToolCallTag.FindAllStringSubmatch(s, -1); len(tags) > 0 {
		for _, m := range tags {
			out = append(out, callsIn(m[1], known)...)
		}
		return out
	}
	if i := strings.Index(s, "[TOOL_CALLS]"); i >= 0 {
		return callsIn(s[i+len("[TOOL_CALLS]"):], known)
	}
	return callsIn(s, known)
}

// callsIn reads the calls of a text: every JSON object in it (whole, fenced, in prose or in an
// array) that names an offered tool.
func callsIn(s string, known func(string) bool) []textCall {
	var out []textCall
	for rest := s; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		end := balancedEnd(rest, i)
		if end < 0 {
			return out
		}
		if v, err := decodeLenient(rest[i:end]); err == nil {
			if c, ok := asCall(v, known); ok {
				out = append(out, c)
			}
		}
		rest = rest[end:]
	}
}

// asCall reads one call object.
func asCall(v any, known func(string) bool) (textCall, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return textCall{}, false
	}
	if fn, ok := obj["function"].(map[string]any); ok {
		obj = fn
	}
	name := ""
	for _, k := range []string{"name", "tool", "function", "tool_name"} {
		if s, ok := obj[k].(string); ok {
			name = strings.TrimSpace(s)
			break
		}
	}
	if name == "" || !known(name) {
		return textCall{}, false
	}
	args := "{}"
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		switch a := obj[k].(type) {
		case string:
			args = a
		case map[string]any:
			b, err := json.Marshal(a)
			if err != nil {
				return textCall{}, false
			}
			args = string(b)
		default:
			continue
		}
		break
	}
	return textCall{Name: name, Args: args}, true
}

// textToolsPrompt tells a model without native tool calls how to call the tools: their names,
// descriptions and parameters, and the format.
func textToolsPrompt(tools []toolSpec) string {
	var b strings.Builder
	b.WriteString("\nYou can call these tools:\n")
	for _, t := range tools {
		params, _ := json.Marshal(t.Params)
		fmt.Fprintf(&b, "- %s: %s Parameters (JSON Schema): %s\n", t.Name, t.Desc, params)
	}
	b.WriteString(`To call a tool, answer with only a block like this (one block per call; several blocks for several calls):
<tool_call>{"name": "search_files", "arguments": {"query": "heat pump cost"}}</tool_call>
The results come back in <tool_response> blocks. When you have enough evidence, answer without any tool call.
`)
	return b.String()
}

// toolResponse wraps a tool's result for a model that calls tools as text.
func toolResponse(name, out string) string {
	return fmt.Sprintf("<tool_response name=%q>\n%s\n</tool_response>", name, out)
}
