// Package schema compiles JSON Schemas that callers send (a job's json_schema, an expert's
// output_schema, a batch's or a campaign's schema). Every compile in the service goes through here,
// so none of them can make the server read a local file or the network: only references inside
// the document itself (#/...) resolve.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// rootURL names the caller's schema inside the compiler; it is never fetched.
const rootURL = "urn:researchd:schema"

// ErrNotObject: the schema compiles but does not describe a JSON object, so it cannot describe
// structured output.
var ErrNotObject = errors.New("the schema must describe an object (\"type\": \"object\")")

// noLoader refuses every external $ref, $dynamicRef and unknown $schema: file://, http(s):// and
// anything else. The standard metaschemas are built into the compiler and need no loader.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not allowed: only local references (#/...) resolve", url)
}

// Compile compiles doc as JSON Schema (draft 2020-12 unless it names another with $schema).
func Compile(doc map[string]any) (*jsonschema.Schema, error) {
	v, err := ToJSONValue(doc)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(rootURL, v); err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	sch, err := c.Compile(rootURL)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	return sch, nil
}

// CompileObject compiles doc and requires it to describe an object (Type is "object").
func CompileObject(doc map[string]any) (*jsonschema.Schema, error) {
	sch, err := Compile(doc)
	if err != nil {
		return nil, err
	}
	if Type(doc) != "object" {
		return nil, ErrNotObject
	}
	return sch, nil
}

// Type is the JSON type a (sub)schema describes: its "type" (the first non-null one of a list),
// else "object" when it has properties, "array" when it has items, else "string".
func Type(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if ts, ok := x.(string); ok && ts != "null" {
				return ts
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return "string"
}

// ToJSONValue round-trips v through JSON into the value model the validator expects
// (json.Number for numbers).
func ToJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}
