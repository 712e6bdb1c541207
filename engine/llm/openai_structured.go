package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// structured asks for the structured output (the caller's schema, in the most constrained answer
// format the server accepts), reads and validates it with the one parser, retries once with the
// validator's errors, and then settles what is still invalid field by field: an invalid field that
// may be null or left out is, and only a required one fails the run, naming it. Then it asks which
// evidence supports each field (the basis) and writes it for verification.
func (r *agentRun) structured(ctx context.Context, schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	em := r.em
	if err := em.Event(ctx, engine.KindToolCall, "structured_output", "Requesting output that matches json_schema", map[string]any{"tool": "structured_output"}); err != nil {
		return nil, err
	}
	out, problems, err := r.s.askJSON(ctx, jsonAsk{
		Build:  r.writing,
		Prompt: "Now return the structured output for the question as a JSON object that matches the given JSON Schema, using only the evidence above. A field the evidence does not support is null when the schema allows null, else left out when it is optional. Return JSON only.",
		Format: jsonFormat{Name: "structured_output", Schema: schema}, Sch: sch, Want: r.writeTokens(), What: "the structured output", RetryUnreadable: true,
		Fix: func(problems []string) string {
			return "That output does not match the JSON Schema: " + strings.Join(problems, "; ") + "\nReturn the corrected JSON object only."
		},
		Answered: func(attempt int, raw string, _ map[string]any, problems []string) error {
			if err := em.Event(ctx, engine.KindToolResult, "structured_output", nlp.Truncate(stripThinking(raw), eventContentChars), map[string]any{"tool": "structured_output", "attempt": attempt}); err != nil {
				return err
			}
			if len(problems) == 0 {
				return nil
			}
			return em.Event(ctx, engine.KindStatus, "Structured output invalid", strings.Join(problems, "; "), map[string]any{"attempt": attempt})
		},
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errorNaming(engine.CodeStructuredOutputInvalid, "the model's structured output is not a JSON object, after a retry", problems)
	}
	if len(problems) > 0 {
		if out, err = r.settleInvalid(ctx, schema, sch, out); err != nil {
			return nil, err
		}
	}
	basis, err := r.basis(ctx, out)
	if err != nil {
		return nil, err
	}
	if err := engine.WriteBasis(r.in.Workspace, basis); err != nil {
		return nil, err
	}
	return out, nil
}

// settleInvalid drops (or nulls) the top-level fields the validator still objects to, when the
// schema lets it; a required field that stays invalid fails the run, naming it.
func (r *agentRun) settleInvalid(ctx context.Context, schema map[string]any, sch *jsonschema.Schema, out map[string]any) (map[string]any, error) {
	props, _ := schema["properties"].(map[string]any)
	required := engine.RequiredFields(schema)
	fixed := maps.Clone(out)
	var settled, failed []string
	for _, f := range slices.Sorted(maps.Keys(out)) {
		if fieldValid(schema, f, out[f]) {
			continue
		}
		switch {
		case engine.AllowsNull(schema, props[f]):
			fixed[f] = nil
		case !required[f]:
			delete(fixed, f)
		default:
			failed = append(failed, f)
			continue
		}
		settled = append(settled, f)
	}
	for f := range required {
		if _, ok := fixed[f]; !ok && !slices.Contains(failed, f) {
			failed = append(failed, f)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return nil, engine.Errorf(engine.CodeStructuredOutputInvalid, "required field %s of json_schema could not be filled with a valid value (after a retry)", engine.QuotedNames(failed))
	}
	if err := engine.ValidateOutput(sch, fixed); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Fields set to null or left out because their value did not match json_schema: %s.", strings.Join(settled, ", "))
	if err := r.em.Event(ctx, engine.KindStatus, "Structured output settled", msg, map[string]any{"fields": settled}); err != nil {
		return nil, err
	}
	return fixed, nil
}

// fieldValid checks one top-level field against its property schema (with the root's definitions,
// so $ref works) by validating a one-field object.
func fieldValid(schema map[string]any, field string, value any) bool {
	props, _ := schema["properties"].(map[string]any)
	prop, ok := props[field]
	if !ok {
		return true // judged by additionalProperties at the final validation
	}
	one := map[string]any{"type": "object", "properties": map[string]any{field: prop}}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := schema[k]; ok {
			one[k] = d
		}
	}
	sch, err := engine.CompileSchema(one)
	if err != nil {
		return false
	}
	return engine.ValidateOutput(sch, map[string]any{field: value}) == nil
}

// basisSchema asks, per top-level field, for citations and a confidence.
func basisSchema(fields []string) map[string]any {
	props := map[string]any{}
	for _, f := range fields {
		props[f] = map[string]any{
			"type": "object", "additionalProperties": false, "required": []any{"citations", "confidence"},
			"properties": map[string]any{
				"citations":  map[string]any{"type": "array", "items": citationSchema()},
				"confidence": map[string]any{"type": "string", "enum": []any{engine.ConfidenceHigh, engine.ConfidenceMedium, engine.ConfidenceLow}},
			},
		}
	}
	req := make([]any, len(fields))
	for i, f := range fields {
		req[i] = f
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": req}
}

// basis asks which quotes support each field of out. Fields whose evidence cannot be read (after
// a retry) are left without citations: verification then settles them as unsupported.
func (r *agentRun) basis(ctx context.Context, out map[string]any) (engine.Basis, error) {
	fields := slices.Sorted(maps.Keys(out))
	b, _ := json.Marshal(out)
	bs := basisSchema(fields)
	sch, err := engine.CompileSchema(bs)
	if err != nil {
		return nil, fmt.Errorf("engine: basis schema: %w", err)
	}
	prompt := "The structured output is:\n" + string(b) + "\n\nFor each top-level field of that output, give the evidence: citations (a source id such as S3 and a quote copied word for word from it) and a confidence: high (stated outright by the sources), medium (inferred from them) or low (weak or no evidence). A null field has no citations and confidence low. Return JSON only."
	obj, problems, err := r.s.askJSON(ctx, jsonAsk{
		Build: r.writing, Prompt: prompt, Format: jsonFormat{Name: "structured_output_basis", Schema: bs}, Sch: sch,
		Want: r.writeTokens(), What: "the structured output's evidence", RetryUnreadable: true,
		Fix: func(problems []string) string {
			return "That is not a JSON object of the requested form (" + strings.Join(problems, "; ") + "). Return the JSON object only."
		},
		Answered: func(attempt int, raw string, _ map[string]any, _ []string) error {
			return r.em.Event(ctx, engine.KindToolResult, "structured_output_basis", nlp.Truncate(stripThinking(raw), eventContentChars), map[string]any{"tool": "structured_output_basis", "attempt": attempt})
		},
	})
	if err != nil {
		return nil, err
	}
	basis := engine.Basis{}
	for f, v := range obj {
		// A field the model got wrong is left out (unsupported); the others stand.
		var fb engine.FieldBasis
		if m, ok := v.(map[string]any); ok && decodeInto(m, &fb) == nil && (len(problems) == 0 || fieldValid(bs, f, v)) {
			basis[f] = fb
		}
	}
	// Citations name sources by id; the stored origin is what callers see.
	for f, fb := range basis {
		for i, c := range fb.Citations {
			if st, ok := r.srcs.Lookup(c.Source); ok {
				fb.Citations[i].Source = st.Origin
			}
		}
		basis[f] = fb
	}
	return basis, nil
}
