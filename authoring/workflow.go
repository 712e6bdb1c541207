package authoring

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/schema"
)

// FieldError names a problem and where it is.
type FieldError struct{ Field, Message string }

var (
	placeholder    = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_ ]*)\s*\}\}`)
	researchVerbs  = []string{"identify", "find", "check", "search", "confirm", "review", "collect", "gather", "look", "verify", "investigate", "locate", "list", "screen", "read", "extract"}
	analyzeVerbs   = []string{"assess", "analyze", "analyse", "compare", "evaluate", "calculate", "estimate", "measure", "model", "benchmark", "test"}
	summarizeVerbs = []string{"write", "summarize", "summarise", "draft", "report", "rate", "score", "classify", "recommend", "decide", "conclude", "grade", "rank", "present"}
)

// GenerateWorkflow authors a workflow from an SOP shaped like output_sop (steps, risk_criteria,
// required_output_fields, recommendation_categories) and validates it against the sample input and
// output schema when given. workflow is nil when no step could be authored; the workflow is valid
// when errs is empty.
func GenerateWorkflow(sop, sampleInput, outputSchema map[string]any) (workflow map[string]any, errs []FieldError) {
	texts, errs := sopSteps(sop)
	if len(texts) == 0 {
		return nil, errs
	}
	steps := make([]any, 0, len(texts))
	used := map[string]bool{}
	prev := ""
	for i, text := range texts {
		id := uniqueID(stepID(text), used)
		st := map[string]any{"id": id, "action": actionOf(text), "instruction": text}
		if prev != "" {
			st["depends_on"] = []any{prev}
		}
		steps = append(steps, st)
		prev = id
		if sampleInput != nil {
			for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
				if _, ok := sampleInput[strings.TrimSpace(m[1])]; !ok {
					errs = append(errs, FieldError{fmt.Sprintf("workflow.steps/%d.instruction", i),
						fmt.Sprintf("placeholder {{%s}} is not a field of sample_input", strings.TrimSpace(m[1]))})
				}
			}
		}
	}
	workflow = map[string]any{"steps": steps}
	for _, k := range []string{"risk_criteria", "recommendation_categories"} {
		if v, ok := sop[k].([]any); ok && len(v) > 0 {
			workflow[k] = v
		}
	}
	outputs, outErrs := workflowOutputs(sop, outputSchema)
	errs = append(errs, outErrs...)
	if len(outputs) > 0 {
		workflow["outputs"] = anyList(outputs)
	}
	return workflow, errs
}

func sopSteps(sop map[string]any) ([]string, []FieldError) {
	raw, ok := sop["steps"].([]any)
	if !ok || len(raw) == 0 {
		return nil, []FieldError{{"sop.steps", "the SOP needs a non-empty list of steps"}}
	}
	var out []string
	var errs []FieldError
	for i, s := range raw {
		text := stepText(s)
		if text == "" {
			errs = append(errs, FieldError{fmt.Sprintf("sop.steps/%d", i), "a step is a non-empty string or an object with a title or instruction"})
			continue
		}
		out = append(out, text)
	}
	return out, errs
}

func stepText(s any) string {
	switch v := s.(type) {
	case string:
		return strings.TrimSpace(v)
	case map[string]any:
		for _, k := range []string{"instruction", "title", "name", "description", "step"} {
			if t, ok := v[k].(string); ok && strings.TrimSpace(t) != "" {
				return strings.TrimSpace(t)
			}
		}
	}
	return ""
}

// workflowOutputs are the fields the last step fills: the SOP's required_output_fields, else the
// output schema's required fields. Each must be a property of the output schema when one is given.
func workflowOutputs(sop, outputSchema map[string]any) ([]string, []FieldError) {
	var outputs []string
	if raw, ok := sop["required_output_fields"].([]any); ok {
		for _, f := range raw {
			if s, ok := f.(string); ok && strings.TrimSpace(s) != "" {
				outputs = append(outputs, strings.TrimSpace(s))
			}
		}
	}
	if outputSchema == nil {
		return outputs, nil
	}
	if _, err := schema.CompileObject(outputSchema); err != nil {
		return outputs, []FieldError{{"output_schema", err.Error()}}
	}
	props, _ := outputSchema["properties"].(map[string]any)
	var errs []FieldError
	for i, o := range outputs {
		if _, ok := props[o]; !ok {
			errs = append(errs, FieldError{fmt.Sprintf("workflow.outputs/%d", i), fmt.Sprintf("%q is not a property of output_schema", o)})
		}
	}
	if req, ok := outputSchema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok && !slices.Contains(outputs, s) {
				if len(outputs) > 0 && sop["required_output_fields"] != nil {
					errs = append(errs, FieldError{"workflow.outputs", fmt.Sprintf("output_schema requires %q but the SOP's required_output_fields do not produce it", s)})
				}
				outputs = append(outputs, s)
			}
		}
	}
	return dedupe(outputs), errs
}

func stepID(text string) string {
	var words []string
	for _, w := range strings.Fields(placeholder.ReplaceAllString(text, " ")) {
		w = strings.ToLower(strings.Trim(w, ".,;:()\"'"))
		if len(w) < 3 || idStopwords[w] {
			continue
		}
		words = append(words, w)
		if len(words) == 3 {
			break
		}
	}
	id := fieldKey(strings.Join(words, " "))
	if id == "" {
		id = "step"
	}
	return id
}

var idStopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "its": true, "their": true, "any": true, "all": true, "each": true, "that": true, "this": true, "of": true}

func uniqueID(id string, used map[string]bool) string {
	out := id
	for n := 2; used[out]; n++ {
		out = fmt.Sprintf("%s_%d", id, n)
	}
	used[out] = true
	return out
}

func actionOf(text string) string {
	first := strings.ToLower(strings.Trim(strings.SplitN(strings.TrimSpace(text), " ", 2)[0], ".,:;"))
	switch {
	case slices.Contains(summarizeVerbs, first):
		return "summarize"
	case slices.Contains(analyzeVerbs, first):
		return "analyze"
	case slices.Contains(researchVerbs, first):
		return "research"
	}
	return "research"
}
