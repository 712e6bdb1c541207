package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

func TestAskedDimension(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"How many litres of water does the dryer use?", "volume"},
		{"How many cubic meters of oil are in the creek?", "volume"},
		{"How many square kilometres does the park cover?", "area"},
		{"How many kilometres long is the canal?", "length"},
		{"How much does the outdoor unit weigh?", "mass"},
		{"How heavy is the battery?", "mass"},
		{"How fast can the ferry sail?", "speed"},
		{"How many people live on the island?", ""},
		{"How long was the funeral delayed?", ""}, // a time, not a length
		{"How high did the single climb on the chart?", ""},
	} {
		require.Equal(t, tt.want, analyze(tt.q).dimension, tt.q)
	}
}

func TestGivesDimension(t *testing.T) {
	for _, tt := range []struct {
		text, dim string
		want      bool
	}{
		{"The water collects in a 4.8-litre tank.", "volume", true},
		{"It holds 5 l of water.", "volume", true},
		{"About 110,000 cubic metres of oil lie under the creek.", "volume", true},
		{"The creek is 3.5 miles long.", "volume", false},
		{"The creek is 3.5 miles long.", "length", true},
		{"The park covers 28,000 acres (110 km2).", "area", true},
		{"Speeds of up to 111 kilometres per hour have been measured.", "speed", true},
		{"The round trip covers around 20,000 kilometres each year.", "speed", false},
		{"The outdoor unit weighs 98 kg.", "mass", true},
		{"The drum takes eight kilograms of laundry.", "mass", true},
		{"I am at home.", "length", false}, // "am" is not a figure in metres
		{"The plant employs 2 930 people.", "mass", false},
	} {
		require.Equal(t, tt.want, givesDimension(tt.text, tt.dim), "%s (%s)", tt.text, tt.dim)
	}
}

// A question asking for a figure in a unit is answered by a passage giving one: the likeliest near
// the best match leads, and a document that gives none does not answer.
func TestUnitLead(t *testing.T) {
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	tank := "# The Kestrel dryer\n\nThe Kestrel dryer removes water from the laundry and pumps the water away through a hose. " +
		"Without a hose, the water collects in a tank of 4.8 litres at the top of the machine.\n"
	noFigure := "# The Kestrel dryer\n\nThe Kestrel dryer removes water from the laundry and pumps the water away through a hose. " +
		"The tank's size in litres is printed on its lid.\n"
	for _, tt := range []struct{ doc, want, missing string }{
		{tank, "4.8 litres", ""},
		{noFigure, "", "give no volume"},
	} {
		d, reason := extract.File("input_files/dryer.md", []byte(tt.doc))
		require.Empty(t, reason)
		c := newCorpus([]extract.Document{d})
		f := c.find(plainSub("How many litres of water does the Kestrel dryer pump away?"), o)
		if tt.want == "" {
			require.False(t, f.answered())
			require.Contains(t, f.Missing, tt.missing)
			continue
		}
		require.True(t, f.answered())
		require.Contains(t, answerTexts(c, f)[0], tt.want)
	}
}

// A table row gives a figure of the dimension asked for when its label says so: the price row of a
// specification table does not answer how much a unit weighs.
func TestUnitLeadTableRow(t *testing.T) {
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	table := "# Heat pumps tested\n\nWe tested the Nordhavn AW9 and the Lumera EcoHeat 10 outdoor units.\n\n" +
		"| | Nordhavn AW9 | Lumera EcoHeat 10 |\n|---|---|---|\n| Price (outdoor unit) | 11,400 euros | 12,750 euros |\n"
	weight := "| Weight of the outdoor unit (kg) | 96 | 104 |\n"
	for _, tt := range []struct{ doc, want string }{
		{table + weight, "104"},
		{table, ""},
	} {
		d, reason := extract.File("input_files/pumps.md", []byte(tt.doc))
		require.Empty(t, reason)
		c := newCorpus([]extract.Document{d})
		f := c.find(plainSub("How much does the Lumera EcoHeat 10 outdoor unit weigh?"), o)
		if tt.want == "" {
			require.False(t, f.answered(), answerTexts(c, f))
			continue
		}
		require.True(t, f.answered(), f.Missing)
		require.Contains(t, answerTexts(c, f)[0], tt.want)
	}
}

// A question asking for a year is answered by a passage that gives one: the likeliest near the best
// match leads, and a document that gives none does not answer.
func TestYearLead(t *testing.T) {
	doc := func(text string) *corpus {
		d, reason := extract.File("input_files/almeron.md", []byte("# Almeron\n\n"+text+"\n"))
		require.Empty(t, reason)
		return newCorpus([]extract.Document{d})
	}
	const q = "In what year was Almeron first approved for the treatment of hay fever?"
	c := doc("Almeron is approved for the treatment of hay fever in adults and children over 12. " +
		"Take one tablet a day with water.")
	requireFinding(t, c, q, "", "give no year")
	c = doc("Almeron is approved for the treatment of hay fever in adults and children over 12. " +
		"The regulator first cleared the tablets in 2011, after two trials.")
	requireFinding(t, c, q, "2011", "")
}
