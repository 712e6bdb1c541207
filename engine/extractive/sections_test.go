package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

func TestAspects(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Compare LFP and NMC on energy density, cycle life, safety and cost", []string{"energy density", "cycle life", "safety", "cost"}},
		{"Compare the two mowers in terms of noise and price.", []string{"noise", "price"}},
		{"Compare LFP and NMC on cost", nil}, // one aspect: nothing to group
		{"How do LFP and NMC differ?", nil},
	} {
		require.Equal(t, tc.want, aspects(tc.q), tc.q)
	}
}

func TestShapeOfPluralQuestions(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want questionShape
	}{
		{"What effects does summer heat have on the city?", shapeList},
		{"What are the most common mistakes small offices make with backups?", shapeList},
		{"Which countries border Austria?", shapeList},
		{"What year did the bridge open?", shapeFactoid},
		{"What is the status of the project?", shapeFactoid},
		{"What was the company's revenue in 2024?", shapeFactoid},
		{"What's new in Quillbox 3.2?", shapeList}, // the changes a release lists
		{"What has changed in version 4?", shapeList},
		{"What's the capital of Peru?", shapeFactoid},
	} {
		require.Equal(t, tc.want, analyze(tc.q).Shape, tc.q)
	}
}

func TestQuestionTypeFromMeasureHead(t *testing.T) {
	require.Equal(t, typeMoney, analyze("What was the group's revenue in 2024?").Type)
	require.Equal(t, typeNumber, analyze("What is the population of Tampere?").Type)
	require.Equal(t, typeAny, analyze("What is the revenue model of the company?").Type) // the head is "model"
}

const ferryDoc = `# The Kestrel ferry line: annual review

The Kestrel line carries cars and passengers between Arnholm and Seby. This review explains why the line changed its ships and what the change achieved.

## Why the old ships were retired

The two diesel ferries were built in 1979. Their engines failed eleven times in 2022, and spare parts had to be made by hand because the maker closed in 2004.

## Benefits of the electric ships

Running costs fell. Electricity for a crossing costs about a third of the diesel it replaced, and maintenance costs fell by 40 per cent.

Emissions fell. The line emits about 9,000 tonnes of carbon dioxide less each year.

Crossings are quieter. Residents near the harbour reported far less noise at night.

## Battery

Each ship carries a 4.3 megawatt-hour battery. It charges in eight minutes at each end of the line.

## Fares

A single car crossing costs 24 euros and a foot passenger pays 4 euros.
`

func ferryCorpus(t *testing.T) *corpus {
	t.Helper()
	d, reason := extract.File("input_files/kestrel-review.md", []byte(ferryDoc))
	require.Empty(t, reason)
	return newCorpus([]extract.Document{d})
}

func answerTexts(c *corpus, f finding) []string {
	var out []string
	for _, u := range f.Answer {
		out = append(out, c.units[u].Text)
	}
	return out
}

func TestSectionAnswers(t *testing.T) {
	c := ferryCorpus(t)
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}

	// A list: one point per paragraph of the section its heading names, the evidence after a
	// point that only announces itself, not the introduction that also says "benefits".
	// ("Emissions fell." is a run-in heading, not a sentence.)
	f := c.find(plainSub("What are the main benefits of the electric ships on the Kestrel line?"), o)
	got := answerTexts(c, f)
	require.Equal(t, []string{
		"Running costs fell.", "Electricity for a crossing costs about a third of the diesel it replaced, and maintenance costs fell by 40 per cent.",
		"The line emits about 9,000 tonnes of carbon dioxide less each year.",
		"Crossings are quieter.", "Residents near the harbour reported far less noise at night.",
	}, got)

	// A reason: the section's likeliest sentences, not one point per paragraph.
	f = c.find(plainSub("Why were the old Kestrel ships retired?"), o)
	require.NotEmpty(t, f.Answer)
	require.True(t, slices.ContainsFunc(answerTexts(c, f), func(s string) bool { return strings.Contains(s, "failed eleven times") }), answerTexts(c, f))

	// A comparison on named aspects: each aspect from its own section, labelled with it.
	f = c.find(plainSub("Compare the Kestrel line's battery and fares"), o)
	require.Empty(t, f.Parts, "\"battery and fares\" is not made on aspects")
	f = c.find(plainSub("Compare the Kestrel ships on battery, charging and fares"), o)
	require.Equal(t, []string{"battery", "charging", "fares"}, nlp.Uniq(slices.Clone(f.Parts)))
	require.Contains(t, strings.Join(answerTexts(c, f), " "), "24 euros")

	// A question about a place none of the documents names is not answered from a section.
	f = c.find(plainSub("What are the main benefits of the electric ships in Bergen?"), o)
	require.Empty(t, f.Answer)
}

func TestSummaryPrefersCentralSentences(t *testing.T) {
	c := ferryCorpus(t)
	all := func(int) bool { return true }
	got := c.summary(0, 3, all, false)
	require.Len(t, got, 3)
	require.True(t, slices.IsSorted(got), "in document order")
	for _, u := range got {
		require.NotEqual(t, extract.UnitRow, c.units[u].Kind)
	}
}

func TestAnswerFields(t *testing.T) {
	for _, name := range []string{"answer", "summary", "key_points", "cause", "causes", "explanation"} {
		require.True(t, answerField(name), name)
	}
	for _, name := range []string{"cause_date", "revenue", "causes_count"} {
		require.False(t, answerField(name), name)
	}
}

// A briefing answered from a section of few paragraphs takes each paragraph's lead and fills the
// rest of its room with the section's other sentences, in document order: the facts of a short
// section are often mid-paragraph.
func TestBriefingFillsFromItsSection(t *testing.T) {
	const doc = `# The common swift

Swifts spend almost their whole lives in the air.

## Raising a family

Swifts nest in dark cavities high on buildings. Pairs stay together for life. The female lays two or three eggs, which both parents incubate for 19 to 20 days.

The parents feed their chicks on insects caught in flight. In cold weather the chicks survive by falling into torpor. They leave the nest after 37 to 56 days.

## Migration

Swifts winter in Africa, south of the Sahara.
`
	d, reason := extract.File("input_files/swift.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	f := c.find(plainSub("Give me an overview of how swifts raise their young."), o)
	got := answerTexts(c, f)
	require.Len(t, got, 4, "both leads and two more sentences of the section")
	require.Equal(t, "Swifts nest in dark cavities high on buildings.", got[0])
	require.Contains(t, got, "The parents feed their chicks on insects caught in flight.")
	require.True(t, slices.IsSorted(f.Answer), "in document order")
	for _, s := range got {
		require.NotContains(t, s, "Africa", "nothing from another section")
	}
}

// A list asked of a section that is a table ("Action items") is answered by the table's rows.
func TestListFromATableSection(t *testing.T) {
	const doc = `# Post-mortem: checkout outage at Larkspur Books

Customers of Larkspur Books could not complete orders for two hours on 3 March 2025, and no order was charged twice.

## Root cause

A configuration change cut the database connection pool from 200 to 20.

## Action items

| Action | Owner | Due |
| --- | --- | --- |
| Alert at 80 per cent of the connection pool | Platform | 6 April 2025 |
| Schema validation of configuration changes | Platform | 30 April 2025 |
| Canary traffic raised to 10 per cent | Payments | 31 May 2025 |
`
	d, reason := extract.File("input_files/postmortem.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	f := c.find(plainSub("What follow-up actions did Larkspur Books agree on after the outage?"), o)
	require.Len(t, f.Answer, 3, "one point per row")
	for _, u := range f.Answer {
		require.Equal(t, extract.UnitRow, c.units[u].Kind)
	}
}

// A list asked of a section of one paragraph takes its sentences, a point each, not the likeliest two.
func TestListFromOneParagraph(t *testing.T) {
	const doc = `# Anna Brandt, engineer

Anna Brandt built bridges in the Alps.

## Legacy

Her Sella bridge still carries traffic. The original piers she designed remain in use. Her method of testing cables is still taught. Since 2004 an engineering prize bears her name.

## Private life

She lived in Chur with her sister.
`
	d, reason := extract.File("input_files/brandt.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	f := c.find(plainSub("What are the main parts of Anna Brandt's legacy?"), o)
	got := answerTexts(c, f)
	require.Len(t, got, 4, "%q", got)
	require.Equal(t, "Since 2004 an engineering prize bears her name.", got[3])
}

// A reason from a section: a sentence that only announces the causes brings the one after it.
func TestReasonAnnouncementBringsItsCause(t *testing.T) {
	const doc = `# The alpine swift

## Why alpine swifts are declining

Alpine swift numbers have fallen by a third since 1990. Two causes stand out. The first is the loss of nest sites in renovated roofs. The second is the decline of flying insects.
`
	d, reason := extract.File("input_files/alpine-swift.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	var sec section
	for _, s := range c.sections {
		if len(s.Units) == 4 {
			sec = s
		}
	}
	require.Len(t, sec.Units, 4)
	// The model finds the fall and the announcement likeliest.
	ranked := []scored{{U: sec.Units[1]}, {U: sec.Units[0]}, {U: sec.Units[3]}, {U: sec.Units[2]}}
	got := c.sectionPoints(sec, ranked, 4, false, nil)
	require.Equal(t, sec.Units[:3], got, "the announcement brings the first cause, in order")
}

// A reason from a section: the likeliest sentence often restates what is asked; the one after it
// says why.
func TestReasonLikeliestBringsTheNext(t *testing.T) {
	const doc = `# Heat pumps tested

## Calder Therma 8

The Calder Therma 8 is the cheapest pump in the test. It is a poor choice for older houses with radiators. Its maximum flow temperature is only 55 °C. It is sold in twelve countries.
`
	d, reason := extract.File("input_files/heat-pumps.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	var sec section
	for _, s := range c.sections {
		if len(s.Units) == 4 {
			sec = s
		}
	}
	require.Len(t, sec.Units, 4)
	ranked := []scored{{U: sec.Units[1]}, {U: sec.Units[0]}, {U: sec.Units[3]}, {U: sec.Units[2]}}
	require.Equal(t, sec.Units[:3], c.sectionPoints(sec, ranked, 4, false, nil))
}

// A list asked of paragraphs with bold lead-ins ("**Error E21.** …") under a heading that does not
// name it takes each paragraph whose lead-in does; a reason is not answered from one of them.
func TestListFromBoldLeadIns(t *testing.T) {
	const doc = `# Wren W5 dishwasher: troubleshooting

## Troubleshooting

**Dishes are not clean.** Clean the filter and check the spray arms.

**Error E12.** The water inlet is blocked. Check that the tap is open.

**Error E40.** The water did not heat. Call the service line.

**The machine is noisy.** A low hum is normal.
`
	d, reason := extract.File("input_files/wren.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	got := answerTexts(c, c.find(plainSub("What error codes can the Wren W5 show?"), o))
	require.Equal(t, []string{"**Error E12.** The water inlet is blocked.", "**Error E40.** The water did not heat."}, got)
}

// A heading counts in proportion to its document's relevance: a dryer manual's heading that shares
// two words with the question does not answer a briefing on how common swifts raise their young.
func TestSectionInTheRelevantDocument(t *testing.T) {
	docs := map[string]string{
		"input_files/dryer.md": "# Kestrel dryer guide\n\n## Common programmes for young families\n\nEco Cotton takes about three hours.\n\nQuick 40 takes forty minutes.\n",
		"input_files/swift.md": "# The common swift\n\nThe common swift spends most of its life in the air. Common swifts are common in European towns.\n\n## Raising a family\n\nSwifts nest in dark cavities under roof tiles.\n\nThe chicks leave the nest after 37 to 56 days.\n",
	}
	var ds []extract.Document
	for _, name := range []string{"input_files/dryer.md", "input_files/swift.md"} {
		d, reason := extract.File(name, []byte(docs[name]))
		require.Empty(t, reason)
		ds = append(ds, d)
	}
	c := newCorpus(ds)
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	f := c.find(plainSub("Give me an overview of how common swifts raise their young."), o)
	require.NotEmpty(t, f.Answer)
	for _, s := range answerTexts(c, f) {
		require.NotContains(t, s, "takes", "nothing from the dryer manual: %q", answerTexts(c, f))
	}
}

// A comparison on named aspects takes, from each aspect's section, sentences giving a figure for
// each item compared before the section's introduction.
func TestCompareTakesFiguresOfTheItems(t *testing.T) {
	doc := `# Alder and Birch pumps compared

## Noise

Noise decided the choice for most households in the trial. The Alder ran at 38 decibels at night.
Noise at night matters most in bedrooms. The Birch ran at 45 decibels at night.

## Price

Price mattered less than expected. The Alder costs 9,800 euros installed. The Birch costs 8,200 euros installed.
`
	d, reason := extract.File("input_files/pumps.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 2, Support: 1}
	f := c.find(plainSub("Compare the Alder and the Birch on noise and price."), o)
	require.Equal(t, []string{"noise", "noise", "price", "price"}, f.Parts)
	require.Equal(t, []string{"The Alder ran at 38 decibels at night.", "The Birch ran at 45 decibels at night.",
		"The Alder costs 9,800 euros installed.", "The Birch costs 8,200 euros installed."}, answerTexts(c, f))
}

// A comparison's aspect of several words ("mowing time") is answered from a section whose heading
// names its head word, not from one that shares only a modifier ("How large a lawn can it mow?").
func TestCompareAspectHead(t *testing.T) {
	doc := `# Alder and Birch mowers

## How large a lawn can they mow?

The Alder handles lawns of up to 1,500 square metres. The Birch handles lawns of up to 3,000 square metres.

## How long does the battery last?

The Alder mows for about 90 minutes on a charge, the Birch for about 150 minutes.

## What do they cost?

The Alder costs 1,899 euros and the Birch 2,499 euros.
`
	d, reason := extract.File("input_files/mowers.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 3, Support: 1}
	f := c.find(plainSub("Compare the Alder and the Birch on lawn size, mowing time and price."), o)
	got := map[string]string{}
	for i, u := range f.Answer {
		got[f.Parts[i]] = c.units[u].Text
	}
	require.Contains(t, got["mowing time"], "150 minutes", "%v %v", got, f.Parts)
}

// A multi-document question's second search goes where the first passage's names lead: a passage
// of another document that states none of them is not taken, however well it matches the rest.
func TestHopFollowsTheBridge(t *testing.T) {
	heat, reason := extract.File("input_files/heat.md", []byte("# Heat plan\n\nThe Office recommends that the council plants new street trees under the plan.\n"))
	require.Empty(t, reason)
	depot, reason := extract.File("input_files/depot.md", []byte("# Depot\n\nThe new depot for the council cost 38 million euros more than planned.\n"))
	require.Empty(t, reason)
	office, reason := extract.File("input_files/office.md", []byte("# The Office\n\nThe Office of Environment costs the council 2 million euros a year.\n"))
	require.Empty(t, reason)
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1, Hop: true}
	q := "How much would the council pay for the new street trees under the plan?"
	for _, tt := range []struct {
		docs []extract.Document
		not  string
	}{
		{[]extract.Document{heat, depot}, "38 million"},
		{[]extract.Document{heat, depot, office}, "38 million"},
	} {
		c := newCorpus(tt.docs)
		got := strings.Join(answerTexts(c, c.find(plainSub(q), o)), " ")
		require.NotContains(t, got, tt.not)
	}
}

// A factoid whose best sentence lacks the kind of value asked for goes on to the next sentence of
// its paragraph when that one holds it; a figure that is no span of time does not answer "how long".
func TestValueInTheNextSentence(t *testing.T) {
	doc := "# Backups for a small office\n\nThis guide explains how to set up automatic backups for an office NAS, following the " +
		"3-2-1 rule. It takes about an afternoon.\n\nRestoring a single file from the backups takes about two minutes.\n"
	d, reason := extract.File("input_files/backups.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	got := answerTexts(c, c.find(plainSub("How long will it take to set up automatic backups for the office NAS?"), o))
	require.Contains(t, got, "It takes about an afternoon.", got)
}

// A briefing on things joined by "and", each with a section of its own, takes points from each,
// labelled with it.
func TestBriefByParts(t *testing.T) {
	require.Equal(t, []string{"outlook", "risks"}, coordinated("Brief me on Glenrock's outlook and main risks."))
	require.Equal(t, []string{"costs", "benefits", "risks"}, coordinated("Brief me on heat pumps: costs, benefits and risks"))
	require.Empty(t, coordinated("Give me an overview of how to upgrade a FernDB cluster to version 4.0."))
	require.Equal(t, []string{"benefits", "risks"}, coordinated("What are the benefits and risks of heat pumps?"))

	d, reason := extract.File("input_files/acme.md", []byte("# Acme Roasters: third quarter\n\n## Results\n\n"+
		"Revenue rose by 9 per cent to 4.1 million euros.\n\n## Outlook\n\nWe expect revenue of 17 million euros for the year. "+
		"Prices will rise by 8 per cent in November.\n\n## Risks\n\n- Green coffee prices may rise further.\n"+
		"- Our largest customer accounts for 14 per cent of revenue.\n"))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	f := c.find(plainSub("Brief me on Acme Roasters' outlook and main risks."), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1})
	require.True(t, f.answered(), f.Missing)
	text := strings.Join(answerTexts(c, f), " ")
	require.Contains(t, text, "17 million euros")
	require.Contains(t, text, "largest customer")
	require.Contains(t, f.Parts, "outlook")
	require.Contains(t, f.Parts, "risks")

	// A list of two things, each with a section, likewise.
	d, reason = extract.File("input_files/pumps.md", []byte("# Acme heat pumps\n\n## Installation\n\nAn installer needs two days.\n\n"+
		"## Benefits\n\n- Running costs fall by a third.\n- The pump also cools in summer.\n\n## Risks\n\n"+
		"- A noisy outdoor unit can annoy neighbours.\n- Radiators may be too small.\n"))
	require.Empty(t, reason)
	c = newCorpus([]extract.Document{d})
	f = c.find(plainSub("What are the benefits and risks of Acme heat pumps?"), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1})
	require.True(t, f.answered(), f.Missing)
	text = strings.Join(answerTexts(c, f), " ")
	require.Contains(t, text, "Running costs fall")
	require.Contains(t, text, "noisy outdoor unit")
}

// A heading that asks a question of its own names what it asks about in passing: "what to bring to
// my jab" is about "What to bring", not the FAQ on having the jab with another.
func TestQuestionHeadingNamesInPassing(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"shingles.md": "# Shingles vaccination at Hollins Green\n\n## What to bring\n\n" +
		"Please bring a list of the medicines you take.\n\n## Frequently asked questions\n\n" +
		"### Can I have it at the same time as my flu jab?\n\nYes. You can have both jabs at the same appointment.\n"})
	s := c.scorer(analyze("What do I need to bring to my shingles jab at Hollins Green?"))
	require.Equal(t, s.w["bring"], s.w["jab"], "the two words weigh the same")
	scores := map[string]float64{}
	for _, sec := range c.sections {
		if sec.RunIn == "" {
			scores[c.units[sec.Units[0]].Heading] = s.headMatch(sec, s.q.Terms)
		}
	}
	require.Greater(t, scores["What to bring"], scores["Can I have it at the same time as my flu jab?"])
}
