package llm_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/workspace"
)

// Structured output: asked with the caller's schema, validated, retried once with the validator's
// errors, then settled field by field; the basis is asked for last and written for verification.
func TestOpenAIStructuredOutput(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object", "required": []any{"install_cost_eur", "verdict"},
		"properties": map[string]any{
			"install_cost_eur": map[string]any{"type": "number"},
			"verdict":          map[string]any{"enum": []any{"worth_it", "not_worth_it"}},
			"note":             map[string]any{"type": "string"},
			"grant_eur":        map[string]any{"type": []any{"number", "null"}},
		},
	}
	basis := `{"install_cost_eur": {"citations": [{"source": "S1", "quote": "Government grants of up to 7,500 euros"}], "confidence": "high"}, "verdict": {"citations": [], "confidence": "low"}}`
	tests := []struct {
		name     string
		contents []string // answers to the structured-output requests (and the basis)
		want     map[string]any
		code     string
		contains string
		retried  bool
	}{
		{"valid", []string{`{"install_cost_eur": 9000, "verdict": "worth_it"}`, basis},
			map[string]any{"install_cost_eur": float64(9000), "verdict": "worth_it"}, "", "", false},
		{"fenced", []string{"```json\n{\"install_cost_eur\": 9000, \"verdict\": \"worth_it\"}\n```", basis},
			map[string]any{"install_cost_eur": float64(9000), "verdict": "worth_it"}, "", "", false},
		{"fixed on the retry", []string{`{"install_cost_eur": "cheap", "verdict": "maybe"}`, `{"install_cost_eur": 9000, "verdict": "not_worth_it"}`, basis},
			map[string]any{"install_cost_eur": float64(9000), "verdict": "not_worth_it"}, "", "", true},
		{"optional and nullable fields settled", []string{`{"install_cost_eur": 9000, "verdict": "worth_it", "note": 5, "grant_eur": "lots"}`, `{"install_cost_eur": 9000, "verdict": "worth_it", "note": 5, "grant_eur": "lots"}`, basis},
			map[string]any{"install_cost_eur": float64(9000), "verdict": "worth_it", "grant_eur": nil}, "", "", true},
		{"required field still invalid", []string{`{"install_cost_eur": "cheap", "verdict": "worth_it"}`},
			nil, engine.CodeStructuredOutputInvalid, `required field "install_cost_eur"`, true},
		{"required field missing", []string{`{"verdict": "worth_it"}`},
			nil, engine.CodeStructuredOutputInvalid, `required field "install_cost_eur"`, true},
		{"not json", []string{`The cost is 9000 euros.`}, nil, engine.CodeStructuredOutputInvalid, "not a JSON object", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := []step{answer(finalReport), answer(finalReport)}
			for _, c := range tt.contents {
				script = append(script, answer(c))
			}
			cs := newChatServer(t, script...)
			res, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{JSONSchema: schema})
			reqs := cs.recorded()
			rf := reqs[2].Body["response_format"].(map[string]any)
			require.Equal(t, "json_schema", rf["type"])
			js := rf["json_schema"].(map[string]any)
			require.Equal(t, "structured_output", js["name"])
			require.Equal(t, schema["required"], js["schema"].(map[string]any)["required"])
			require.Nil(t, reqs[0].Body["response_format"])
			if tt.retried {
				msgs := reqs[3].Body["messages"].([]any)
				require.Contains(t, msgs[len(msgs)-1].(map[string]any)["content"], "does not match the JSON Schema")
			}
			if tt.code == "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, res.StructuredOutput)
				saved, err := sink.Repo.ReadFile("", engine.StructuredOutputPath)
				require.NoError(t, err)
				require.JSONEq(t, enginetest.MustJSON(t, tt.want), string(saved))
				// The basis names stored origins, not the ids the model used. (The model called no
				// tool, so the service read the files for it: S1 is notes.md.)
				b, err := engine.ReadBasis(sink.Repo)
				require.NoError(t, err)
				require.Equal(t, "input_files/notes.md", b["install_cost_eur"].Citations[0].Source)
				last := reqs[len(reqs)-1].Body["response_format"].(map[string]any)["json_schema"].(map[string]any)
				require.Equal(t, "structured_output_basis", last["name"])
				return
			}
			var ee *engine.Error
			require.ErrorAs(t, err, &ee)
			require.Equal(t, tt.code, ee.Code)
			require.Contains(t, ee.Message, tt.contains)
			for _, c := range sink.Checkpoints {
				require.NotEqual(t, workspace.CheckpointFinal, c.Type)
			}
		})
	}
}

// The research budget scales with effort: steps, sources and research time each end the loop, and
// the report is then written without tools.
func TestOpenAIBudgets(t *testing.T) {
	t.Parallel()
	search := toolCalls("", call{"search_files", `{"query":"heat"}`})
	t.Run("steps", func(t *testing.T) {
		t.Parallel()
		cs := newChatServer(t, search, search, search, search, answer(finalReport))
		_, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{Effort: engine.EffortLow})
		require.NoError(t, err)
		reqs := cs.recorded()
		require.Len(t, reqs, 5) // 4 steps (low), then the report
		for i := range 4 {
			require.NotNil(t, reqs[i].Body["tools"])
			require.EqualValues(t, 2048, reqs[i].Body["max_completion_tokens"])
		}
		require.Nil(t, reqs[4].Body["tools"])
		require.EqualValues(t, 4096, reqs[4].Body["max_completion_tokens"])
		require.Contains(t, statusTitles(sink), "Research budget spent")
		start := sink.Events[0]
		require.Equal(t, 4, start.Data["max_steps"])
		require.Equal(t, 4, start.Data["max_sources"])
	})
	t.Run("sources", func(t *testing.T) {
		t.Parallel()
		corpus := map[string][]byte{}
		for i := range 6 {
			corpus[fmt.Sprintf("doc%d.md", i)] = []byte(fmt.Sprintf("Heat pump fact number %d.\n", i))
		}
		// Low effort reads at most 4 sources; a fifth distinct file is refused, a file read before is not.
		cs := newChatServer(t, toolCalls("",
			call{"read_file", `{"path":"input_files/doc0.md"}`}, call{"read_file", `{"path":"input_files/doc1.md"}`},
			call{"read_file", `{"path":"input_files/doc2.md"}`}, call{"read_file", `{"path":"input_files/doc3.md"}`},
			call{"read_file", `{"path":"input_files/doc4.md"}`}, call{"read_file", `{"path":"input_files/doc0.md"}`}),
			answer(finalReport))
		_, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{Effort: engine.EffortLow, Workspace: enginetest.Workspace(t, corpus)})
		require.NoError(t, err)
		res := sink.OfKind(engine.KindToolResult)
		require.Contains(t, res[4].Content, "source budget of this effort (4 sources) is spent")
		require.Equal(t, false, res[5].Data["error"])
		srcs, err := sources.Open(sink.Repo, nil)
		require.NoError(t, err)
		require.Len(t, srcs.All(), 4)
	})
	t.Run("time", func(t *testing.T) {
		t.Parallel()
		// The run's clock moves ten minutes per reading: past low effort's three after the first step.
		var mu sync.Mutex
		now := enginetest.Clock()
		clock := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(10 * time.Minute)
			return now
		}
		cs := newChatServer(t, search, answer(finalReport))
		_, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{Effort: engine.EffortLow, Now: clock})
		require.NoError(t, err)
		require.Len(t, cs.recorded(), 2)
		require.Contains(t, statusTitles(sink), "Research budget spent")
	})
}

func statusTitles(sink *enginetest.Sink) []string {
	var out []string
	for _, ev := range sink.OfKind(engine.KindStatus) {
		out = append(out, ev.Title)
	}
	return out
}
