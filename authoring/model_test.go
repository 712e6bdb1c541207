package authoring_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/authoring"
)

// answers is a Model that returns scripted drafts in order (an error when it runs out).
type answers []map[string]any

func (a *answers) DraftJSON(context.Context, string, string, map[string]any) (map[string]any, error) {
	if len(*a) == 0 {
		return nil, errors.New("no answer")
	}
	out := (*a)[0]
	*a = (*a)[1:]
	return out, nil
}

func TestAuthorWithModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &answers{
		{"steps": []any{map[string]any{"title": "Scope", "detail": "Pin down the vendor"}}, "sub_questions": []any{"Who owns Acme?"}},
		{"steps": []any{map[string]any{"action": "analyze", "instruction": "Find {{vendor}} filings"}, map[string]any{"action": "summarize", "instruction": "Rate it"}}},
		{"system_prompt": "You screen biotechs.", "description": "Screens biotechs.", "expertise_areas": []any{"pipeline"}, "tags": []any{"biotech"},
			"skill_names": []any{"market-sizing", "invented-skill"}, "output_schema": map[string]any{"type": "object", "properties": map[string]any{"score": map[string]any{"type": "number"}}}},
	}
	a := authoring.Author{Model: m}
	steps, subs := a.Plan(ctx, authoring.PlanInput{Question: "Is Acme safe?"})
	require.Equal(t, []authoring.PlanStep{{Title: "Scope", Detail: "Pin down the vendor"}}, steps)
	require.Equal(t, []string{"Who owns Acme?"}, subs)

	wf, errs := a.GenerateWorkflow(ctx, map[string]any{"steps": []any{"Find the filings", "Rate the risk"}}, map[string]any{"name": "Acme"}, nil)
	require.Equal(t, "analyze", wf["steps"].([]any)[0].(map[string]any)["action"], "the model words the steps")
	require.Len(t, errs, 1, "and the same rules still validate them: {{vendor}} is not in the sample")

	d := a.BuildDraft(ctx, "Screen biotech companies: pipeline", "", []authoring.SkillInfo{{Name: "market-sizing", Description: "Size markets"}})
	require.Equal(t, "You screen biotechs.", d.SystemPrompt)
	require.Equal(t, []string{"market-sizing"}, d.SkillNames, "only catalogue skills are linked")

	// Out of answers: every operation falls back to the text rules.
	steps, _ = a.Plan(ctx, authoring.PlanInput{Question: "What are the costs and benefits of heat pumps?"})
	require.NotEmpty(t, steps)
	require.Equal(t, "Research: ", steps[0].Title[:10])
}
