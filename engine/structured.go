package engine

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/schema"
)

// CompileSchema compiles a caller's JSON Schema through the shared, loader-less compiler.
func CompileSchema(doc map[string]any) (*jsonschema.Schema, error) {
	sch, err := schema.Compile(doc)
	if err != nil {
		return nil, Errorf(CodeInvalidJSONSchema, "json_schema: %v", err)
	}
	return sch, nil
}

// ValidateStructuredOutput checks output against a caller's schema. It returns an *Error with
// code invalid_json_schema when the schema itself is unusable and structured_output_invalid when
// the output does not validate. The job runner may call it too (it is what both engines use).
func ValidateStructuredOutput(schema map[string]any, output map[string]any) error {
	sch, err := CompileSchema(schema)
	if err != nil {
		return err
	}
	return ValidateOutput(sch, output)
}

// ValidateOutput is ValidateStructuredOutput with the schema compiled.
func ValidateOutput(sch *jsonschema.Schema, output map[string]any) error {
	v, err := schema.ToJSONValue(output)
	if err != nil {
		return Errorf(CodeStructuredOutputInvalid, "structured output is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = validationSummary(ve)
		}
		return Errorf(CodeStructuredOutputInvalid, "structured output does not match json_schema: %s", msg)
	}
	return nil
}

// validationSummary lists the leaf errors as "/path: message" lines.
func validationSummary(ve *jsonschema.ValidationError) string {
	var out []string
	seen := map[string]bool{}
	var walk func(e *jsonschema.OutputUnit)
	walk = func(e *jsonschema.OutputUnit) {
		if len(e.Errors) == 0 && e.Error != nil {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			if line := loc + ": " + e.Error.String(); !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
		for i := range e.Errors {
			walk(&e.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	if len(out) == 0 {
		return ve.Error()
	}
	return strings.Join(out, "; ")
}

// NormalizeJSON turns any JSON-able map into plain encoding/json values (float64 numbers).
func NormalizeJSON(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
