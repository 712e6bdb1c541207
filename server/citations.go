package server

import (
	"encoding/json"
	"fmt"

	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
)

// citationsOfJob fills the detail's citation counts and structured-output basis (beyond the
// specification); both null until a run completes with them.
func citationsOfJob(d *gen.ResearchJobDetail, j store.ResearchJob) error {
	d.Citations = nullable.NewNullNullable[gen.CitationCounts]()
	if j.CitationsTotal != nil && j.CitationsVerified != nil {
		d.Citations = nullable.NewNullableWithValue(gen.CitationCounts{Total: *j.CitationsTotal, Verified: *j.CitationsVerified})
	}
	d.StructuredOutputBasis = nullable.NewNullNullable[gen.StructuredOutputBasis]()
	if j.StructuredOutputBasis != nil {
		var b gen.StructuredOutputBasis
		if err := json.Unmarshal([]byte(*j.StructuredOutputBasis), &b); err != nil {
			return fmt.Errorf("decode structured output basis of job %s: %w", j.ID, err)
		}
		d.StructuredOutputBasis = nullable.NewNullableWithValue(b)
	}
	return nil
}
