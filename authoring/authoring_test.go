package authoring_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/schema"
)

var vendorSOP = map[string]any{
	"steps":                     []any{"Identify the legal entity", "Check breaches and sanctions", "Assess financial health"},
	"risk_criteria":             []any{"public breach in the last 3 years"},
	"required_output_fields":    []any{"risk_level", "summary"},
	"recommendation_categories": []any{"approve", "reject"},
}

var vendorSchema = map[string]any{"type": "object", "required": []any{"risk_level", "summary"}, "properties": map[string]any{
	"risk_level": map[string]any{"type": "string", "enum": []any{"low", "medium", "high"}}, "summary": map[string]any{"type": "string"}}}

func TestGenerateWorkflow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		sop        map[string]any
		sample     map[string]any
		schema     map[string]any
		wantSteps  int
		wantFields []string // fields of the errors, in order
	}{
		{"valid", vendorSOP, map[string]any{"vendor_name": "Acme"}, vendorSchema, 3, nil},
		{"no steps", map[string]any{"risk_criteria": []any{"x"}}, nil, nil, 0, []string{"sop.steps"}},
		{"bad step", map[string]any{"steps": []any{"Find the entity", 3}}, nil, nil, 1, []string{"sop.steps/1"}},
		{"field missing from schema", map[string]any{"steps": []any{"Find it"}, "required_output_fields": []any{"verdict"}}, nil, vendorSchema, 1,
			[]string{"workflow.outputs/0", "workflow.outputs", "workflow.outputs"}},
		{"placeholder not in sample", map[string]any{"steps": []any{"Find {{vendor_name}} in {{country}}"}}, map[string]any{"vendor_name": "Acme"}, nil, 1,
			[]string{"workflow.steps/0.instruction"}},
		{"schema not an object", vendorSOP, nil, map[string]any{"type": "string"}, 3, []string{"output_schema"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wf, errs := authoring.GenerateWorkflow(tc.sop, tc.sample, tc.schema)
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			require.Equal(t, tc.wantFields, fields)
			if tc.wantSteps == 0 {
				require.Nil(t, wf)
				return
			}
			steps := wf["steps"].([]any)
			require.Len(t, steps, tc.wantSteps)
			ids := map[string]bool{}
			for i, s := range steps {
				st := s.(map[string]any)
				require.False(t, ids[st["id"].(string)], "ids are unique")
				ids[st["id"].(string)] = true
				if i > 0 {
					require.Equal(t, []any{steps[i-1].(map[string]any)["id"]}, st["depends_on"])
				}
			}
		})
	}
	wf, _ := authoring.GenerateWorkflow(vendorSOP, nil, vendorSchema)
	first := wf["steps"].([]any)[0].(map[string]any)
	require.Equal(t, "research", first["action"])
	require.Equal(t, "Identify the legal entity", first["instruction"])
	require.Equal(t, []any{"risk_level", "summary"}, wf["outputs"])
}

func TestPlan(t *testing.T) {
	t.Parallel()
	steps, subs := authoring.Plan(authoring.PlanInput{Question: "Assess Acme Cloud Ltd as a payroll vendor", SOP: vendorSOP, OutputSchema: vendorSchema,
		Context: "Annual spend: $100k-$1M"})
	require.NotEmpty(t, subs)
	require.Equal(t, "Read the context given", steps[0].Title)
	require.Equal(t, "Identify the legal entity", steps[1].Title)
	require.Contains(t, steps[1].Detail, "Acme Cloud Ltd")
	require.Equal(t, "Fill the output fields", steps[len(steps)-1].Title)
	require.Contains(t, steps[len(steps)-1].Detail, "risk_level")

	// Without an SOP or workflow, the numbered procedure of the system prompt is the plan.
	steps, _ = authoring.Plan(authoring.PlanInput{Question: "Is tidal power predictable?", SystemPrompt: "You are an analyst.\n\n1. Define the terms\n2. Compare sources\n"})
	require.Equal(t, []string{"Define the terms", "Compare sources"}, []string{steps[0].Title, steps[1].Title})

	// Nothing to follow: one research step per sub-question, each from the question's own terms.
	steps, subs = authoring.Plan(authoring.PlanInput{Question: "What are the costs and benefits of heat pumps?"})
	require.Len(t, steps, len(subs))
	for _, s := range steps {
		require.True(t, strings.HasPrefix(s.Title, "Research: "))
	}
}

func TestBuildDraft(t *testing.T) {
	t.Parallel()
	d := authoring.BuildDraft("Screen early-stage biotech companies: pipeline, trial phases, cash runway and partnerships; output a scorecard.", "",
		[]authoring.SkillInfo{{Name: "financial-statement-analysis", Description: "Read balance sheets, cash flow and runway of companies"}, {Name: "policy-analysis", Description: "Analyse public policy options"}})
	require.Equal(t, []string{"pipeline", "trial phases", "cash runway", "partnerships"}, d.ExpertiseAreas)
	require.NotEmpty(t, d.Name)
	require.Contains(t, d.SystemPrompt, "- cash runway")
	_, err := schema.CompileObject(d.OutputSchema)
	require.NoError(t, err)
	props := d.OutputSchema["properties"].(map[string]any)
	for _, k := range []string{"pipeline", "trial_phases", "cash_runway", "partnerships", "overall_score", "summary"} {
		require.Contains(t, props, k)
	}
	require.Equal(t, []string{"financial-statement-analysis"}, d.SkillNames)

	named := authoring.BuildDraft("Answer questions about EU VAT rules for cross-border SaaS sales, citing the directive articles.", "EU VAT Advisor", nil)
	require.Equal(t, "EU VAT Advisor", named.Name)
	require.Nil(t, named.OutputSchema, "no topics, no fields: no invented schema")
}
