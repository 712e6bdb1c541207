package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

func TestCorpusCache(t *testing.T) {
	t.Parallel()
	doc := func(path, text string) extract.Document {
		return extract.Document{Path: path, Kind: "text", Lines: []string{text}}
	}
	a := []extract.Document{doc("corpus/a.txt", "Tidal power is predictable because tides follow the moon.")}
	b := []extract.Document{doc("corpus/a.txt", "Tidal power is predictable because tides follow the sun.")}
	cc := &corpusCache{}

	first, again := cc.corpus(a), cc.corpus(a)
	require.Same(t, &first.units[0], &again.units[0], "the same documents share one index")
	first.idf("tidal")
	require.NotEmpty(t, first.idfCache)
	require.Empty(t, again.idfCache, "each run writes its own idf cache")

	other := cc.corpus(b)
	require.NotSame(t, &first.units[0], &other.units[0], "changed text is indexed anew")
	require.Equal(t, "Tidal power is predictable because tides follow the sun.", other.units[0].Text)

	for i := range corpusCacheSize + 1 {
		cc.corpus([]extract.Document{doc("corpus/n.txt", string(rune('a'+i)))})
	}
	require.Len(t, cc.entries, corpusCacheSize)
	require.NotSame(t, &first.units[0], &cc.corpus(a).units[0], "the least recently used index was dropped")
}
