package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

const cityDoc = "# New York City\n\nNew York City has about 8.3 million residents. The Hudson River separates Manhattan " +
	"from New Jersey. The city lies about halfway between Washington, D.C. and Boston. The National Hockey League's " +
	"New York Rangers play at Madison Square Garden. Spies of MI6 met in Manhattan in 1942. The Yankees and the " +
	"Mets are its baseball teams; the Yankees won in 2009. Carlsen and Carlson visited in 2010. The city hosted the Super Bowl in 2014, and its third quarter saw 12 million visitors. Its record shops sold a million CD copies in 1995.\n"

func cityCorpus(t *testing.T) *corpus {
	t.Helper()
	d, reason := extract.File("input_files/city.md", []byte(cityDoc))
	require.Empty(t, reason)
	return newCorpus([]extract.Document{d})
}

// A word of the question that no source writes is written the sources' way when they write it
// unmistakably; otherwise the question is left as asked.
func TestRespell(t *testing.T) {
	c := cityCorpus(t)
	for _, tt := range []struct{ q, want string }{
		{"How many people live in NYC?", "How many people live in New York City?"},
		{"What is NYC's population?", "What is New York City's population?"},
		{"Which river seperates Manhatten from New Jersey?", "Which river separates Manhattan from New Jersey?"},
		{"Which NHL team plays at Madison Square Garden?", "Which National Hockey League team plays at Madison Square Garden?"},
		{"Which city is halfway between DC and Boston?", "Which city is halfway between D.C. and Boston?"},
		// A figure changed in a name names something else.
		{"Where did spies of MI66 meet?", "Where did spies of MI66 meet?"},
		// An English word the sources lack is worded otherwise, not misspelt ("separated" is no typo of "separates").
		{"Which river separated Manhattan from New Jersey?", "Which river separated Manhattan from New Jersey?"},
		// Short words are never respelt: one letter makes another word.
		{"Where do the Mats play?", "Where do the Mats play?"},
		// An acronym no name of the sources spells stays.
		{"Which NFL team plays in the city?", "Which NFL team plays in the city?"},
		// Two words of the sources as near and as common: no unmistakable spelling.
		{"When did the city host the Superbowl?", "When did the city host the Super Bowl?"},
		{"How many visitors came in Q3?", "How many visitors came in third quarter?"},
		{"When did Carlsan visit?", "When did Carlsan visit?"},
		{"How many CDs did its record shops sell?", "How many CDs did its record shops sell?"}, // the stem of "CDs" is "CD"'s
		{"Which NHLs play there?", "Which National Hockey League play there?"},
		{"When did the Yankets win?", "When did the Yankees win?"},
	} {
		require.Equal(t, tt.want, c.respell(tt.q), tt.q)
	}
}

// A question that names the city by its acronym, or misspells a name, is answered, not refused
// as naming something no source mentions.
func TestRespeltQuestionIsAnswered(t *testing.T) {
	c := cityCorpus(t)
	requireFinding(t, c, "How many residents does NYC have?", "8.3 million", "")
	requireFinding(t, c, "Which river separates Manhatten from New Jersey?", "Hudson", "")
	requireFinding(t, c, "Which river separates Brooklyn from New Jersey?", "", "“Brooklyn”")
	// A unit named after a person is no name: sources write "°C".
	d, reason := extract.File("input_files/cooker.md", []byte("# Solar cookers\n\nReflector cookers reach temperatures of up to 315 °C on a clear day.\n"))
	require.Empty(t, reason)
	requireFinding(t, newCorpus([]extract.Document{d}), "Reflector cookers can reach temperatures in Celsius of up to what?", "315", "")
}

// TestRecaseNames: a name typed in lower case is written as the sources write it, when they write
// it as a name more than once and never in lower case; ordinary words and headings stay.
func TestRecaseNames(t *testing.T) {
	t.Parallel()
	c := newCorpus([]extract.Document{{Path: "a.txt", Lines: []string{
		"# Key Dates", "Lumen Health announced results. Lumen Health also launched Lumen Beacon.",
		"The Corn Exchange is open. Tickets at The Corn Exchange.", "We care about public health. Public Health England said so. Public Health England agreed.",
	}}})
	for q, want := range map[string]string{
		"what did lumen health announce in february?": "what did Lumen Health announce in february?",
		"who are lumen health's investors?":           "who are Lumen Health's investors?",
		"when does the corn exchange open?":           "when does the Corn Exchange open?",
		"what are the key dates?":                     "what are the key dates?",
		"is public health england involved?":          "is public health england involved?",
	} {
		require.Equal(t, want, c.recase(q), q)
	}
}
