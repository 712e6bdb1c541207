package expert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The shared schema package the coordinator is adding (schema.CompileObject) is not on this branch
// yet; this is the same rule, unexported, to be replaced by it.

const schemaRootURL = "urn:researchd:expert-output-schema"

// errNotObject: the schema compiles but does not describe an object.
var errNotObject = errors.New(`the schema must describe an object ("type": "object")`)

// noLoader refuses every external reference ($ref to file://, http(s)://, unknown $schema):
// compiling a caller's schema must never read local files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not allowed: only local references (#/...) resolve", url)
}

// checkObjectSchema compiles doc as JSON Schema (draft 2020-12 unless $schema names another) and
// requires a top-level object type.
func checkObjectSchema(doc map[string]any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaRootURL, v); err != nil {
		return fmt.Errorf("invalid JSON Schema: %w", err)
	}
	if _, err := c.Compile(schemaRootURL); err != nil {
		return fmt.Errorf("invalid JSON Schema: %w", err)
	}
	if t, _ := doc["type"].(string); t != "object" {
		return errNotObject
	}
	return nil
}
