package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// structured asks for the structured output (response_format json_schema with the caller's
// schema), validates it ourselves (providers differ in how strictly they follow a schema), retries
// once with the validator's errors, and then settles what is still invalid field by field: an
// invalid field that may be null or left out is, and only a required one fails the run, naming it.
// Then it asks which evidence supports each field (the basis) and writes it for verification.
func (r *agentRun) structured(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion, schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	em := r.em
	if err := em.Event(ctx, engine.KindToolCall, "structured_output", "Requesting output that matches json_schema", map[string]any{"tool": "structured_output"}); err != nil {
		return nil, err
	}
	messages = append(messages, openai.UserMessage("Now return the structured output for the question as a JSON object that matches the given JSON Schema, using only the evidence gathered above. A field the evidence does not support is null when the schema allows null, else left out when it is optional. Return JSON only."))
	var out map[string]any
	var problem error
	for attempt := 1; attempt <= 2; attempt++ {
		raw, err := r.jsonCall(ctx, messages, "structured_output", schema, r.writeTokens())
		if err != nil {
			return nil, err
		}
		if err := em.Event(ctx, engine.KindToolResult, "structured_output", nlp.Truncate(raw, eventContentChars), map[string]any{"tool": "structured_output", "attempt": attempt}); err != nil {
			return nil, err
		}
		out, problem = nil, nil
		if err := json.Unmarshal([]byte(raw), &out); err != nil || out == nil {
			problem = engine.Errorf(engine.CodeStructuredOutputInvalid, "the model's structured output is not a JSON object")
		} else {
			problem = engine.ValidateOutput(sch, out)
		}
		if problem == nil {
			break
		}
		if err := em.Event(ctx, engine.KindStatus, "Structured output invalid", problem.Error(), map[string]any{"attempt": attempt}); err != nil {
			return nil, err
		}
		messages = append(messages, openai.AssistantMessage(raw), openai.UserMessage(
			"That output does not match the JSON Schema: "+problemText(problem)+"\nReturn the corrected JSON object only."))
	}
	if problem != nil {
		if out == nil {
			return nil, problem
		}
		var err error
		if out, err = r.settleInvalid(ctx, schema, sch, out); err != nil {
			return nil, err
		}
	}
	basis, err := r.basis(ctx, messages, out)
	if err != nil {
		return nil, err
	}
	if err := engine.WriteBasis(r.in.Workspace, basis); err != nil {
		return nil, err
	}
	return out, nil
}

func problemText(err error) string {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return ee.Message
	}
	return err.Error()
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

// basis asks which quotes support each field of out. An answer that cannot be read twice leaves
// every field without citations (verification then settles them as unsupported).
func (r *agentRun) basis(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion, out map[string]any) (engine.Basis, error) {
	fields := slices.Sorted(maps.Keys(out))
	b, _ := json.Marshal(out)
	messages = append(messages, openai.AssistantMessage(string(b)), openai.UserMessage(
		"For each top-level field of that output, give the evidence: citations (a source id such as S3 and a quote copied word for word from it) and a confidence: high (stated outright by the sources), medium (inferred from them) or low (weak or no evidence). A null field has no citations and confidence low. Return JSON only."))
	basis := engine.Basis{}
	for attempt := 1; attempt <= 2; attempt++ {
		raw, err := r.jsonCall(ctx, messages, "structured_output_basis", basisSchema(fields), r.writeTokens())
		if err != nil {
			return nil, err
		}
		if err := r.em.Event(ctx, engine.KindToolResult, "structured_output_basis", nlp.Truncate(raw, eventContentChars), map[string]any{"tool": "structured_output_basis", "attempt": attempt}); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(raw), &basis); err == nil {
			break
		}
		basis = engine.Basis{}
		messages = append(messages, openai.AssistantMessage(raw), openai.UserMessage("That is not a JSON object of the requested form. Return the JSON object only."))
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
