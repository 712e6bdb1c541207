package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
)

// A field the schema requires and does not let be null is looked for again, more widely, before
// the run fails: a party named without its role ("Tregarthen Roofing" for roofing_contractor),
// at low confidence. A field that may be null stays null without its role stated.
func TestDemandedFieldLooksAgain(t *testing.T) {
	c := markdownCorpus(t, map[string]string{"meeting.txt": "HARBOURSIDE FLATS MEETING\n\n" +
		"Marcus Obi: The roof over blocks B and C needs replacing. The lowest quote we have is from Tregarthen Roofing, at £186,000.\n"})
	q := "Who will replace the Harbourside roof, and what will it cost?"
	f := c.find(plainSub(q), lowEffort)
	field := func(types any) map[string]any {
		return map[string]any{"type": "object", "required": []any{"roofing_contractor"},
			"properties": map[string]any{"roofing_contractor": map[string]any{"type": types, "description": "Company that gave the lowest quote"}}}
	}

	x := newExtractor(c, q, []finding{f}, 3)
	out := x.fillObject(field("string"), "", true)
	require.Contains(t, out["roofing_contractor"], "Tregarthen")
	require.Equal(t, engine.ConfidenceLow, x.basis["roofing_contractor"].Confidence)

	x = newExtractor(c, q, []finding{f}, 3)
	out = x.fillObject(field([]any{"string", "null"}), "", true)
	require.Nil(t, out["roofing_contractor"])
}
