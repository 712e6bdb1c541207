package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const poolPage = `# Ferndale lido

The Ferndale lido was built in 1934 and closed in 1989, before the town council reopened it in 2011.

The lido is open daily from May to September. Swimming sessions run from 07:00 to 19:30.

Lifeguards are on duty during every session.
`

func TestWhatTimeQuestionsLeadWithATimeOfDay(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"lido.md": poolPage})
	o := lowEffort
	f := c.find(plainSub("What time does the Ferndale lido close?"), o)
	require.NotEmpty(t, f.Answer)
	require.Equal(t, "Swimming sessions run from 07:00 to 19:30.", c.units[f.Answer[0]].Text, "not the year it closed")
	// Without a time of day near the best passage, the question is not answered.
	c = markdownCorpus(t, map[string]string{"shuttle.md": "# Bridge closure\n\nDuring the closure the council will run a free shuttle minibus every 20 minutes between Station Road and the Market Square.\n"})
	f = c.find(plainSub("What time does the free shuttle minibus start in the morning?"), o)
	require.Empty(t, f.Answer)
	require.Contains(t, f.Missing, "time of day")
	require.True(t, analyze("At what time does the bus leave?").Clock)
	require.True(t, analyze("How late can customers sit out in the courtyard?").Clock)
	require.False(t, analyze("What time period saw the most growth?").Clock)
}

const jobAdvert = `# Halloway Freight: Senior Data Engineer

Halloway Freight moves around 40,000 pallets a week for retailers across the UK.

You will need at least four years' experience in data engineering.

We ask everyone in the team to spend two days a week in our Tamsford office, on Tuesdays and Thursdays.
`

// "How often" asks for a frequency: "two days a week", not a figure of another kind, nor a rate.
func TestHowOftenQuestionsLeadWithAFrequency(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"job.md": jobAdvert})
	f := c.find(plainSub("How often would I have to go into the office for the Halloway Freight data role?"), lowEffort)
	require.NotEmpty(t, f.Answer)
	require.Contains(t, c.units[f.Answer[0]].Text, "two days a week")
	require.True(t, analyze("How often does the ferry run?").Often)
	for _, text := range []string{"twice a year", "every 20 minutes", "two days a week", "It is held annually.", "every other Sunday"} {
		require.True(t, reFrequency.MatchString(text), text)
	}
	for _, text := range []string{"40,000 pallets a week", "four years' experience", "in 2024"} {
		require.False(t, reFrequency.MatchString(text), text)
	}
}

const bikeTest = `# Three city e-bikes compared

We rode three e-bikes for commuting for six weeks each.

| Model | Price | Range (tested) | Gears |
| --- | --- | --- | --- |
| Vello Urban 3 | 2,190 euros | 78 km | 8 |
| Marrow C2 | 1,650 euros | 61 km | 7 |
| Tandem Ease | 2,890 euros | 104 km | belt, 5 |
`

const movingFAQ = `# Moving offices: questions and answers

## What do I need to do before the move?

Three things. First, pack your desk. Second, label your boxes. Third, return your keys.
`

func TestTableFiguresWithUnitsAreCompared(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"bikes.md": bikeTest, "moving.md": movingFAQ})
	o := lowEffort
	f := c.find(plainSub("Which of the three e-bikes has the longest range?"), o)
	require.NotNil(t, f.Compare, "a column of figures with units is compared; \"three\" does not name the \"Three things.\" section")
	require.Equal(t, `Tandem Ease had the highest range (tested) (104 km), ahead of Vello Urban 3 (78 km) in the table "Three city e-bikes compared".`, f.Compare.Sentence)
	f = c.find(plainSub("Which e-bike is the cheapest?"), o)
	require.NotNil(t, f.Compare)
	require.Contains(t, f.Compare.Sentence, "Marrow C2 had the lowest price (1,650 euros)")
}

const pumpSpecs = `# Heat pumps tested

## Specifications at a glance

| | Nordhavn AW9 | Calder Therma 8 |
| --- | --- | --- |
| Price | 11,400 euros | 8,950 euros |
| Warranty | 7 years | 5 years |
`

func TestRowSentenceOfItemsCompared(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"pumps.md": pumpSpecs})
	row := c.tables[0].Units[0]
	s := c.scorer(analyze("Compare the Nordhavn AW9 and Calder Therma 8 on price."))
	require.Equal(t, `In the table "Specifications at a glance", the row for Price reads: Nordhavn AW9 11,400 euros; Calder Therma 8 8,950 euros.`, s.rowSentence(row),
		"a column for each item compared: the whole row")
	s = c.scorer(analyze("What is the price of the Calder Therma 8?"))
	require.Equal(t, `In the table "Specifications at a glance", Price has 8,950 euros under "Calder Therma 8".`, s.rowSentence(row))
}

const knownIssues = `# Quillbox 3.2 release notes

## Known issues

- On iPad, the pencil toolbar can disappear after the split view is closed. Restarting the app brings it back.
`

func TestHowQuestionTakesTheSentenceAfterItsMatch(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"notes.md": knownIssues})
	o := lowEffort
	f := c.find(plainSub("How do I get the pencil toolbar back on my iPad?"), o)
	require.Equal(t, []string{"On iPad, the pencil toolbar can disappear after the split view is closed.", "Restarting the app brings it back."},
		answerTexts(c, f), "the outcome follows the match, at every effort")
}

const actionItems = `# Operations meeting, 14 October 2025

## Action items

| Action | Owner | Due |
| --- | --- | --- |
| Book the removal firm for the warehouse move | Luis Ferreira | 31 October 2025 |
| Hire a second van for the north | Mette Halvorsen | 17 October 2025 |
`

func TestRowDatesAreNoAmountOfMoney(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"minutes.md": actionItems})
	o := lowEffort
	f := c.find(plainSub("How much will the removal firm charge for the warehouse move?"), o)
	require.Empty(t, f.Answer, "a row whose only figures are dates gives no price")
	require.Contains(t, f.Missing, "amount of money")
}
