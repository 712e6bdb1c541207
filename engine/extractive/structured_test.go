package extractive_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/workspace"
)

func energySchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"install_cost_eur", "summary", "contact", "climate"},
		"properties": map[string]any{
			"install_cost_eur":        map[string]any{"type": "number", "description": "installation cost of a heat pump"},
			"summary":                 map[string]any{"type": "string", "maxLength": 200},
			"suitable_for_old_houses": map[string]any{"type": "boolean", "description": "heat pumps suitable for poorly insulated houses"},
			"climate":                 map[string]any{"enum": []any{"cold", "mild"}, "description": "climate where performance SCOP is highest"},
			"contact":                 map[string]any{"type": "string", "format": "email"},
			"survey_date":             map[string]any{"type": "string", "format": "date"},
			"grant_eur":               map[string]any{"type": "integer", "description": "government grants", "minimum": 1000},
			"sources":                 map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "heat pump", "maxItems": 2},
			"facts": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{
				"type":       "object",
				"required":   []any{"statement"},
				"properties": map[string]any{"statement": map[string]any{"type": "string"}, "percent": map[string]any{"type": "number"}},
			}, "description": "percent"},
			"version":  map[string]any{"const": "v1"},
			"warranty": map[string]any{"type": []any{"string", "null"}, "enum": []any{"five years", "ten years", nil}, "description": "warranty period"},
		},
	}
}

func TestExtractiveStructuredOutput(t *testing.T) {
	t.Parallel()
	r := runOffline(t, engine.Input{Question: enginetest.Question, Effort: engine.EffortMedium, JSONSchema: energySchema()}, corpusDir)
	out := r.res.StructuredOutput
	require.Equal(t, float64(9000), out["install_cost_eur"])
	require.Equal(t, "research@example.org", out["contact"])
	require.Equal(t, "2024-03-15", out["survey_date"])
	require.Equal(t, false, out["suitable_for_old_houses"]) // "not suitable"
	require.Equal(t, float64(7500), out["grant_eur"])
	require.Equal(t, "mild", out["climate"])
	require.Equal(t, "v1", out["version"])
	require.Nil(t, out["warranty"], "no source speaks of a warranty: null, not the first value")
	require.Contains(t, out, "warranty")
	require.NotEmpty(t, out["summary"])
	require.LessOrEqual(t, len([]rune(out["summary"].(string))), 200)
	sources := out["sources"].([]any)
	require.NotEmpty(t, sources)
	require.LessOrEqual(t, len(sources), 2)
	facts := out["facts"].([]any)
	require.NotEmpty(t, facts)
	require.NotEmpty(t, facts[0].(map[string]any)["statement"])
	require.NoError(t, engine.ValidateStructuredOutput(energySchema(), out))

	saved, err := r.repo.ReadFile("", engine.StructuredOutputPath)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(saved, &got))
	require.Equal(t, out, got)

	// The timeline carries each field's basis: the quotes it came from and a confidence.
	var basis map[string]any
	for _, e := range r.sink.OfKind(engine.KindToolResult) {
		if e.Title == "extract_structured_output" {
			b, _ := json.Marshal(e.Data["basis"])
			require.NoError(t, json.Unmarshal(b, &basis))
		}
	}
	cost := basis["install_cost_eur"].(map[string]any)
	require.Contains(t, []any{"high", "medium"}, cost["confidence"])
	require.Contains(t, cost["citations"].([]any)[0].(map[string]any)["quote"], "9,000 to 14,000 euros")
	require.Equal(t, "low", basis["warranty"].(map[string]any)["confidence"])
}

func TestExtractiveStructuredOutputErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema map[string]any
		code   string
		field  string
	}{
		{"required number not found", map[string]any{
			"type": "object", "required": []any{"population"},
			"properties": map[string]any{"population": map[string]any{"type": "integer", "minimum": 1e12}},
		}, engine.CodeStructuredOutputInvalid, "population"},
		{"required enum without evidence", map[string]any{
			"type": "object", "required": []any{"warranty"},
			"properties": map[string]any{"warranty": map[string]any{"enum": []any{"five years", "ten years"}}},
		}, engine.CodeStructuredOutputInvalid, "warranty"},
		{"pattern not met", map[string]any{
			"type": "object", "required": []any{"code"},
			"properties": map[string]any{"code": map[string]any{"type": "string", "pattern": "^[A-Z]{3}-\\d{9}$"}},
		}, engine.CodeStructuredOutputInvalid, "code"},
		{"additional properties forbidden by a false subschema", map[string]any{
			"type": "object", "properties": map[string]any{"summary": false},
		}, engine.CodeStructuredOutputInvalid, ""},
		{"schema is not a schema", map[string]any{"type": 5}, engine.CodeInvalidJSONSchema, ""},
		{"not an object schema", map[string]any{"type": "array"}, engine.CodeInvalidJSONSchema, ""},
		{"external ref refused", map[string]any{"$ref": "file:///etc/passwd"}, engine.CodeInvalidJSONSchema, ""},
		{"remote ref refused", map[string]any{"$ref": "https://example.com/schema.json"}, engine.CodeInvalidJSONSchema, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := enginetest.Workspace(t, enginetest.Inputs(t))
			sink := &enginetest.Sink{Repo: repo}
			_, err := extractive.New(extractive.Options{CorpusDir: corpusDir}).Run(context.Background(),
				engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, JSONSchema: tt.schema, Workspace: repo}, sink)
			var ee *engine.Error
			require.ErrorAs(t, err, &ee)
			require.Equal(t, tt.code, ee.Code, ee.Message)
			require.Contains(t, ee.Message, tt.field)   // the error names the field
			require.NotContains(t, ee.Message, "root:") // no passwd content
			for _, c := range sink.Checkpoints {
				require.NotEqual(t, workspace.CheckpointFinal, c.Type)
			}
		})
	}
}

// A report's figures for the year asked, not the outlook for the next; dates as the report writes
// them, read into ISO form.
func TestExtractiveStructuredYearsAndDates(t *testing.T) {
	t.Parallel()
	report := []byte(`# Nordhavn Shipping: Annual Report 2024

## Results

Operating profit was NOK 80 million, a margin of 7.2 per cent.

## Outlook

In 2025 the group expects an EBIT margin of around 9 per cent.

## Events

The new terminal opened on 3 March 2024.
`)
	schema := map[string]any{
		"type":     "object",
		"required": []any{"ebit_margin_percent", "terminal_opened"},
		"properties": map[string]any{
			"ebit_margin_percent": map[string]any{"type": []any{"number", "null"}, "description": "EBIT margin for 2024, in per cent"},
			"terminal_opened":     map[string]any{"type": []any{"string", "null"}, "format": "date", "description": "date the new terminal opened"},
		},
	}
	in := engine.Input{Question: "What EBIT margin did Nordhavn report for 2024, and when did its terminal open?", Effort: engine.EffortLow,
		JSONSchema: schema, Workspace: enginetest.Workspace(t, map[string][]byte{"nordhavn-2024.md": report})}
	out := runOffline(t, in, "").res.StructuredOutput
	require.Equal(t, 7.2, out["ebit_margin_percent"])
	require.Equal(t, "2024-03-03", out["terminal_opened"])
}
