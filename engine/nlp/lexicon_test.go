package nlp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRelated(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"pay", "payment"}, {"invent", "inventor"}, {"die", "death"}, {"begin", "start"},
	} {
		require.Contains(t, Related(Stem(tc.a)), Stem(tc.b), "%s → %s", tc.a, tc.b)
		require.Contains(t, Related(Stem(tc.b)), Stem(tc.a), "both ways: %s → %s", tc.b, tc.a)
	}
	require.NotContains(t, Related(Stem("cost")), "be", "stopwords are not relatives")
	require.Empty(t, Related("qzxv"))
}

func TestSimilarity(t *testing.T) {
	near, ok := Similarity(Stem("city"), Stem("town"))
	require.True(t, ok)
	far, ok := Similarity(Stem("car"), Stem("banana"))
	require.True(t, ok)
	require.Greater(t, near, 0.6)
	require.Less(t, far, 0.3)
	self, _ := Similarity(Stem("city"), Stem("city"))
	require.InDelta(t, 1, self, 0.01, "vectors are unit length")
	_, ok = Similarity(Stem("city"), "qzxv")
	require.False(t, ok, "a word outside the table has no similarity")
	require.InDelta(t, near, Cosine(Vector(Stem("city")), Vector(Stem("town"))), 0.01)
	require.Zero(t, Cosine(make([]float32, 3), []float32{1, 0, 0}))
}
