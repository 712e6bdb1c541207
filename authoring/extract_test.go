package authoring_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/schema"
)

func TestExtract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		text       string
		steps      []any
		fields     []any
		enums      map[string][]any
		criteria   []any
		categories []any
		promptHas  []string
	}{
		{
			name:      "numbered playbook",
			text:      "Vendor review playbook\n1. Confirm the legal entity.\n2. Check for breaches in the last 3 years.\n3. Rate risk low/medium/high and write a summary.",
			steps:     []any{"Confirm the legal entity", "Check for breaches in the last 3 years", "Rate risk low/medium/high and write a summary"},
			fields:    []any{"risk_level", "summary"},
			enums:     map[string][]any{"risk_level": {"low", "medium", "high"}},
			promptHas: []string{"Vendor review playbook", "1. Confirm the legal entity", "risk_level (one of: low, medium, high)"},
		},
		{
			name:       "markdown sections",
			text:       "# Supplier due diligence\n\nWe assess suppliers before signing.\n\n## Steps\n- Identify the parent company\n- Review sanctions lists and\n  adverse media\n\n## Red flags\n- Going-concern warning\n- Sanctioned owner\n\n## Output fields\n- Risk level: low, medium or high\n- Employee count\n- Summary\n\n## Recommendation\n- approve\n- approve with conditions\n- reject\n",
			steps:      []any{"Identify the parent company", "Review sanctions lists and adverse media"},
			fields:     []any{"risk_level", "employee_count", "summary"},
			enums:      map[string][]any{"risk_level": {"low", "medium", "high"}},
			criteria:   []any{"Going-concern warning", "Sanctioned owner"},
			categories: []any{"approve", "approve with conditions", "reject"},
			promptHas:  []string{"Supplier due diligence", "Sanctioned owner", "approve with conditions"},
		},
		{
			name:      "a pasted prompt is kept",
			text:      "You are a careful tax analyst. Answer questions about VAT.",
			promptHas: []string{"You are a careful tax analyst. Answer questions about VAT."},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := authoring.Extract(tc.text)
			for _, p := range tc.promptHas {
				require.Contains(t, x.SystemPrompt, p)
			}
			if tc.steps == nil && tc.fields == nil {
				require.Nil(t, x.OutputSOP)
				require.Nil(t, x.OutputSchema)
				return
			}
			require.Equal(t, tc.steps, x.OutputSOP["steps"])
			require.Equal(t, tc.fields, x.OutputSOP["required_output_fields"])
			optional(t, tc.criteria, x.OutputSOP["risk_criteria"])
			optional(t, tc.categories, x.OutputSOP["recommendation_categories"])
			_, err := schema.CompileObject(x.OutputSchema)
			require.NoError(t, err)
			require.Equal(t, tc.fields, x.OutputSchema["required"])
			props := x.OutputSchema["properties"].(map[string]any)
			for k, want := range tc.enums {
				require.Equal(t, want, props[k].(map[string]any)["enum"], k)
			}
		})
	}
}

func optional(t *testing.T, want []any, got any) {
	t.Helper()
	if want == nil {
		require.Nil(t, got)
		return
	}
	require.Equal(t, want, got)
}
