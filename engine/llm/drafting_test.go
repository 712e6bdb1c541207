package llm_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/llm"
)

type drafter interface {
	DraftJSON(ctx context.Context, system, user string, schema map[string]any) (map[string]any, error)
}

// DraftJSON reads the answer with the engine's one parser, sends an object that breaks the schema
// back once with the validator's errors, and fails naming the field.
func TestDraftJSON(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "required": []any{"name", "steps"}, "properties": map[string]any{
		"name": map[string]any{"type": "string", "minLength": 1}, "steps": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
	valid := `{"name": "Vendor review", "steps": ["Confirm the entity"]}`
	refuseSchema := func(w http.ResponseWriter, _ *http.Request, body map[string]any) {
		if rf, _ := body["response_format"].(map[string]any); rf["type"] == "json_schema" {
			httpError(400, "json_schema response format is not supported")(w, nil, body)
			return
		}
		answer(valid)(w, nil, body)
	}
	tests := []struct {
		name     string
		script   []step
		want     map[string]any
		err      string
		requests int
	}{
		{name: "reasoning and prose around the object", script: []step{answer("<think>Plan {x}</think>Here you go:\n```json\n" + valid + "\n```")},
			want: map[string]any{"name": "Vendor review", "steps": []any{"Confirm the entity"}}, requests: 1},
		{name: "fixed on the retry", script: []step{answer(`{"name": "", "steps": []}`), answer(valid)},
			want: map[string]any{"name": "Vendor review", "steps": []any{"Confirm the entity"}}, requests: 2},
		{name: "still wrong after the retry names the field", script: []step{answer(`{"name": 7, "steps": []}`)}, err: "/name", requests: 2},
		{name: "no JSON at all is not retried", script: []step{answer("I would rather not.")}, err: "not a JSON object", requests: 1},
		{name: "json_schema refused: json_object with the schema in the prompt", script: []step{refuseSchema},
			want: map[string]any{"name": "Vendor review", "steps": []any{"Confirm the entity"}}, requests: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := newChatServer(t, tt.script...)
			e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", Model: "m", RetryBase: time.Millisecond, Logger: quietLog()})
			require.NoError(t, err)
			got, err := e.(drafter).DraftJSON(context.Background(), "Draft an expert.", "Vendor review playbook", schema)
			reqs := cs.recorded()
			require.Len(t, reqs, tt.requests)
			if tt.err != "" {
				var ee *engine.Error
				require.ErrorAs(t, err, &ee)
				require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code)
				require.Contains(t, ee.Message, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			if tt.requests == 2 {
				msgs := reqs[1].Body["messages"].([]any)
				last := msgs[len(msgs)-1].(map[string]any)["content"].(string)
				if tt.name == "fixed on the retry" {
					require.Contains(t, last, "/name")
				} else {
					require.Equal(t, "json_object", reqs[1].Body["response_format"].(map[string]any)["type"])
					require.Contains(t, last, `"required":["name","steps"]`)
				}
			}
		})
	}
}
