package authoring

import (
	"fmt"
	"sort"
	"strings"

	"github.com/researchd/researchd/engine/extractive"
)

// PlanInput is what the planner knows about an expert and a question.
type PlanInput struct {
	Question, Context string
	SystemPrompt      string
	SOP               map[string]any // output_sop
	Workflow          map[string]any // pinned_workflow
	OutputSchema      map[string]any
}

// PlanStep is one planned step.
type PlanStep struct{ Title, Detail string }

// maxSubQuestions matches the depth of a high-effort run.
const maxSubQuestions = 6

// Plan is the planning phase alone: the steps the expert would follow for the question (from its
// pinned workflow, else its SOP, else the numbered procedure in its system prompt, else one
// research step per sub-question) and the sub-questions research would pursue.
func Plan(in PlanInput) (steps []PlanStep, subQuestions []string) {
	subQuestions = extractive.SubQuestions(in.Question, maxSubQuestions)
	if len(subQuestions) == 0 {
		subQuestions = []string{strings.TrimSpace(in.Question)}
	}
	subject := subjectOf(in.Question)
	for _, text := range procedure(in) {
		steps = append(steps, PlanStep{Title: shorten(text, 100), Detail: fillPlaceholders(text, in.Context) + " — for " + subject + "."})
	}
	if len(steps) == 0 {
		for _, q := range subQuestions {
			steps = append(steps, PlanStep{Title: "Research: " + shorten(q, 90), Detail: "Search the sources for passages that answer it and quote them."})
		}
	}
	if fields := schemaFields(in.OutputSchema); len(fields) > 0 {
		steps = append(steps, PlanStep{Title: "Fill the output fields",
			Detail: "Fill " + strings.Join(fields, ", ") + " from the cited evidence; a field the sources do not support stays empty."})
	}
	if strings.TrimSpace(in.Context) != "" {
		steps = append([]PlanStep{{Title: "Read the context given", Detail: shorten(strings.TrimSpace(in.Context), 300)}}, steps...)
	}
	return steps, subQuestions
}

func procedure(in PlanInput) []string {
	for _, src := range []map[string]any{in.Workflow, in.SOP} {
		if src == nil {
			continue
		}
		if raw, ok := src["steps"].([]any); ok {
			var out []string
			for _, s := range raw {
				if t := stepText(s); t != "" {
					out = append(out, t)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	for _, s := range outline(in.SystemPrompt) {
		if s.Numbered && len(s.Items) > 1 {
			return s.Items
		}
	}
	return nil
}

func schemaFields(s map[string]any) []string {
	props, _ := s["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// subjectOf is the question's main key phrase, or the question itself when it has none.
func subjectOf(q string) string {
	if kp := extractive.KeyPhrases(q); len(kp) > 0 {
		return fmt.Sprintf("%q", kp[0])
	}
	return fmt.Sprintf("%q", shorten(strings.TrimSpace(q), 80))
}

// fillPlaceholders replaces {{field}} with the value of "field: value" lines of the context.
func fillPlaceholders(text, context string) string {
	values := map[string]string{}
	for _, line := range strings.Split(context, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			values[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		key := strings.ToLower(strings.TrimSpace(placeholder.FindStringSubmatch(m)[1]))
		if v, ok := values[key]; ok && v != "" {
			return v
		}
		return m
	})
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
