package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/researchd/researchd/workspace"
)

// StructuredOutputBasisPath holds a run's structured_output_basis in the workspace.
const StructuredOutputBasisPath = "structured_output_basis.json"

// Confidence levels of a structured-output field.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// BasisCitation is one piece of evidence for a field: a stored source (its origin, id or stored
// path) and a verbatim quote from it.
type BasisCitation struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// FieldBasis is what supports one top-level field of the structured output.
type FieldBasis struct {
	Citations  []BasisCitation `json:"citations"`
	Confidence string          `json:"confidence"`
}

// Basis maps each top-level field of the structured output to its support.
type Basis map[string]FieldBasis

// WriteBasis writes a run's basis into the workspace (the runner verifies it with the report).
func WriteBasis(repo *workspace.Repo, b Basis) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("engine: encode basis: %w", err)
	}
	if err := repo.WriteFile(StructuredOutputBasisPath, append(data, '\n')); err != nil {
		return fmt.Errorf("engine: write basis: %w", err)
	}
	return nil
}

// ReadBasis reads the basis a run wrote; nil when it wrote none.
func ReadBasis(repo *workspace.Repo) (Basis, error) {
	data, err := repo.ReadWorking(StructuredOutputBasisPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine: read basis: %w", err)
	}
	var b Basis
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("engine: decode basis: %w", err)
	}
	if b == nil {
		b = Basis{}
	}
	return b, nil
}

// ApplyBasis settles a structured output against its (verified) basis. Every field of the output
// and every top-level property of the schema gets an entry. A field with a value (other than an
// empty array) but no citation is unsupported: it becomes null when the schema allows null, is dropped when it is optional, and
// fails the run (structured_output_invalid, naming the field) when it is required. Null and missing
// fields have confidence low; a confidence other than high, medium or low becomes medium.
func ApplyBasis(schema, output map[string]any, basis Basis) (map[string]any, Basis, []string, error) {
	out := maps.Clone(output)
	if out == nil {
		out = map[string]any{}
	}
	settled := Basis{}
	props, _ := schema["properties"].(map[string]any)
	required := RequiredFields(schema)
	fields := map[string]bool{}
	for k := range out {
		fields[k] = true
	}
	for k := range props {
		fields[k] = true
	}
	var unsupported, missing []string
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		fb := basis[f]
		if fb.Citations == nil {
			fb.Citations = []BasisCitation{}
		}
		switch fb.Confidence {
		case ConfidenceHigh, ConfidenceMedium, ConfidenceLow:
		default:
			fb.Confidence = ConfidenceMedium
		}
		val, present := out[f]
		if present && val != nil && len(fb.Citations) == 0 && !isConst(props[f], val) && !isEmptyArray(val) {
			unsupported = append(unsupported, f)
			switch {
			case AllowsNull(schema, props[f]):
				out[f] = nil
			case !required[f]:
				delete(out, f)
			default:
				missing = append(missing, f)
			}
			val, present = out[f]
		}
		if !present || val == nil {
			fb.Confidence = ConfidenceLow
		}
		settled[f] = fb
	}
	if len(missing) > 0 {
		return nil, nil, unsupported, Errorf(CodeStructuredOutputInvalid,
			"required field %s of json_schema has no support in the sources (no verified citation) and the schema does not allow null",
			QuotedNames(missing))
	}
	return out, settled, unsupported, nil
}

// RequiredFields is the set of an object schema's required property names.
func RequiredFields(schema map[string]any) map[string]bool {
	required := map[string]bool{}
	req, _ := schema["required"].([]any)
	for _, r := range req {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	return required
}

// isEmptyArray: an array with no items claims nothing the sources must support (the sources name
// no such items); it is kept where the schema does not allow null.
func isEmptyArray(val any) bool {
	a, ok := val.([]any)
	return ok && len(a) == 0
}

// isConst: the schema fixes the field to this value, so it needs no citation.
func isConst(prop, val any) bool {
	p, _ := prop.(map[string]any)
	c, ok := p["const"]
	return ok && reflect.DeepEqual(c, val)
}

// QuotedNames lists names for an error message: "a", "b".
func QuotedNames(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// AllowsNull reports whether a property schema accepts null: type null (alone or in a list),
// nullable: true, an enum or const with null, an anyOf/oneOf branch that does, or no constraint at
// all. A local $ref is followed against root.
func AllowsNull(root map[string]any, prop any) bool {
	return allowsNullDepth(root, prop, 0)
}

func allowsNullDepth(root map[string]any, prop any, depth int) bool {
	if depth > 8 {
		return false
	}
	switch p := prop.(type) {
	case nil:
		return true // not declared: anything goes
	case bool:
		return p
	case map[string]any:
		if ref, ok := p["$ref"].(string); ok {
			return allowsNullDepth(root, resolveRef(root, ref), depth+1)
		}
		if n, ok := p["nullable"].(bool); ok && n {
			return true
		}
		if c, ok := p["const"]; ok {
			return c == nil
		}
		if e, ok := p["enum"].([]any); ok {
			return slices.Contains(e, nil)
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if alts, ok := p[k].([]any); ok {
				for _, a := range alts {
					if allowsNullDepth(root, a, depth+1) {
						return true
					}
				}
				return false
			}
		}
		switch t := p["type"].(type) {
		case nil:
			return true
		case string:
			return t == "null"
		case []any:
			return slices.Contains(t, any("null"))
		}
	}
	return false
}

// resolveRef follows a local JSON pointer ("#/$defs/x"); nil when it leads nowhere.
func resolveRef(root map[string]any, ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return false // remote refs are not followed: treat as not nullable
	}
	var cur any = root
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur = m[seg]
	}
	if cur == nil {
		return false
	}
	return cur
}
