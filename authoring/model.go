package authoring

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/researchd/researchd/schema"
)

// Model drafts a JSON object matching a schema from a prompt (the configured chat model; the
// openai engine implements it). Every answer is checked here as well; one that does not hold up
// falls back to the deterministic result, so a caller always gets a usable answer.
type Model interface {
	DraftJSON(ctx context.Context, system, user string, schema map[string]any) (map[string]any, error)
}

// Author runs the authoring operations with a model when one is configured, else (and whenever
// the model's answer is unusable) deterministically from the text.
type Author struct {
	Model Model // nil: deterministic only
	Log   *slog.Logger
}

const groundRule = "Use only what the given text says: never invent facts, names or numbers. "

var (
	objectOrNull   = map[string]any{"type": []any{"object", "null"}}
	stringListType = map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1}}
)

func (a Author) draft(ctx context.Context, what, system, user string, sch map[string]any) map[string]any {
	if a.Model == nil {
		return nil
	}
	out, err := a.Model.DraftJSON(ctx, system, user, sch)
	if err != nil {
		if a.Log != nil {
			a.Log.WarnContext(ctx, "authoring model answer unusable; falling back to the text rules", "what", what, "error", err)
		}
		return nil
	}
	return out
}

// Extract is Extract with the model when there is one.
func (a Author) Extract(ctx context.Context, text string) Extraction {
	out := a.draft(ctx, "extract",
		groundRule+"Turn the pasted procedure, playbook or prompt into an expert configuration: a system_prompt; an output_sop object with steps, risk_criteria, required_output_fields and recommendation_categories (arrays of strings), or null when the text has no procedure; an output_schema (a JSON Schema with \"type\": \"object\") for the fields the text asks for, or null when it names none.",
		text, map[string]any{"type": "object", "required": []any{"system_prompt", "output_sop", "output_schema"}, "properties": map[string]any{
			"system_prompt": map[string]any{"type": "string", "minLength": 1}, "output_sop": objectOrNull, "output_schema": objectOrNull}})
	if out == nil {
		return Extract(text)
	}
	x := Extraction{SystemPrompt: out["system_prompt"].(string)}
	x.OutputSOP, _ = out["output_sop"].(map[string]any)
	x.OutputSchema, _ = out["output_schema"].(map[string]any)
	if x.OutputSchema != nil {
		if _, err := schema.CompileObject(x.OutputSchema); err != nil {
			return Extract(text)
		}
	}
	return x
}

// Plan is Plan with the model when there is one.
func (a Author) Plan(ctx context.Context, in PlanInput) ([]PlanStep, []string) {
	user := fmt.Sprintf("Expert instructions:\n%s\n\nQuestion: %s\n\nContext: %s", in.SystemPrompt, in.Question, in.Context)
	if fields := schemaFields(in.OutputSchema); len(fields) > 0 {
		user += "\n\nThe answer must fill: " + strings.Join(fields, ", ")
	}
	out := a.draft(ctx, "plan-preview",
		groundRule+"Plan how the expert described below researches the question: ordered steps (title and detail) and the sub-questions research would pursue. Plan only; do not answer.",
		user, map[string]any{"type": "object", "required": []any{"steps", "sub_questions"}, "properties": map[string]any{
			"steps": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "object", "required": []any{"title", "detail"},
				"properties": map[string]any{"title": map[string]any{"type": "string", "minLength": 1}, "detail": map[string]any{"type": "string"}}}},
			"sub_questions": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "minLength": 1}}}})
	if out == nil {
		return Plan(in)
	}
	var steps []PlanStep
	for _, s := range out["steps"].([]any) {
		m := s.(map[string]any)
		steps = append(steps, PlanStep{Title: m["title"].(string), Detail: m["detail"].(string)})
	}
	var subs []string
	for _, q := range out["sub_questions"].([]any) {
		subs = append(subs, q.(string))
	}
	return steps, subs
}

// GenerateWorkflow is GenerateWorkflow with the model when there is one: the model may word the
// steps and actions, but the workflow is validated by the same rules either way.
func (a Author) GenerateWorkflow(ctx context.Context, sop, sampleInput, outputSchema map[string]any) (map[string]any, []FieldError) {
	if a.Model == nil {
		return GenerateWorkflow(sop, sampleInput, outputSchema)
	}
	texts, errs := sopSteps(sop)
	if len(texts) == 0 {
		return nil, errs
	}
	out := a.draft(ctx, "generate-workflow",
		groundRule+"Turn each SOP step into one workflow step, in order: an action (research, analyze or summarize) and a precise instruction. Keep {{placeholders}} as they are.",
		"SOP steps:\n- "+strings.Join(texts, "\n- "), map[string]any{"type": "object", "required": []any{"steps"}, "properties": map[string]any{
			"steps": map[string]any{"type": "array", "minItems": len(texts), "maxItems": len(texts), "items": map[string]any{"type": "object",
				"required": []any{"action", "instruction"}, "properties": map[string]any{
					"action":      map[string]any{"type": "string", "enum": []any{"research", "analyze", "summarize"}},
					"instruction": map[string]any{"type": "string", "minLength": 1}}}}}})
	if out == nil {
		return GenerateWorkflow(sop, sampleInput, outputSchema)
	}
	worded := make([]any, len(texts))
	for i, s := range out["steps"].([]any) {
		worded[i] = s.(map[string]any)["instruction"]
	}
	wf, errs := GenerateWorkflow(map[string]any{"steps": worded, "risk_criteria": sop["risk_criteria"],
		"required_output_fields": sop["required_output_fields"], "recommendation_categories": sop["recommendation_categories"]}, sampleInput, outputSchema)
	if wf != nil {
		for i, s := range wf["steps"].([]any) {
			s.(map[string]any)["action"] = out["steps"].([]any)[i].(map[string]any)["action"]
		}
	}
	return wf, errs
}

// BuildDraft is BuildDraft with the model when there is one; linked skills are limited to the
// catalogue given and the output schema must compile, else the deterministic draft stands.
func (a Author) BuildDraft(ctx context.Context, description, name string, skills []SkillInfo) Draft {
	base := BuildDraft(description, name, skills)
	var names []string
	for _, s := range skills {
		names = append(names, s.Name+": "+s.Description)
	}
	out := a.draft(ctx, "build",
		groundRule+"Draft a research expert for the domain described: a system_prompt that tells it how to research and answer, a one-sentence description, expertise_areas, up to 5 tags, skill_names chosen only from the list given, and an output_schema (JSON Schema, \"type\": \"object\") for what a good answer contains.",
		description+"\n\nSkills available:\n"+strings.Join(names, "\n"), map[string]any{"type": "object",
			"required": []any{"system_prompt", "description", "expertise_areas", "tags", "skill_names", "output_schema"}, "properties": map[string]any{
				"system_prompt": map[string]any{"type": "string", "minLength": 1}, "description": map[string]any{"type": "string", "maxLength": 5000},
				"expertise_areas": stringListType, "tags": map[string]any{"type": "array", "maxItems": 5, "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 50}},
				"skill_names": stringListType, "output_schema": map[string]any{"type": "object"}}})
	if out == nil {
		return base
	}
	sch, _ := out["output_schema"].(map[string]any)
	if _, err := schema.CompileObject(sch); err != nil {
		return base
	}
	d := base
	d.SystemPrompt, d.Description, d.OutputSchema = out["system_prompt"].(string), out["description"].(string), sch
	d.ExpertiseAreas, d.Tags, d.SkillNames = stringList(out["expertise_areas"]), stringList(out["tags"]), nil
	for _, n := range stringList(out["skill_names"]) {
		if slices.ContainsFunc(skills, func(s SkillInfo) bool { return s.Name == n }) {
			d.SkillNames = append(d.SkillNames, n)
		}
	}
	return d
}

func stringList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
