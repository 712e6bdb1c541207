package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func unitTexts(p parsed) []string {
	var out []string
	for _, u := range p.units {
		out = append(out, u.Kind+" "+u.Text)
	}
	return out
}

// TestParseDocument: sentences are whole across hard-wrapped lines and know the lines they span;
// headings of every style are sections, never units; lists, fields and tables are units of their own.
func TestParseDocument(t *testing.T) {
	t.Parallel()
	text := `PLANT REPORT

Results

Results. The plant treated 10,000 tonnes of
batteries in 2023. It recovered 95 percent of the
lithium, e.g. in cell form, and Dr. L. Okafor approved it.

Outlook
=======

- Capacity grows to 12,000 tonnes
  in 2025.
- A second line opens.

Site: Kolding
Owner: GreenLoop ApS

| Metal | Recovered |
|-------|-----------|
| Lithium | 95% |
| Cobalt | 98% |
`
	para := 0
	p := parseDocument(0, document{Path: "r.txt", Lines: strings.Split(text, "\n")}, &para)
	require.Equal(t, "PLANT REPORT", p.title)
	require.Equal(t, []string{
		"sentence The plant treated 10,000 tonnes of batteries in 2023.",
		"sentence It recovered 95 percent of the lithium, e.g. in cell form, and Dr. L. Okafor approved it.",
		"item Capacity grows to 12,000 tonnes in 2025.",
		"item A second line opens.",
		"field Site: Kolding",
		"field Owner: GreenLoop ApS",
		"row | Lithium | 95% |",
		"row | Cobalt | 98% |",
	}, unitTexts(p))
	first, second := p.units[0], p.units[1]
	require.Equal(t, [2]int{5, 6}, [2]int{first.Start, first.End})
	require.Equal(t, [2]int{6, 7}, [2]int{second.Start, second.End})
	require.Equal(t, "Results", first.Section, "a run-in heading is the section")
	require.Equal(t, 0, second.Prev, "the sentence before is context")
	require.Equal(t, "Outlook", p.units[2].Section, "setext heading")
	require.Len(t, p.tables, 1)
	require.Equal(t, []string{"Metal", "Recovered"}, p.tables[0].Header)
	require.Equal(t, []int{21, 22}, p.tables[0].RowLines)
}

func TestParseCSV(t *testing.T) {
	t.Parallel()
	para := 0
	p := parseDocument(0, document{Path: "data/prices.csv", Lines: strings.Split("item,\"price, eur\"\nroll,0.90\n\nbun,3.20\n", "\n")}, &para)
	require.Equal(t, "prices", p.title)
	require.Equal(t, []string{"item", "price, eur"}, p.tables[0].Header)
	require.Equal(t, []int{2, 4}, p.tables[0].RowLines)
	require.Equal(t, []string{"row roll,0.90", "row bun,3.20"}, unitTexts(p))
}

func TestSentenceSpans(t *testing.T) {
	t.Parallel()
	cut := func(s string) []string {
		var out []string
		for _, sp := range sentenceSpans(s) {
			out = append(out, strings.TrimSpace(s[sp[0]:sp[1]]))
		}
		return out
	}
	require.Equal(t, []string{"It cost $1.4 million.", "After debate it passed."}, cut("It cost $1.4 million. After debate it passed."))
	require.Equal(t, []string{`"It works," he said.`, "Then it stopped!"}, cut(`"It works," he said. Then it stopped!`))
	require.Equal(t, []string{"Approx. five units, i.e. most.", "U.S. data agree."}, cut("Approx. five units, i.e. most. U.S. data agree."))
	require.Equal(t, []string{"Mayor L. Okafor chaired it."}, cut("Mayor L. Okafor chaired it."))
}

func TestHTMLChromeStripped(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>Ferries go electric | News</title><script>var x=1</script></head><body>
<header class="site-header"><a href="/">News</a><nav><a>Home</a><a>Ports</a></nav></header>
<div class="cookie-banner">We use cookies. <button>Accept</button></div>
<main><article>
<h1>Ferries go electric</h1>
<p>The new ferries carry
200 cars.</p>
<ul><li>Battery: 4.3 MWh</li><li>Charging: 11 minutes</li></ul>
<table><tr><th>Route</th><th>Minutes</th></tr><tr><td>Halden</td><td>50</td></tr></table>
<aside class="related"><h3>Related</h3><p>Hydrogen trials delayed</p></aside>
</article></main>
<div class="newsletter-box"><p>Sign up for our newsletter.</p></div>
<footer><p>© 2024 News AS. All rights reserved.</p></footer>
<div id="sidebar">Popular posts</div>
</body></html>`
	text, err := htmlToText([]byte(page))
	require.NoError(t, err)
	require.Equal(t, "# Ferries go electric\n\nThe new ferries carry 200 cars.\n\n- Battery: 4.3 MWh\n- Charging: 11 minutes\n\n| Route | Minutes |\n| --- | --- |\n| Halden | 50 |\n", text)

	// Without <main> or <article>: the body less its chrome; the title as heading; copyright lines out.
	text, err = htmlToText([]byte(`<html><head><title>Plant</title></head><body><div class="menu">Home | Blog</div>
<div class="post"><p>It treats 10,000 tonnes a year.</p><p>Copyright 2024 GreenLoop</p></div><div class="footer">CVR 1234</div></body></html>`))
	require.NoError(t, err)
	require.Equal(t, "# Plant\n\nIt treats 10,000 tonnes a year.\n", text)
}

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
		{"Which Python version does Tidewater 3.4 require?", typeAny, []string{"python", "version"}, []string{"3.4"}, []string{"python", "tidewat"}, 0},
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
	require.Contains(t, analyze("How many people took part?").Terms, stem("participate"))
}

// TestTableAnswers: a superlative is answered by the row and the comparison; numbers in the
// question select a column (years as headings) or filter rows (a year column); words that name
// some rows only filter them ("which pastry").
func TestTableAnswers(t *testing.T) {
	t.Parallel()
	docs := []document{
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
