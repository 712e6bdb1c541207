package extractive_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extractive"
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
// When no value is named, or the sources do not speak of the field, the field is null where the
// schema allows null (as it is in a run with no sources) and an empty array where it does not, so
// a minItems the sources cannot meet fails the run, naming the field. A value its clause negates ("Windows is not supported")
// is not chosen.
func TestExtractiveEnumArray(t *testing.T) {
	t.Parallel()
	const platforms = "Which platforms does Tidewater 3.4 support?"
	tests := []struct {
		name     string
		docs     map[string]string
		question string
		field    string // "" (with question, desc and enum): the platforms of Tidewater 3.4
		desc     string
		enum     []any
		extra    map[string]any
		want     []any // nil (and not wantNull): the run fails validation
		wantNull bool  // the field is null
	}{
		{
			name: "the values the sources name, not the others",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports two platforms: Linux and macOS, on x86-64 and ARM.\n",
				"team.md":    "# Team\n\nThe Tidewater maintainers meet every Tuesday to plan the next release.\n",
			},
			want: []any{"Linux", "macOS"},
		},
		{
			// The office sentence names Tidewater but not the field's other words: below enumFloor.
			name: "a value named only outside the passages about the field is not chosen",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports one platform, Linux, on x86-64 and ARM.\n\n" +
					"The Tidewater office has tall windows facing the harbour.\n",
			},
			want: []any{"Linux"},
		},
		{
			name: "a value the source says is not supported is not chosen",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports two platforms, Linux and macOS; Windows is not supported.\n",
			},
			want: []any{"Linux", "macOS"},
		},
		{
			// The negation's clause ends at "but"; "except" leaves out only the words just after it.
			name: "negation and exclusion stay in their clause",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 runs on the Unix-like platforms except FreeBSD; " +
					"Windows isn't supported yet, but Linux and macOS are.\n",
			},
			want: []any{"Linux", "macOS"},
		},
		{
			name: "a negation before a colon covers the list after it; after a colon, only an opening verdict",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 platforms: Linux and macOS are supported; " +
					"not supported: FreeBSD; Windows: not supported.\n",
			},
			want: []any{"Linux", "macOS"},
		},
		{
			name: "a negation in its own sentence after a colon denies nothing before it",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports two platforms, Linux and macOS: the installer needs no rebuild.\n",
			},
			want: []any{"Linux", "macOS"},
		},
		{
			name: "schema order, capped at maxItems",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports four platforms: FreeBSD, Windows, macOS and Linux.\n",
			},
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
			want: []any{},
		},
		{
			name: "the sources do not speak of the field: empty",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 parses large files twice as fast as 3.3.\n",
			},
			want: []any{},
		},
		{
			name: "no value named, null allowed: null",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports every major desktop platform.\n",
			},
			extra:    map[string]any{"type": []any{"array", "null"}},
			wantNull: true,
		},
		{
			name: "the sources do not speak of the field, null allowed: null",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 parses large files twice as fast as 3.3.\n",
			},
			extra:    map[string]any{"type": []any{"array", "null"}},
			wantNull: true,
		},
		{
			name: "a value named, null allowed: the values",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports one platform, Linux, on x86-64 and ARM.\n",
			},
			extra: map[string]any{"type": []any{"array", "null"}},
			want:  []any{"Linux"},
		},
		{
			name: "no value named and minItems 1: the run fails",
			docs: map[string]string{
				"release.md": "# Tidewater 3.4\n\nTidewater 3.4 supports every major desktop platform.\n",
			},
			extra: map[string]any{"minItems": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.field == "" { // the platforms of Tidewater 3.4
				tt.question, tt.field, tt.desc, tt.enum = platforms, "platforms", "platforms Tidewater supports", platformEnum
			}
			schema := enumArraySchema(tt.field, tt.desc, tt.enum, tt.extra)
			res, err := runOnDocs(t, tt.docs, tt.question, schema)
			if tt.want == nil && !tt.wantNull {
				var ee *engine.Error
				require.ErrorAs(t, err, &ee)
				require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code, ee.Message)
				require.Contains(t, ee.Message, tt.field)
				return
			}
			require.NoError(t, err)
			require.Contains(t, res.StructuredOutput, tt.field)
			if tt.wantNull {
				require.Nil(t, res.StructuredOutput[tt.field])
			} else {
				require.Equal(t, tt.want, res.StructuredOutput[tt.field])
			}
			require.NoError(t, engine.ValidateStructuredOutput(schema, res.StructuredOutput))
		})
	}
}

// runOnDocs runs the extractive engine at medium effort over docs (input files) with schema.
func runOnDocs(t *testing.T, docs map[string]string, question string, schema map[string]any) (engine.Result, error) {
	t.Helper()
	inputs := map[string][]byte{}
	for name, text := range docs {
		inputs[name] = []byte(text)
	}
	repo := enginetest.Workspace(t, inputs)
	return extractive.New(extractive.Options{}).Run(context.Background(),
		engine.Input{Question: question, Effort: engine.EffortMedium, JSONSchema: schema, Workspace: repo},
		&enginetest.Sink{Repo: repo})
}

// TestExtractiveNegatedValue: a single enum field is not filled with a value its source denies,
// and a boolean field is never true from a sentence that negates it, whatever the negation's form.
func TestExtractiveNegatedValue(t *testing.T) {
	t.Parallel()
	licence := map[string]any{"enum": []any{"GPL-3.0", "MIT", "Apache-2.0"}, "description": "licence Tidewater is released under"}
	soc2 := map[string]any{"type": "boolean", "description": "whether Tidewater publishes a SOC 2 report"}
	tests := []struct {
		name     string
		doc      string
		question string
		field    string
		schema   map[string]any
		want     any
	}{
		{
			name:     "enum: the denied value is not chosen",
			doc:      "Tidewater is not released under the GPL-3.0 licence; its licence is Apache-2.0.",
			question: "Which licence is Tidewater released under?", field: "licence", schema: licence,
			want: "Apache-2.0",
		},
		{
			name:     "boolean: not",
			doc:      "Tidewater does not publish a SOC 2 report for its hosted service.",
			question: "Does Tidewater publish a SOC 2 report?", field: "soc2_report", schema: soc2,
			want: false,
		},
		{
			name:     "boolean: a contracted negation",
			doc:      "Tidewater hasn't published a SOC 2 report for its hosted service.",
			question: "Does Tidewater publish a SOC 2 report?", field: "soc2_report", schema: soc2,
			want: false,
		},
		{
			name:     "boolean: stated",
			doc:      "Tidewater publishes a SOC 2 report for its hosted service every year.",
			question: "Does Tidewater publish a SOC 2 report?", field: "soc2_report", schema: soc2,
			want: true,
		},
		{
			name: "boolean: a question heading answered No, sentences after it deny nothing",
			doc: "## Does Tidewater publish a SOC 2 report?\n\nNo. Tidewater publishes an ISO 27001 certificate instead, " +
				"and its SOC 2 report questionnaire answers are sent on request.",
			question: "Does Tidewater publish a SOC 2 report?", field: "soc2_report", schema: soc2,
			want: false,
		},
		{
			name: "boolean: a question heading answered No, the next sentence names the field",
			doc: "## Does the Tidewater mower need a boundary wire?\n\nNo. It finds its position with satellite navigation " +
				"corrected by a reference station. You draw the boundary of your lawn by walking the mower around it once with the app.",
			question: "Does the Tidewater mower need a boundary wire?", field: "needs_boundary_wire",
			schema: map[string]any{"type": "boolean"},
			want:   false,
		},
		{
			name: "boolean: a question heading answered Yes, sentences after it deny",
			doc: "## Is a SOC 2 report published for Tidewater?\n\nYes, every year. It does not cover the " +
				"self-hosted edition, only the SOC 2 report for the hosted service.",
			question: "Does Tidewater publish a SOC 2 report?", field: "soc2_report", schema: soc2,
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := map[string]any{
				"type":       "object",
				"required":   []any{tt.field},
				"properties": map[string]any{tt.field: tt.schema},
			}
			docs := map[string]string{"about.md": "# Tidewater\n\n" + tt.doc + "\n"}
			res, err := runOnDocs(t, docs, tt.question, schema)
			require.NoError(t, err)
			require.Equal(t, tt.want, res.StructuredOutput[tt.field])
		})
	}
}

// TestExtractiveArrayWithoutEvidence: any array the sources give no value for is null where the
// schema allows null, and empty where it does not, like an enum array.
func TestExtractiveArrayWithoutEvidence(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"release.md": "# Tidewater 3.4\n\nTidewater 3.4 parses large files twice as fast as 3.3.\n"}
	for _, tt := range []struct {
		typ  any
		want any
	}{
		{"array", []any{}},
		{[]any{"array", "null"}, nil},
	} {
		schema := map[string]any{"type": "object", "required": []any{"maintainers"}, "properties": map[string]any{
			"maintainers": map[string]any{"type": tt.typ, "items": map[string]any{"type": "string"}, "description": "names of the Tidewater maintainers"},
		}}
		res, err := runOnDocs(t, docs, "Who maintains Tidewater?", schema)
		require.NoError(t, err)
		require.Contains(t, res.StructuredOutput, "maintainers")
		require.Equal(t, tt.want, res.StructuredOutput["maintainers"], "type %v", tt.typ)
	}
}

// TestExtractiveSectionVerdict: a yes/no question answered from a section headed by that question
// leads with the section's own "No." or "Yes, …", then the passage that matched it.
func TestExtractiveSectionVerdict(t *testing.T) {
	t.Parallel()
	faq := "# Tidewater mower FAQ\n\n## Does the Tidewater mower need a boundary wire?\n\nNo. It finds its position with " +
		"satellite navigation corrected by a reference station. You draw the boundary of your lawn by walking the mower " +
		"around it once with the app.\n\n## Can the Tidewater mower mow in the rain?\n\nYes, light rain does no harm. " +
		"It returns to its station when the rain sensor reports heavy rain.\n"
	for _, tt := range []struct{ question, lead string }{
		{"Does the Tidewater mower need a boundary wire?", "“No."},
		{"Can the Tidewater mower mow in the rain?", "“Yes, light rain does no harm."},
	} {
		res, err := runOnDocs(t, map[string]string{"faq.md": faq}, tt.question, nil)
		require.NoError(t, err)
		answer := strings.TrimSpace(section(res.Report, "Answer"))
		require.True(t, strings.HasPrefix(answer, tt.lead), "%s: %s", tt.question, answer)
	}
}
