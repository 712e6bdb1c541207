package llm

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
)

func TestExtractObject(t *testing.T) {
	t.Parallel()
	want := map[string]any{"a": 1.0, "b": []any{"x"}}
	tests := []struct {
		name, in string
		want     map[string]any
		err      string
	}{
		{name: "bare", in: `{"a": 1, "b": ["x"]}`, want: want},
		{name: "fenced", in: "```json\n{\"a\": 1, \"b\": [\"x\"]}\n```", want: want},
		{name: "think block with braces, then prose and a fence", in: "<think>maybe {\"a\": 2}?</think>\nSure! Here it is:\n```json\n{\"a\": 1, \"b\": [\"x\"]}\n```\nAnything else?", want: want},
		{name: "template opened the think block", in: "reasoning {\"a\": 3} ...</think>{\"a\": 1, \"b\": [\"x\"]}", want: want},
		{name: "prose around, no fence", in: `The answer is {"a": 1, "b": ["x"]} as requested.`, want: want},
		{name: "trailing commas", in: `{"a": 1, "b": ["x",],}`, want: want},
		{name: "raw line break in a string, comment, Python literals", in: "{\"a\": 1, // one\n\"b\": [\"x\"], \"c\": \"two\nlines\", \"d\": True, \"e\": None}",
			want: map[string]any{"a": 1.0, "b": []any{"x"}, "c": "two\nlines", "d": true, "e": nil}},
		{name: "braces inside strings", in: `{"a": "}{", "b": ["]"]}`, want: map[string]any{"a": "}{", "b": []any{"]"}}},
		{name: "a broken object is not mined for fragments", in: `{"claims": [{"text": "x"} "oops"]}`, err: "not valid"},
		{name: "cut off", in: `{"a": 1, "b": [`, err: "cut off"},
		{name: "no JSON", in: "I cannot answer that.", err: "no JSON object found"},
		{name: "unclosed think block only", in: "<think>{\"a\": 1}", err: "no JSON object found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := extractObject(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseAnswerNamesTheField(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "required": []any{"n", "items"}, "properties": map[string]any{
		"n": map[string]any{"type": "number"}, "items": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}}}
	sch, err := engine.CompileSchema(schema)
	require.NoError(t, err)
	// Unambiguous coercions: a numeric string, one object where an array of them is asked.
	got, err := parseAnswer(`{"n": "42", "items": {"k": 1}}`, schema, sch)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"n": 42.0, "items": []any{map[string]any{"k": 1.0}}}, got)
	_, err = parseAnswer(`{"n": "forty-two", "items": []}`, schema, sch)
	var ee *engine.Error
	require.ErrorAs(t, err, &ee)
	require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code)
	require.Contains(t, ee.Message, "/n")
	_, err = parseAnswer("no json here", schema, sch)
	require.ErrorContains(t, err, "the answer is not a JSON object")
}

func TestParseTextCalls(t *testing.T) {
	t.Parallel()
	known := func(n string) bool { return n == "search_files" || n == "read_file" }
	tests := []struct {
		name, in string
		want     []textCall
	}{
		{name: "tagged", in: `<tool_call>{"name": "search_files", "arguments": {"query": "cost"}}</tool_call>`,
			want: []textCall{{"search_files", `{"query":"cost"}`}}},
		{name: "two tags, think first", in: "<think>I should {\"name\": \"read_file\"}</think><tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>\n<tool_call>{\"name\": \"search_files\", \"arguments\": \"{\\\"query\\\": \\\"x\\\"}\"}</tool_call>",
			want: []textCall{{"read_file", `{"path":"a.md"}`}, {"search_files", `{"query": "x"}`}}},
		{name: "bare JSON with parameters (Llama 3)", in: `{"name": "search_files", "parameters": {"query": "grants"}}`,
			want: []textCall{{"search_files", `{"query":"grants"}`}}},
		{name: "fenced array", in: "Calling:\n```json\n[{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.md\"}}, {\"name\": \"search_files\", \"arguments\": {\"query\": \"y\"}}]\n```",
			want: []textCall{{"read_file", `{"path":"b.md"}`}, {"search_files", `{"query":"y"}`}}},
		{name: "Mistral", in: `[TOOL_CALLS][{"name": "search_files", "arguments": {"query": "z"}}]`, want: []textCall{{"search_files", `{"query":"z"}`}}},
		{name: "OpenAI's shape", in: `{"type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"c.md\"}"}}`,
			want: []textCall{{"read_file", `{"path": "c.md"}`}}},
		{name: "unknown tool", in: `{"name": "delete_everything", "arguments": {}}`},
		{name: "a report is not a call", in: `{"title": "Heat pumps", "summary": []}`},
		{name: "prose", in: "Heat pumps cost 9,000 euros."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, parseTextCalls(tt.in, known))
		})
	}
}

func TestAssembleStream(t *testing.T) {
	t.Parallel()
	body := "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n" +
		"data: [DONE]\n\n"
	out, err := assembleStream([]byte(body))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(out, &got))
	choice := got["choices"].([]any)[0].(map[string]any)
	require.Equal(t, "tool_calls", choice["finish_reason"])
	msg := choice["message"].(map[string]any)
	require.Equal(t, "Hello", msg["content"])
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	require.Equal(t, "t1", call["id"])
	require.Equal(t, map[string]any{"name": "read_file", "arguments": `{"path":"a"}`}, call["function"])
	require.EqualValues(t, 7, got["usage"].(map[string]any)["total_tokens"])

	_, err = assembleStream([]byte("data: {\"error\": {\"message\": \"model crashed\"}}\n\n"))
	var se *statusError
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Message, "model crashed")
	_, err = assembleStream([]byte("data: [DONE]\n\n"))
	require.ErrorContains(t, err, "without any chunk")
}

func TestErrorMessageAndRetryAfter(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"error": {"message": "bad thing", "type": "x"}}`:                                                     "bad thing",
		`{"error": "model does not support tools"}`:                                                            "model does not support tools",
		`{"error": {"code": 400, "message": "the request exceeds the available context size", "n_ctx": 4096}}`: "the request exceeds the available context size (n_ctx 4096)",
		`{"detail": [{"msg": "field required"}]}`:                                                              `[{"msg":"field required"}]`,
		"Bad Gateway\n": "Bad Gateway",
	} {
		require.Equal(t, want, errorMessage([]byte(body)), body)
	}
	now := time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "3")
	require.Equal(t, 3*time.Second, retryAfter(h, now))
	h.Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
	require.Equal(t, 90*time.Second, retryAfter(h, now))
	h.Set("Retry-After-Ms", "250")
	require.Equal(t, 250*time.Millisecond, retryAfter(h, now))
}

func TestContextLimit(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]int{
		"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens":  4096,
		"the request exceeds the available context size (n_ctx 8192)":                             8192,
		"Trying to keep the first 9000 tokens when context the overflows. context length of 2048": 2048,
		"prompt is too long": 0,
	} {
		require.Equal(t, want, contextLimit(msg), msg)
		require.True(t, reContextError.MatchString(msg), msg)
	}
	require.False(t, reContextError.MatchString("model not found"))
}

func TestFitMessages(t *testing.T) {
	t.Parallel()
	big := func(c byte) string { return string(make([]byte, 6000)) + string(c) }
	msgs := []chatMsg{
		{Role: "system", Content: "rules"}, {Role: "user", Content: "question"},
		{Role: "assistant", Calls: []toolCall{{ID: "1", Name: "read_file", Args: "{}"}}},
		{Role: "tool", CallID: "1", Content: big('a'), Short: shortResult(big('a'))},
		{Role: "assistant", Calls: []toolCall{{ID: "2", Name: "read_file", Args: "{}"}}},
		{Role: "tool", CallID: "2", Content: big('b'), Short: shortResult(big('b'))},
	}
	// Everything fits: unchanged.
	got, err := fitMessages(msgs, 100_000)
	require.NoError(t, err)
	require.Equal(t, msgs, got)
	// Tighter: the older result is shortened first, the latest kept whole.
	got, err = fitMessages(msgs, 2600)
	require.NoError(t, err)
	require.Len(t, got, 6)
	require.Contains(t, got[3].Content, "[shortened to fit")
	require.Equal(t, msgs[5].Content, got[5].Content)
	// Tighter still: the older step is left out whole, and the latest result cut.
	got, err = fitMessages(msgs, 1200)
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.Contains(t, got[1].Content, "1 earlier research step(s) are left out")
	require.Equal(t, "2", got[3].CallID)
	require.LessOrEqual(t, estimateMsgs(got), 1200)
	_, err = fitMessages(msgs, 50)
	require.ErrorIs(t, err, errContextTooSmall)
}
