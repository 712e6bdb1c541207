package expert

import "github.com/researchd/researchd/schema"

// checkObjectSchema compiles an expert's output_schema with the service's loader-less compiler
// (no external $ref) and requires it to describe an object.
func checkObjectSchema(doc map[string]any) error {
	_, err := schema.CompileObject(doc)
	return err
}
