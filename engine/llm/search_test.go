package llm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

func TestSplitPassages(t *testing.T) {
	t.Parallel()
	lines := strings.Split("# Title\n\nfirst para line one\nline two\n\n\nsecond para\n"+
		strings.Repeat("x\n", 8), "\n")
	ps := splitPassages(0, lines)
	require.Equal(t, []passage{
		{Start: 1, End: 4, Text: "Title:\nfirst para line one\nline two"},
		{Start: 7, End: 12, Text: "second para\nx\nx\nx\nx\nx"},
		{Start: 13, End: 15, Text: "x\nx\nx"},
	}, ps)

	long := strings.Repeat("This sentence is long enough. ", 80)
	ps = splitPassages(3, []string{"intro", long})
	require.Greater(t, len(ps), 2)
	for _, p := range ps[1:] {
		require.Equal(t, 2, p.Start)
		require.Equal(t, 2, p.End)
		require.LessOrEqual(t, len(p.Text), passageMaxChars)
		require.Equal(t, 3, p.Doc)
	}
}

func TestBM25(t *testing.T) {
	t.Parallel()
	ix := newIndex([]extract.Document{
		{Path: "a.txt", Lines: []string{"solar panels and solar batteries", "", "wind turbines"}},
		{Path: "b.txt", Lines: []string{"solar", "", "nothing relevant here at all", "", "wind and solar compared over a long passage with many other words in it"}},
	})
	require.Len(t, ix.passages, 5)
	hits := ix.search(nlp.Terms("solar"), 0, nil)
	require.Len(t, hits, 3)
	// The short passage that is only "solar" beats longer ones; the rest follow by score.
	require.Equal(t, 2, hits[0].P)
	require.Equal(t, 0, hits[1].P)
	require.Equal(t, 4, hits[2].P)
	for i := 1; i < len(hits); i++ {
		require.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
	}
	// A rarer term weighs more.
	require.Greater(t, ix.idf("turbin"), ix.idf("solar"))
	// k and skip.
	require.Len(t, ix.search(nlp.Terms("solar"), 1, nil), 1)
	require.Len(t, ix.search(nlp.Terms("solar"), 0, func(p int) bool { return p == 2 }), 2)
	require.Empty(t, ix.search(nlp.Terms("geothermal"), 0, nil))
	// A facet's subject must appear: "wind" passages only, though "solar" scores too.
	only := ix.search(nlp.Terms("solar wind"), 0, ix.requireAny(nlp.Terms("wind"), nil))
	require.Len(t, only, 2)
	for _, h := range only {
		require.Contains(t, ix.passages[h.P].Text, "wind")
	}
	require.Len(t, ix.search(nlp.Terms("solar wind"), 0, ix.requireAny(nlp.Terms("wind"), func(p int) bool { return p == 4 })), 1)
	require.Empty(t, newIndex(nil).search(nlp.Terms("solar"), 3, nil))
	require.Equal(t, "`b.txt`, line 5", ix.cite(4))
	require.Equal(t, "`a.txt`, line 1", ix.cite(0))
}

// TestContainingAll: the passages found from the postings are exactly those whose own terms hold
// every wanted term (the key-terms table counts them).
func TestContainingAll(t *testing.T) {
	t.Parallel()
	ix := newIndex([]extract.Document{
		{Path: "a.txt", Lines: []string{"solar panels and solar batteries", "", "wind turbines"}},
		{Path: "b.txt", Lines: []string{"solar", "", "nothing relevant here at all", "", "wind and solar compared"}},
	})
	brute := func(want []string) []int {
		var out []int
		for p, ps := range ix.passages {
			have := map[string]bool{}
			for _, term := range nlp.Terms(ps.Text) {
				have[term] = true
			}
			all := len(want) > 0
			for _, term := range want {
				all = all && have[term]
			}
			if all {
				out = append(out, p)
			}
		}
		return out
	}
	for _, phrase := range []string{"solar", "solar wind", "wind turbines", "solar battery", "geothermal", "", "the and"} {
		want := nlp.Uniq(nlp.Terms(phrase))
		require.ElementsMatch(t, brute(want), ix.containingAll(want), phrase)
	}
}

func TestSentencesAndLead(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"Costs fell, e.g. in 2023.", "Why?", "Dr. Smith agrees!", "item"},
		nlp.Sentences("Costs fell, e.g. in 2023. Why? Dr. Smith agrees!\nitem"))
	ix := newIndex([]extract.Document{{Path: "a", Lines: []string{"Heat pumps. Heat pumps cut heating bills in winter. Other text here."}}})
	s, p := ix.lead([]int{0}, nlp.Terms("heat pump bills"))
	require.Equal(t, "Heat pumps cut heating bills in winter.", s)
	require.Equal(t, 0, p)
}
