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

func TestNearest(t *testing.T) {
	near := Nearest(Stem("snow"), 5)
	require.Len(t, near, 5)
	require.NotContains(t, near, Stem("snow"), "a word is not its own neighbour")
	require.Contains(t, near, Stem("rain"))
	require.Equal(t, "rain", Word(Stem("rain")))
	cos := func(s string) float64 { c, _ := Similarity(Stem("snow"), s); return c }
	require.GreaterOrEqual(t, cos(near[0]), cos(near[4]), "closest first")
	require.Nil(t, Nearest("qzxv", 5))
}

// TestNeighbouring: the committed neighbours.bin agrees with a scan of the vectors (it is stale
// when vectors.bin changes without make lexicon).
func TestNeighbouring(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"snow", "eighth", "sequel", "brother", "price", "film", "run"} {
		s := Stem(w)
		near := Nearest(s, Neighbours+5)
		for i, n := range near {
			require.Equal(t, i < Neighbours, Neighbouring(s, n), "%s: %s is neighbour number %d", w, n, i+1)
		}
	}
	require.True(t, Neighbouring(Stem("snow"), Stem("rain")))
	require.False(t, Neighbouring(Stem("trait"), Stem("courage")), "a word and an instance of it are not neighbours")
	require.False(t, Neighbouring(Stem("snow"), Stem("snow")))
	require.False(t, Neighbouring("qzxv", Stem("snow")))
}
