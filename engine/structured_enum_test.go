package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
)

// platformEnum are the values of the enum array fields below, in schema order.
var platformEnum = []any{"Linux", "macOS", "Windows", "FreeBSD"}

// enumArraySchema is an object with one required field, an array of enum strings; extra adds
// keywords (maxItems, a nullable type) to the array's schema.
func enumArraySchema(field, description string, enum []any, extra map[string]any) map[string]any {
	array := map[string]any{
		"type":        "array",
		"items":       map[string]any{"type": "string", "enum": enum},
		"description": description,
	}
	for k, v := range extra {
		array[k] = v
	}
	return map[string]any{
		"type":       "object",
		"required":   []any{field},
		"properties": map[string]any{field: array},
	}
}

// TestExtractiveEnumArray: an array of enum values holds the values that a passage about the field
// names (its words, or a word of its direction), in the schema's order and up to maxItems (5 when
// unset); a value named only where the field's words are too few (under enumFloor) is left out.
// When no value is named, or the sources do not speak of the field, the array is empty, never
// null, even where the schema allows null (fields.go, fillArray), so a minItems the sources cannot
// meet fails the run, naming the field. Negated mentions ("Windows is not supported") are not
// pinned here: the engine currently chooses them.
func TestExtractiveEnumArray(t *testing.T) {
	t.Parallel()
	const platforms = "Which platforms does Tidewater 3.4 support?"
	tests := []struct {
		name     string
		docs     map[string]string
		question string
		field    string
		desc     string
		enum     []any
		extra    map[string]any
		want     []any // nil: the run fails validation
	}{
		{
			name: "the values the sources name, not the others",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports two platforms: Linux and macOS, on x86-64 and ARM.\n",
				"team.md":    "# Team\n\nThe Tidewater maintainers meet every Tuesday to plan the next release.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			want: []any{"Linux", "macOS"},
		},
		{
			// The office sentence names Tidewater but not the field's other words: below enumFloor.
			name: "a value named only outside the passages about the field is not chosen",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports one platform, Linux, on x86-64 and ARM.\n\n" +
					"The Tidewater office has tall windows facing the harbour.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			want: []any{"Linux"},
		},
		{
			name: "schema order, capped at maxItems",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports four platforms: FreeBSD, Windows, macOS and Linux.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			extra: map[string]any{"maxItems": 2},
			want:  []any{"Linux", "macOS"},
		},
		{
			name: "direction words name a direction value",
			docs: map[string]string{
				"q3.md": "# Northwind third quarter\n\nNorthwind revenue rose 12 percent in the third quarter, while operating costs fell 3 percent.\n",
			},
			question: "How did Northwind revenue and costs change in the third quarter?",
			field:    "revenue_and_costs", desc: "direction of Northwind revenue and costs",
			enum: []any{"increasing", "decreasing", "flat"},
			want: []any{"increasing", "decreasing"},
		},
		{
			name: "no value named: empty",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports every major desktop platform.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			want: []any{},
		},
		{
			name: "the sources do not speak of the field: empty",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 parses large files twice as fast as 3.3.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			want: []any{},
		},
		{
			name: "no value named, null allowed: still empty, not null",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports every major desktop platform.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			extra: map[string]any{"type": []any{"array", "null"}},
			want:  []any{},
		},
		{
			name: "no value named and minItems 1: the run fails",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports every major desktop platform.\n",
			},
			question: platforms, field: "platforms", desc: "platforms Tidewater supports", enum: platformEnum,
			extra: map[string]any{"minItems": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inputs := map[string][]byte{}
			for name, text := range tt.docs {
				inputs[name] = []byte(text)
			}
			repo := newWorkspace(t, inputs)
			schema := enumArraySchema(tt.field, tt.desc, tt.enum, tt.extra)
			res, err := engine.NewExtractive(engine.ExtractiveOptions{}).Run(context.Background(),
				engine.Input{Question: tt.question, Effort: engine.EffortMedium, JSONSchema: schema, Workspace: repo},
				&recordingSink{repo: repo})
			if tt.want == nil {
				var ee *engine.Error
				require.ErrorAs(t, err, &ee)
				require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code, ee.Message)
				require.Contains(t, ee.Message, tt.field)
				return
			}
			require.NoError(t, err)
			require.Contains(t, res.StructuredOutput, tt.field)
			require.Equal(t, tt.want, res.StructuredOutput[tt.field])
			require.NoError(t, engine.ValidateStructuredOutput(schema, res.StructuredOutput))
		})
	}
}
