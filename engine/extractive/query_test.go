package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

func TestQueryAnalysis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q         string
		typ       answerType
		attribute []string
		numbers   []string
		names     []string
		extreme   int
	}{
		{"How many homes were monitored in the trial?", typeNumber, []string{"home"}, nil, nil, 0},
		{"How much did the ground-source installation cost?", typeMoney, []string{"ground", "sourc", "instal", "cost"}, nil, nil, 0},
		{"What share of participants were satisfied?", typePercent, nil, nil, nil, 0},
		{"At what temperature is the loaf baked?", typeTemperature, nil, nil, nil, 0},
		{"Who is the chief executive of Northwind Robotics?", typePerson, []string{"chief", "execut"}, nil, []string{"northwind", "robot"}, 0},
		{"Which region had the most installations in 2023?", typePlace, []string{"region"}, []string{"2023"}, nil, 1},
		{"Which line had the lowest ridership in 2021?", typeAny, []string{"line"}, []string{"2021"}, nil, -1},
		{"How deep was the Corvala earthquake?", typeNumber, []string{"corvala", "earthquak", "depth"}, nil, []string{"corvala"}, 0},
		{"Who got the blame for the collapse?", typePerson, []string{"blame"}, nil, nil, 0},
		{"Is it OK to keep the Kestrel dryer in a cold garage?", typeAny, nil, nil, []string{"kestrel"}, 0},
		{"Which Python version does Tidewater 3.4 require?", typeAny, []string{"python", "version"}, []string{"3.4"}, []string{"python", "tidewat"}, 0},
		// A money verb ending "what does X …" asks for an amount; "pay for" asks for a thing.
		{"What does the data engineer job pay?", typeMoney, []string{"data", "engin", "job", "pay"}, nil, nil, 0},
		{"What does the council pay for?", typeAny, []string{"council", "pay"}, nil, nil, 0},
	}
	for _, tt := range tests {
		q := analyze(tt.q)
		require.Equal(t, tt.typ, q.Type, tt.q)
		require.ElementsMatch(t, tt.attribute, q.Attribute, tt.q)
		require.ElementsMatch(t, tt.numbers, q.Numbers, tt.q)
		require.ElementsMatch(t, tt.names, q.Names, tt.q)
		require.Equal(t, tt.extreme, q.Extreme, tt.q)
	}
	require.True(t, analyze("What did the council decide about the lanes?").Open)
	require.False(t, analyze("What was the revenue?").Open)
	require.Contains(t, analyze("How many people took part?").Terms, nlp.Stem("participate"))
}

// TestTableAnswers: a superlative is answered by the row and the comparison; numbers in the
// question select a column (years as headings) or filter rows (a year column); words that name
// some rows only filter them ("which pastry").
// TestPronounContractionIsNoName: "I'm", "I've" are a pronoun with its verb, not a name no
// source mentions.
func TestPronounContractionIsNoName(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"kestl"}, analyze("Does pausing change how long I'm tied in at Kestle, as I've heard?").Names)
}

func TestTableAnswers(t *testing.T) {
	t.Parallel()
	docs := []extract.Document{
		{Path: "installs.csv", Lines: strings.Split("region,year,installations,share_percent\nNorth,2022,10,3.1\nNorth,2023,12,4.4\nSouth,2022,14,2.7\nSouth,2023,11,3.4\nEast,2023,9,4.8", "\n")},
		{Path: "prices.md", Lines: strings.Split("# Coffee prices\n\n| Country | 2021 | 2022 |\n|---|---|---|\n| Kenya | 231.8 | 297.4 |\n| Peru | 176.0 | 235.7 |\n| Honduras | 169.5 | 228.1 |", "\n")},
		{Path: "menu.csv", Lines: strings.Split("item,category,price_eur,calories\nRoll,bread,0.90,210\nLoaf,bread,4.80,1680\nBun,pastry,3.20,420\nDanish,pastry,3.60,510", "\n")},
	}
	c := newCorpus(docs)
	for q, want := range map[string]string{
		"Which region had the most installations in 2023?":     "North had the highest installations in 2023 (12), ahead of South (11)",
		"Which region had the highest share percent in 2023?":  "East had the highest share percent in 2023 (4.8)",
		"Which country had the lowest coffee price in 2022?":   "Honduras had the lowest value for 2022 (228.1); the next lowest was Peru (235.7)",
		"Which pastry has the most calories?":                  "Danish, pastry had the highest calories (510), ahead of Bun, pastry (420)",
		"What is the cheapest item on the menu?":               "Roll, bread had the lowest price eur (0.90)",
		"Which region had the most installations in 2019?":     "",
		"Which country had the highest coffee price in Chile?": "",
	} {
		f := c.find(plainSub(q), findOptions{Sources: 6, Answers: 2, Support: 2})
		if want == "" {
			require.False(t, f.answered(), q)
			continue
		}
		require.NotNil(t, f.Compare, q)
		require.Contains(t, f.Compare.Sentence, want, q)
	}
	// A lookup without a superlative answers with the row, its header and the cell asked for.
	f := c.find(plainSub("What was Peru's coffee price in 2022?"), findOptions{Sources: 6, Answers: 2, Support: 2})
	require.Len(t, f.Answer, 1)
	require.Equal(t, "| Peru | 176.0 | 235.7 |", c.units[f.Answer[0]].Text)
	require.Equal(t, `In the table "Coffee prices", Peru has 235.7 under "2022".`, c.scorer(f.Q).rowSentence(f.Answer[0]))
}

// TestMoneyWithScale: an amount of money written with a scale word between the figure and the
// currency ("11 million euros") is money, and is not a count of things.
func TestMoneyWithScale(t *testing.T) {
	for _, tt := range []struct {
		text        string
		money, notC bool
	}{
		{"Estimated cost: 11 million euros including care.", true, true},
		{"The deal was worth 2.5 billion dollars.", true, true},
		{"It cost NOK 38 million more than budgeted.", true, true},
		{"The city has 11 million people.", false, false},
	} {
		require.Equal(t, tt.money, typeMoney.satisfies(tt.text), tt.text)
		require.Equal(t, tt.notC, reNotCount.MatchString(tt.text), tt.text)
	}
}

// TestRequestVerbs: a verb that opens a request says what to do and is not searched for; the same
// word inside a question is searched for like any other.
func TestRequestVerbs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		q        string
		has, not []string
	}{
		{"What list did Beyoncé make in 2013?", []string{"list", "make"}, nil},
		{"What error codes can the dryer show?", []string{"show", "error"}, nil},
		{"How would you describe the old town?", []string{"describ"}, nil},
		{"List the main causes of the heat island.", []string{"caus"}, []string{"list"}},
		{"Please describe the heat plan.", []string{"heat"}, []string{"describ"}},
		{"Can you tell me about the Tay Bridge?", []string{"bridg"}, []string{"tell"}},
		{"Give me a short overview of Halvorsen Marine's results.", []string{"overview"}, []string{"give"}},
	} {
		terms := analyze(tt.q).Terms
		for _, w := range tt.has {
			require.Contains(t, terms, w, tt.q)
		}
		for _, w := range tt.not {
			require.NotContains(t, terms, w, tt.q)
		}
	}
}

// TestNumbersInWords: numbers written in words are numbers an answer must be about, except the
// count of a list asked for; sources' numbers in words are read the same way.
func TestNumbersInWords(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"007 James Bond kills four men in a mission in which city?":     {"4"},
		"The combined crew of what movie numbered over three thousand?": {"3000"},
		"In what year was the twenty-fourth film released?":             nil, // an ordinal: a word, matched as one
		"Which band released twenty-four albums?":                       {"24"},
		"What two instruments did Chopin's father play?":                nil, // the count of the list asked for
		"Name four sound profiles that distort bass.":                   nil,
		"Who were two visitors to Chopin?":                              nil,
		"Which one of the films won?":                                   nil, // one is rarely a count
		"Chopin had three years of lessons with whom?":                  {"3"},
	} {
		if got := analyze(q).Counted; len(want) == 0 {
			require.Empty(t, got, q)
		} else {
			require.Equal(t, want, got, q)
		}
	}
	require.True(t, numbersIn("a crew of three thousand")["3000"])
	require.True(t, numbersIn("twenty-four films")["24"])
	require.True(t, numbersIn("ten days")["10"])
	require.True(t, numbersIn("Forty-two\nthousand")["42000"])
	for _, text := range []string{"a one-off", "the twenty-fourth film", "NaN and Inf", "often", "ten5", "twenty- and thirty-year terms"} {
		for n := range numbersIn(text) {
			require.Fail(t, "no number", "%q: %s", text, n)
		}
	}
}

// "How long is X going to be closed" asks for a span of time; "how long is X" for a length.
func TestHowLongAsksForTimeOrLength(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"How long is Castlegate Bridge going to be closed?": "duration",
		"How long will the bridge be closed?":               "duration",
		"How long is Castlegate Bridge?":                    "length",
	} {
		require.Equal(t, nlp.Stem(want), analyze(q).measure, q)
	}
}

// Shapes and readings of questions as users type them.
func TestQuestionsAsTyped(t *testing.T) {
	t.Parallel()
	require.Equal(t, shapeList, analyze("What do I need to bring to my appointment?").Shape, "the things needed")
	require.Equal(t, shapeList, analyze("What does a tenant have to do before leaving?").Shape)
	require.Equal(t, typeNumber, analyze("whats the phone number of the surgery?").Type, "whats is what is")
	require.Equal(t, shapeReason, analyze("Why won't the council keep one lane open?").Shape)
	require.Equal(t, shapeFactoid, analyze("What were Brackenfold Coffee Roasters' sales in 2025?").Shape, "a name's plural and an amount")
	require.Equal(t, shapeList, analyze("What error codes can the Kestrel dryer show?").Shape)
	require.Empty(t, analyze("I'm 68 and registered at Hollins Green. Can I get the vaccine?").Numbers, "the asker's age")
	require.Empty(t, analyze("My dad is 72. Can he get the jab?").Numbers)
	require.Equal(t, []string{"750"}, analyze("Is the pump rated at 750 W?").Numbers)
}

// An extreme that sources write as a noun stays a term ("peaked at 62.4%"); one they write only as
// a comparison ("highest") does not: a table compares without it.
func TestExtremeNounsStayTerms(t *testing.T) {
	require.Contains(t, analyze("What was the peak error rate during the outage?").Terms, nlp.Stem("peak"))
	require.Contains(t, analyze("What is the maximum load of the lift?").Terms, nlp.Stem("maximum"))
	require.NotContains(t, analyze("Which city had the highest rainfall?").Terms, nlp.Stem("highest"))
}
