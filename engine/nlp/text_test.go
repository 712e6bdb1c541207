package nlp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTermsAndStem(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"cost", "batteri", "charg", "heat", "pump"}, Terms("The costs of batteries, charging heat-pumps!"))
	require.Equal(t, Stem("prices"), Stem("price"))
	require.Equal(t, Stem("charged"), Stem("charging"))
	require.Equal(t, Stem("developer"), Stem("developing"))
	require.Equal(t, Stem("led"), Stem("lead"), "irregular verbs")
	require.Equal(t, Stem("rose"), Stem("rising"))
	require.Equal(t, Stem("left"), Stem("leaving"), "when did X leave: X left")
	require.Equal(t, Stem("became"), Stem("become"))
	require.NotEqual(t, Stem("founded"), Stem("found"), "to found is not to find")
	require.NotEqual(t, Stem("ground"), Stem("grind"), "a form as often a noun keeps its own stem")
	require.Equal(t, []string{"2024", "co2", "emiss"}, Terms("In 2024 CO2 émissions"))
	require.Equal(t, []string{"visitor", "photo"}, Terms("Why can't visitors photo? Won’t they? It wasn't so"), "contractions are auxiliaries")
	require.Equal(t, Terms("Beyoncé"), Terms("Beyonce"), "diacritics folded: people type names without them")
	require.Equal(t, []string{"line", "ferri"}, Terms("Coastal Line's ferries")[1:], "possessives dropped")
	require.Equal(t, Stem("specialization"), Stem("specialises"), "British and American spellings")
	require.Equal(t, Stem("analyzed"), Stem("analysed"))
	require.NotEqual(t, Stem("rise"), Stem("rize"), "short words keep their spelling")
	require.Equal(t, Stem("dvd"), Stem("dvds"), "an abbreviation's plural")
	require.Equal(t, Stem("mp3"), Stem("mp3s"))
	require.Equal(t, "is", Stem("is"), "a word of two letters is left alone")
	require.Equal(t, Terms("the third generation"), Terms("the 3rd generation"), "ordinals in digits and in words")
	require.Equal(t, []string{"ebook", "email", "xray", "heat", "pump"}, Terms("e-books, e-mail, X-ray, heat-pump"), "a letter hyphened to a word is one word")
	require.Equal(t, Terms("email"), Terms("e-mail"))
	require.Equal(t, []string{"book"}, Terms("Books"))
	require.Equal(t, Stem("nineteenth"), Stem("19th"))
	require.Equal(t, Stem("eleventh"), Stem("11th"))
	require.Equal(t, Stem("thirtieth"), Stem("30th"))
	require.Equal(t, "21st", Stem("21st"), "larger ordinals are written in two words, which Words splits")
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
		require.Equal(t, want, EscapeMarkdown(in), in)
	}
	require.Equal(t, `1.2 A \*Flex\* plan`, EscapeMarkdownInline("1.2 A *Flex* plan"), "inside “…” nothing starts a block")
	require.Equal(t, `- a \*b\*`, EscapeMarkdownInline("- a *b*"))
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", Truncate("short", 10))
	require.Equal(t, "one two…", Truncate("one two three four", 10))
	require.Equal(t, "ééé…", Truncate("éééééé", 3))
}

func TestHumanName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "install cost eur", HumanName("install_cost_eur"))
	require.Equal(t, "install cost eur", HumanName("installCostEur"))
}

// A word hyphenated across a line break (text copied from a PDF) is one word again; a hyphen
// before "and" or "or" keeps its words apart.
func TestBrokenWordsJoined(t *testing.T) {
	for in, want := range map[string][]string{
		"soil mineral nitro- gen":  {"soil", "mineral", "nitrogen"},
		"full- and part-time work": {"full", "and", "part", "time", "work"},
		"an e-mail":                {"an", "email"},
	} {
		require.Equal(t, want, Words(in), in)
	}
}
