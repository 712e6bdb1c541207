package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

// A news story states its key points first: "sum up the story" leads with them, not with the
// sentences that repeat its words most.
func TestSummaryOfAWholeDocumentLeadsWithItsIntroduction(t *testing.T) {
	const story = `# Millbrook footbridge to shut for ten weeks as repair bill rises

*By Jo Hart · 3 March 2026*

The Millbrook footbridge will close for ten weeks from 4 May, the town council said on Monday, after the cost of repairing it rose to £900,000.

Engineers found rust in the cables that hold the deck.

## Diversions

Walkers will be sent over the Mill Lane bridge, a diversion of half a mile. The footbridge carries walkers to the station, and walkers to the market use the footbridge too. The footbridge is the only crossing for walkers near the market, so walkers and cyclists will use the Mill Lane bridge.

## Reaction

Shopkeepers near the footbridge said the closure of the footbridge would cost them trade, and the footbridge matters to walkers.
`
	c := markdownCorpus(t, map[string]string{"millbrook-footbridge.md": story})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 3, Support: 1}
	for _, q := range []string{"Sum up the Millbrook footbridge closure story for me.", "What's the gist of the Millbrook footbridge news?"} {
		got := answerTexts(c, c.find(plainSub(q), o))
		require.NotEmpty(t, got, q)
		require.Contains(t, got[0], "will close for ten weeks from 4 May", q)
		require.Contains(t, got, "Engineers found rust in the cables that hold the deck.", q)
		for _, s := range got {
			require.NotContains(t, s, "By Jo Hart", "the byline is no point of the story")
		}
	}

	// A briefing on what a section names is answered from that section, not the whole story.
	got := answerTexts(c, c.find(plainSub("Brief me on the diversions while the Millbrook footbridge is shut."), o))
	require.NotEmpty(t, got)
	require.Contains(t, got[0], "Mill Lane bridge")
}

// A memo's or minutes' header says who wrote to whom, who was there and when: it is no point of a
// summary.
func TestSummarySkipsRecordHeaders(t *testing.T) {
	const memo = `INTERNAL MEMO

This memo reports the third quarter.

To: Board of Directors
From: Ana Ruiz, Finance Director
Cc: Tom Hale, Head of Sales; Kim Lowe, Head of Roasting
Date: 14 October 2025

Sales rose 12% to £1.4m in the quarter, the best quarter on record for the roastery.

The board is asked to approve a second roaster for £86,000.
`
	c := markdownCorpus(t, map[string]string{"q3-memo.txt": memo})
	got := c.summary(0, 2, func(int) bool { return true }, true)
	var texts []string
	for _, u := range got {
		texts = append(texts, c.units[u].Text)
	}
	require.Equal(t, []string{"Sales rose 12% to £1.4m in the quarter, the best quarter on record for the roastery.",
		"The board is asked to approve a second roaster for £86,000."}, texts)
}

// A thread whose first line points to the accepted answer ("see post #3") is answered, and summed
// up, from that post.
func TestPointerToAPostStandsForThePost(t *testing.T) {
	const thread = `Pixa Community Forums > Printers
================================

[SOLVED] Printer drops off the network every night
--------------------------------------------------

Accepted solution: see post #3 by Mod_Lee

#1  ann_b   (Member)      02-03-2026 21:00
---------------------------------------------
Hi all. Every night my Pixa 200 printer drops off the network and I have to restart it.

#2  bo_k   (Member)      02-03-2026 21:30
---------------------------------------------
Have you tried turning the router off and on again?

#3  Mod_Lee   (Moderator)      03-03-2026 09:00      *** ACCEPTED SOLUTION ***
---------------------------------------------
Hi ann_b, thanks for the detail.
This is caused by the printer's Eco Sleep mode in firmware 1.8, which switches its Wi-Fi off after two hours idle. Firmware 1.9 fixes it, and until then you can turn Eco Sleep off in the printer's settings.
`
	c := markdownCorpus(t, map[string]string{"printer-thread.txt": thread})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 3, Support: 1}
	for _, q := range []string{"Why does the Pixa 200 printer drop off the network every night?", "Sum up the Pixa printer forum thread for me."} {
		got := strings.Join(answerTexts(c, c.find(plainSub(q), o)), " ")
		require.Contains(t, got, "Eco Sleep mode in firmware 1.8", q)
		require.NotContains(t, got, "see post #3", q)
	}
}

// A comparison is answered from a section whose heading names its words only when the section
// holds a sentence the answer model finds likely: "New timetable: Monday to Friday" names the
// weekday frequency, but the sentence comparing it is elsewhere.
func TestComparisonNotFromASectionWithoutALikelySentence(t *testing.T) {
	const page = `# Route 14: timetable changes

## What is changing

- **Weekday daytime frequency.** On Monday to Friday daytimes, route 14 will run every 30 minutes instead of every 20 minutes.
- **Evenings.** Evening buses will run hourly.

## New timetable: Monday to Friday

| Bus Station | Market Cross | Quay |
| --- | --- | --- |
| 06:10 | 06:17 | 06:48 |
| 06:40 | 06:47 | 07:18 |

"-" means the bus does not call at this stop. Full timetables can be downloaded from the route 14 page.
`
	c := markdownCorpus(t, map[string]string{"route-14.md": page})
	got := answerTexts(c, c.find(plainSub("How does the new Monday to Friday daytime frequency on route 14 compare with the current one?"), lowEffort))
	require.NotEmpty(t, got)
	require.Contains(t, got[0], "every 30 minutes instead of every 20 minutes")
}

// A comparison of two columns a table's headers name, their figures and brackets aside
// ("Delmirazole 1% (324 people)"), is answered with the whole row, not one column's cell.
func TestRowOfTwoNamedColumns(t *testing.T) {
	const doc = `# HALCYON-2 study results

## 5. What side effects did people have?

A side effect is a medical problem that the study doctors think may have been caused by the study treatment. In Part A:

| Side effects in Part A | Delmirazole 1% | Placebo (162 people) |
|---|---|---|
| Any side effect | 14.2% | 9.9% |
| Burning or stinging where the cream was put on | 6.5% | 3.1% |
| Stopped using the cream because of side effects | 2.2% | 1.9% |

Burning or stinging usually happened in the first 2 weeks and lasted less than 30 minutes after putting on the cream.
`
	c := markdownCorpus(t, map[string]string{"halcyon.md": doc})
	got := answerTexts(c, c.find(plainSub("How common was burning or stinging where the cream was applied with delmirazole compared with placebo?"), lowEffort))
	require.NotEmpty(t, got)
	require.Contains(t, got[0], "6.5%")
	require.Contains(t, got[0], "3.1%")

	// The headers count as named by their words, figures and brackets aside.
	s := c.scorer(analyze("How common was burning or stinging with delmirazole compared with placebo?"))
	require.Equal(t, 2, s.headersNamed(extract.Table{Header: []string{"Side effects in Part A", "Delmirazole 1%", "Placebo (162 people)"}}))
}

// A page's title, following its main heading as a byline, names its site: it is context, no point
// of a summary.
func TestSummaryLeavesThePageTitleOut(t *testing.T) {
	const page = `<html><head><title>MSc Harbour Surveying | Postgraduate taught | Wrenmouth University</title></head>
<body><main><h1>MSc Harbour Surveying</h1>
<h2>Overview</h2><p>The MSc Harbour Surveying trains surveyors to chart ports and harbours. Students chart the Wrenmouth estuary in a field week.</p>
<h2>Careers</h2><p>Graduates of the MSc Harbour Surveying work for port authorities and survey firms.</p>
</main></body></html>`
	c := markdownCorpus(t, map[string]string{"course.html": page})
	got := answerTexts(c, c.find(plainSub("give me a quick summary of the MSc Harbour Surveying course"), lowEffort))
	require.NotEmpty(t, got)
	for _, s := range got {
		require.NotContains(t, s, "Postgraduate taught")
	}
}
