package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func texts(subs []subQuestion) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Text
	}
	return out
}

func TestSubQuestions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, q string
		max     int
		want    []string
	}{
		{"question word after and", "What is a heat pump and how does it save energy?", 2,
			[]string{"What is a heat pump?", "How does it save energy?"}},
		{"sentences", "Describe battery storage. Why do prices fall?", 2,
			[]string{"Describe battery storage?", "Why do prices fall?"}},
		{"semicolon and comma wh", "grid costs; who pays, why now", 3,
			[]string{"Grid costs?", "Who pays?"}}, // "why now" has no content words
		// Coordinated words stay in their question: it is answered as a whole, its answer grouped by
		// what it covers, never rewritten into questions it did not ask.
		{"noun coordination kept", "What are the costs and benefits of heat pumps?", 2,
			[]string{"What are the costs and benefits of heat pumps?"}},
		{"list kept", "Compare LFP and NMC on energy density, cycle life, safety and cost", 3,
			[]string{"Compare LFP and NMC on energy density, cycle life, safety and cost?"}},
		{"noun phrases kept", "How do falling lithium prices and price volatility affect grid storage?", 3,
			[]string{"How do falling lithium prices and price volatility affect grid storage?"}},
		{"names kept", "Were Scott Derrickson and Ed Wood of the same nationality?", 3,
			[]string{"Were Scott Derrickson and Ed Wood of the same nationality?"}},
		{"abbreviation is not a sentence end", "Which F.C. club did he join in 1998?", 3,
			[]string{"Which F.C. club did he join in 1998?"}},
		// No templates: a simple question is one sub-question, whatever the budget.
		{"no facets", "Heat pump adoption in Norway", 4, []string{"Heat pump adoption in Norway?"}},
		{"plural subject", "electric buses", 2, []string{"Electric buses?"}},
		{"duplicates dropped", "What is solar? What is solar?", 3, []string{"What is solar?"}},
		{"only stopwords", "what is it?", 3, []string{"What is it?"}},
		{"empty", "", 2, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := subQuestions(tt.q, tt.max)
			require.Equal(t, tt.want, texts(got))
			require.LessOrEqual(t, len(got), max(tt.max, 1))
		})
	}
}

func TestSubQuestionsCarryTheSubject(t *testing.T) {
	t.Parallel()
	subs := subQuestions("What is a heat pump and how does it save energy?", 5)
	require.Equal(t, []string{"What is a heat pump?", "How does it save energy?"}, texts(subs))
	require.Nil(t, subs[0].Carry)
	require.Equal(t, []string{"heat", "pump"}, subs[1].Carry, "\"it\" is the heat pump")
}

func TestKeyPhrases(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"solar power", "running costs", "heat pumps"},
		keyPhrases("How does solar power affect running costs of heat pumps?"))
	require.Equal(t, []string{"grid", "prices"}, keyPhrases("grid, prices"))
	require.Equal(t, []string{"heat pump adoption", "Norway", "NATO"}, keyPhrases("Heat pump adoption in Norway and NATO"))
}

func TestTermsAndStem(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"cost", "batteri", "charg", "heat", "pump"}, terms("The costs of batteries, charging heat-pumps!"))
	require.Equal(t, stem("prices"), stem("price"))
	require.Equal(t, stem("charged"), stem("charging"))
	require.Equal(t, stem("developer"), stem("developing"))
	require.Equal(t, stem("led"), stem("lead"), "irregular verbs")
	require.Equal(t, stem("rose"), stem("rising"))
	require.Equal(t, []string{"2024", "co2", "emiss"}, terms("In 2024 CO2 émissions"))
	require.Equal(t, terms("Beyoncé"), terms("Beyonce"), "diacritics folded: people type names without them")
	require.Equal(t, []string{"line", "ferri"}, terms("Coastal Line's ferries")[1:], "possessives dropped")
	require.Equal(t, stem("specialization"), stem("specialises"), "British and American spellings")
	require.Equal(t, stem("analyzed"), stem("analysed"))
	require.NotEqual(t, stem("rise"), stem("rize"), "short words keep their spelling")
}

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
	ix := newIndex([]document{
		{Path: "a.txt", Lines: []string{"solar panels and solar batteries", "", "wind turbines"}},
		{Path: "b.txt", Lines: []string{"solar", "", "nothing relevant here at all", "", "wind and solar compared over a long passage with many other words in it"}},
	})
	require.Len(t, ix.passages, 5)
	hits := ix.search(terms("solar"), 0, nil)
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
	require.Len(t, ix.search(terms("solar"), 1, nil), 1)
	require.Len(t, ix.search(terms("solar"), 0, func(p int) bool { return p == 2 }), 2)
	require.Empty(t, ix.search(terms("geothermal"), 0, nil))
	// A facet's subject must appear: "wind" passages only, though "solar" scores too.
	only := ix.search(terms("solar wind"), 0, ix.requireAny(terms("wind"), nil))
	require.Len(t, only, 2)
	for _, h := range only {
		require.Contains(t, ix.passages[h.P].Text, "wind")
	}
	require.Len(t, ix.search(terms("solar wind"), 0, ix.requireAny(terms("wind"), func(p int) bool { return p == 4 })), 1)
	require.Empty(t, newIndex(nil).search(terms("solar"), 3, nil))
	require.Equal(t, "`b.txt`, line 5", ix.cite(4))
	require.Equal(t, "`a.txt`, line 1", ix.cite(0))
}

// TestContainingAll: the passages found from the postings are exactly those whose own terms hold
// every wanted term (the key-terms table counts them).
func TestContainingAll(t *testing.T) {
	t.Parallel()
	ix := newIndex([]document{
		{Path: "a.txt", Lines: []string{"solar panels and solar batteries", "", "wind turbines"}},
		{Path: "b.txt", Lines: []string{"solar", "", "nothing relevant here at all", "", "wind and solar compared"}},
	})
	brute := func(want []string) []int {
		var out []int
		for p, ps := range ix.passages {
			have := map[string]bool{}
			for _, term := range terms(ps.Text) {
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
		want := uniq(terms(phrase))
		require.ElementsMatch(t, brute(want), ix.containingAll(want), phrase)
	}
}

func TestSentencesAndLead(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"Costs fell, e.g. in 2023.", "Why?", "Dr. Smith agrees!", "item"},
		sentences("Costs fell, e.g. in 2023. Why? Dr. Smith agrees!\nitem"))
	ix := newIndex([]document{{Path: "a", Lines: []string{"Heat pumps. Heat pumps cut heating bills in winter. Other text here."}}})
	s, p := ix.lead([]int{0}, terms("heat pump bills"))
	require.Equal(t, "Heat pumps cut heating bills in winter.", s)
	require.Equal(t, 0, p)
}

func TestMarkdownEscape(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"# not a heading":      `\# not a heading`,
		"- not a list":         `\- not a list`,
		"1. not a list":        `1\. not a list`,
		"a *b* [c](d) <e> `f`": "a \\*b\\* \\[c\\](d) \\<e\\> \\`f\\`",
		"state-of-the-art":     "state-of-the-art",
		"a_b|c":                `a\_b\|c`,
	}
	for in, want := range tests {
		require.Equal(t, want, mdEscape(in), in)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", truncate("short", 10))
	require.Equal(t, "one two…", truncate("one two three four", 10))
	require.Equal(t, "ééé…", truncate("éééééé", 3))
}

func TestHumanName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "install cost eur", humanName("install_cost_eur"))
	require.Equal(t, "install cost eur", humanName("installCostEur"))
}
