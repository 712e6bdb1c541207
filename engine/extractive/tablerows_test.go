package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

// A list or comparison of a table's rows takes the rows the question names, or the rows a column
// of categories marks with the category it asks for; not the prose around the table.
func TestTableRowsAnswerListsAndComparisons(t *testing.T) {
	page := `<html><body><main><h1>MSc Harbour Surveying</h1>
<h2>Modules</h2><p>You will study 90 credits of core modules and choose 30 credits of optional modules.</p>
<table><tr><th>Module</th><th>Credits</th><th>Core/Optional</th></tr>
<tr><td>Tides and Currents</td><td>30</td><td>Core</td></tr>
<tr><td>Hydrographic Survey</td><td>30</td><td>Core</td></tr>
<tr><td>Dredging Practice</td><td>15</td><td>Optional</td></tr>
<tr><td>Port Law</td><td>15</td><td>Optional</td></tr>
<tr><td>Dissertation</td><td>30</td><td>Core</td></tr></table>
<h2>Fees</h2>
<table><tr><th>Fee status</th><th>Full-time</th><th>Part-time</th></tr>
<tr><td>Home (UK)</td><td>£9,800</td><td>£4,900</td></tr>
<tr><td>International</td><td>£21,000</td><td>£10,500</td></tr></table>
<p>Fees are for 2026/27 entry. The field week is included in your fees.</p>
</main></body></html>`
	d, reason := extract.File("input_files/course.html", []byte(page))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	for _, tc := range []struct {
		q          string
		want, nope []string
	}{
		{"Which optional modules can students choose on the MSc Harbour Surveying?",
			[]string{"Dredging Practice", "Port Law"}, []string{"Tides and Currents", "90 credits"}},
		{"How do the full-time tuition fees for home students compare with those for international students?",
			[]string{"£9,800", "£21,000"}, []string{"field week"}},
		{"List the modules of the MSc Harbour Surveying.",
			[]string{"Tides and Currents", "Port Law", "Dissertation"}, []string{"90 credits"}},
		// "Optional" marks modules; optional extras of a policy are something else.
		{"What optional extras can students add to their Harbour Surveying insurance policy?", nil, []string{"Dredging Practice"}},
	} {
		f := c.find(plainSub(tc.q), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 6, Support: 1})
		got := answerTexts(c, f)
		for _, w := range tc.want {
			require.Contains(t, strings.Join(got, " "), w, tc.q)
		}
		for _, w := range tc.nope {
			require.NotContains(t, strings.Join(got, " "), w, tc.q)
		}
	}
}

// A heading answers in a document about the question: a course page's "Start date" does not say
// why an outage started when the outage's postmortem is among the sources.
func TestSectionOfAnIrrelevantDocument(t *testing.T) {
	postmortem, reason := extract.File("input_files/postmortem.md", []byte("# Checkout outage\n\n## Summary\n\n"+
		"On 3 May the checkout endpoint returned 503 errors for two hours.\n\n## Root cause\n\n"+
		"A release shortened the timeout for calls to the card vault, and the retries exhausted its connection pool.\n"))
	require.Empty(t, reason)
	course, reason := extract.File("input_files/course.html", []byte("<html><body><main><h1>MSc Harbour Surveying</h1>"+
		"<dl><dt>Start date</dt><dd>21 September 2026</dd></dl><p>The course teaches surveying.</p></main></body></html>"))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{postmortem, course})
	f := c.find(plainSub("Why did the checkout endpoint start returning 503 errors?"), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 6, Support: 1})
	require.True(t, f.answered())
	require.NotContains(t, strings.Join(answerTexts(c, f), " "), "21 September")
}

// A table headed by a name only is what the table is about (an infobox), not a column a list asks for.
func TestTableHeadedByANameIsNoColumn(t *testing.T) {
	c := markdownCorpus(t, map[string]string{"aldric.md": "# Edwin Aldric\n\n## An engineer's life\n\n| Edwin Aldric | |\n| --- | --- |\n" +
		"| **Born** | 14 March 1826 |\n| **Occupation** | Civil engineer |\n\n" +
		"## Major engineering works\n\nEdwin Aldric's major works were the Askew Viaduct and the Lathgow water scheme.\n"})
	f := c.find(plainSub("What were Edwin Aldric's major engineering works?"), lowEffort)
	require.True(t, f.answered())
	require.NotContains(t, strings.Join(answerTexts(c, f), " "), "14 March 1826")
}
