package extract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A plain-text title page's blocks in capitals, with nothing between them, are one title; a
// numbered section heading after them is a heading of its own.
func TestStackedCapitalBlocksAreOneTitle(t *testing.T) {
	t.Parallel()
	text := "FENWICK MUTUAL BANK PLC\n\nEVERYDAY CURRENT ACCOUNT\nFEE INFORMATION AND KEY TERMS\n\nEffective from 1 March 2025\n\n" +
		"Please read this document carefully.\n\n1. ACCOUNT FEES\n\nWe charge no monthly fee.\n"
	p := parsePlain(text)
	require.Equal(t, "FENWICK MUTUAL BANK PLC EVERYDAY CURRENT ACCOUNT FEE INFORMATION AND KEY TERMS", p.Title)
	require.Equal(t, "ACCOUNT FEES", p.Units[len(p.Units)-1].Section)
}

// A web page's main heading is its title, whatever short lines stand above it (a kicker).
func TestMainHeadingIsTitleUnderKicker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, title string }{
		{"Exhibition\n\n# Salt & Indigo\n\nThe exhibition opens in March.\n", "Salt & Indigo"},
		{"# Guide\n\n## Costs\n\nIt costs £5.\n", "Guide"},
		{"## Costs\n\n# Later\n\nIt costs £5.\n", "Costs"},
	} {
		require.Equal(t, tc.title, parseText("page.md", tc.text).Title, tc.text)
	}
}

// An aligned plain-text table may be ruled off with dashes, take a second header line of units,
// and group rows under one label; a header ruled off from its rows is no setext heading.
func TestAlignedTableRulesAndGroups(t *testing.T) {
	t.Parallel()
	text := "Table 3. Effects.\n\n" +
		"Outcome                Treatment    Difference   p\n" +
		"                                     (kg N/ha)\n" +
		"---------------------------------------------------------\n" +
		"SMN Nov                Cereal rye     -36.7      <0.001\n" +
		"                       Mix            -32.1      <0.001\n" +
		"---------------------------------------------------------\n\n" +
		"Service                   Fee\n" +
		"-------------------------------\n" +
		"Monthly account fee       £0.00\n" +
		"Banker's draft            £10.00\n"
	p := parsePlain(text)
	require.Len(t, p.Tables, 2)
	require.Equal(t, []string{"Outcome", "Treatment", "Difference (kg N/ha)", "p"}, p.Tables[0].Header)
	require.Equal(t, [][]string{{"SMN Nov", "Cereal rye", "-36.7", "<0.001"}, {"SMN Nov", "Mix", "-32.1", "<0.001"}}, p.Tables[0].Rows)
	require.Equal(t, []string{"Service", "Fee"}, p.Tables[1].Header)
	require.Len(t, p.Tables[1].Rows, 2)
}

// A running header that recurs page by page with its page number is no heading and no unit;
// repeated lines that do not end in a page number (a forum's post headers) stay.
func TestRunningHeadersDropped(t *testing.T) {
	t.Parallel()
	header := func(n string) string { return "    Pask et al. / Journal of Agroecology 31 (2025) 214-229        " + n }
	text := strings.Join([]string{"Soils were sampled in November.", "", header("215"), "", "Leaching fell by half.", "", header("217"), "",
		"## dkershaw_7 (Member, 12 posts) 2025-03-01 10:00", "", "Mine drops too.", "", "## dkershaw_7 (Member, 12 posts) 2025-03-02 11:00", "", "Fixed now."}, "\n")
	p := parsePlain(text)
	for _, u := range p.Units {
		require.NotContains(t, u.Text, "Pask et al.")
		require.NotContains(t, u.Section, "Pask et al.")
	}
	require.Equal(t, "dkershaw_7 (Member, 12 posts) 2025-03-02 11:00", p.Units[len(p.Units)-1].Section)
}

// A marked heading's sections are part of the marked heading above it: each unit knows the heading
// its section is part of (not the document's title: that is every unit's already).
func TestParentHeadings(t *testing.T) {
	t.Parallel()
	text := "# Newsletter\n\n## Staff changes\n\n### Saying goodbye\n\nMr Price is leaving.\n\n### Welcoming\n\nMiss Shah joins us.\n\n" +
		"## Reminders\n\nLabel the uniform.\n"
	p := parseText("news.md", text)
	parents := map[string]string{}
	for _, u := range p.Units {
		parents[u.Text] = u.Parent
	}
	require.Equal(t, "Staff changes", parents["Mr Price is leaving."])
	require.Equal(t, "Staff changes", parents["Miss Shah joins us."])
	require.Equal(t, "Newsletter", parents["Label the uniform."])
}

// In plain text, a heading in capitals straight above its paragraph is a heading of its own.
func TestCapitalHeadingAboveItsParagraph(t *testing.T) {
	t.Parallel()
	p := parsePlain("Hello Marcus,\n\nThanks for the details.\n\nMIGRATION PROCEDURE\nFor a database of your size we suggest the link method.\n\n1. Take a full backup.\n2. Stop the service.\n")
	sections := map[string]string{}
	for _, u := range p.Units {
		sections[u.Text] = u.Section
	}
	require.Equal(t, "MIGRATION PROCEDURE", sections["For a database of your size we suggest the link method."])
	require.Equal(t, "MIGRATION PROCEDURE", sections["Stop the service."])
}

// A table indented by two spaces, ruled with gaps between its columns' dashes, with its header's
// second line right-aligned under the titles, is a table; a numbered heading boxed in rules of "="
// heads it, and the rules are no headings.
func TestIndentedTableUnderBoxedHeading(t *testing.T) {
	t.Parallel()
	text := "Shop sales were up.\n\n==========\n2. RESULTS BY REGION\n==========\n\n" +
		"  Region                 Revenue    Change vs\n" +
		"                          (£000)        Q2 LY\n" +
		"  --------------------  --------   ----------\n" +
		"  North West               2,310        +7.8%\n" +
		"  East Midlands            1,690        +9.5%\n"
	p := parsePlain(text)
	require.Len(t, p.Tables, 1)
	require.Equal(t, "RESULTS BY REGION", p.Tables[0].Title)
	require.Equal(t, []string{"Region", "Revenue (£000)", "Change vs Q2 LY"}, p.Tables[0].Header)
	require.Equal(t, []string{"East Midlands", "1,690", "+9.5%"}, p.Tables[0].Rows[1])
}
