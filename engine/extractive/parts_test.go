package extractive

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

const walkersGuide = `# Tollmere: a guide for walkers

Tollmere is a village of 900 people at the head of a long lake, with paths that climb to a ridge above it.

## Getting there

Trains from Carrow stop at Tollmere Halt every two hours. The journey takes 50 minutes.

## When to go

The paths are driest from June to September. In winter the upper trails close after snow.

## Getting around

A minibus links the village with the trailheads four times a day. Bicycles can be hired at the station.

## Before you walk

Tell someone at your guesthouse which route you plan to walk. Carry at least two litres of water.

## How to walk the ridge

Start at the church and follow the yellow markers. The ridge walk takes about five hours.
`

const otherGuide = `# Harlow Fen: a birdwatcher's guide

Harlow Fen is a nature reserve of reed beds and open water.

## When to go

Bitterns boom in April and May, and winter brings thousands of ducks.
`

func TestBriefingPartsAnsweredFromTheirSections(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"tollmere.md": walkersGuide, "harlow.md": otherGuide})
	o := lowEffort

	subs := subQuestions("Give me an overview of walking in Tollmere: how to get there, when to go, how to get around and how to walk it.", 5)
	require.Equal(t, []string{"How to get there?", "When to go?", "How to get around?", "How to walk it?"}, texts(subs),
		"the briefing is its parts; parts in common words are not repeats of each other")
	for i, want := range []string{
		"Trains from Carrow stop at Tollmere Halt", // "Getting there": the part's words, though all are common
		"driest from June to September",            // "When to go" in Tollmere's guide, not in Harlow Fen's
		"A minibus links the village",
		"follow the yellow markers", // "How to walk the ridge", not "Before you walk"
	} {
		f := c.find(subs[i], o)
		got := strings.Join(answerTexts(c, f), " ")
		require.Contains(t, got, want, subs[i].Text)
		require.NotContains(t, got, "Bitterns", subs[i].Text)
	}

	// A part no heading names is answered like any question, never by a summary of the guide.
	require.Equal(t, echoWords("Getting here", nil), echoWords("How to get there?", nil), "the guide's here is the visitor's there")

	f := c.find(subQuestions("Give me an overview of walking in Tollmere: how many people live there?", 5)[0], o)
	require.Equal(t, []string{"Tollmere is a village of 900 people at the head of a long lake, with paths that climb to a ridge above it."}, answerTexts(c, f))
}

func TestBriefingPartsCountAsOneQuestion(t *testing.T) {
	t.Parallel()
	subs := subQuestions("Brief me on Almeron: what it treats, how to take it and what to watch out for", 10)
	require.Equal(t, 3, researched(subs, 2), "the three parts of one briefing at effort low")
	subs = subQuestions("What is a heat pump? How much does it cost? Who installs it?", 10)
	require.Equal(t, 2, researched(subs, 2), "three questions of their own: the effort's two")
	subs = subQuestions("Brief me on Sarvela: how to get there, when to go, how to get around, where to stay, what to eat, what to see and what to buy", 10)
	require.Equal(t, maxParts, researched(subs, 2))
}

// markdownCorpus is a corpus of Markdown documents given by file name, in name order.
func markdownCorpus(t *testing.T, files map[string]string) *corpus {
	t.Helper()
	var docs []extract.Document
	for _, name := range slices.Sorted(maps.Keys(files)) {
		d, reason := extract.File("input_files/"+name, []byte(files[name]))
		require.Empty(t, reason)
		docs = append(docs, d)
	}
	return newCorpus(docs)
}

// lowEffort are the find options of effort low.
var lowEffort = findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}

func TestBriefingPartsWithoutNames(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"walks.md": "# Walking holidays in the fells\n\nThe fells have 300 kilometres of marked paths.\n\n" +
		"## Getting there\n\nTrains from the south stop at Kirkby twice an hour.\n\n## When to go\n\nThe paths are driest in June.\n"})
	subs := subQuestions("Give me an overview of walking holidays in the fells: how to get there and when to go.", 5)
	require.Equal(t, []string{"How to get there?", "When to go?"}, texts(subs))
	require.True(t, subs[0].Part && subs[1].Part, "a briefing without names has parts too")
	f := c.find(subs[0], lowEffort)
	require.Equal(t, []string{"Trains from the south stop at Kirkby twice an hour."}, answerTexts(c, f), "from the section the part echoes")
}

// A briefing listing its topics after a colon is answered topic by topic, each from its section,
// numbered sections included.
func TestBriefingTopicsAnsweredFromNumberedSections(t *testing.T) {
	t.Parallel()
	policy := "# Travel and expenses policy\n\nAlder Analytics · applies to all staff · owner: Finance\n\n" +
		"## 1. Booking travel\n\nAll business travel is booked through the travel portal. Train is the default for journeys of up to five hours. You may fly when the train takes longer.\n\n" +
		"## 2. Hotels\n\nBook a standard room close to where you are working. The company pays up to £150 a night.\n\n" +
		"## 3. Meals\n\nOn a day away from your usual office you may claim up to £35 for meals.\n"
	c := markdownCorpus(t, map[string]string{"policy.md": policy})
	subs := subQuestions("Give me an overview of the Alder Analytics travel policy: booking trains and flights, hotels and meals.", 5)
	require.Equal(t, []string{"Booking trains and flights?", "Hotels?", "Meals?"}, texts(subs))
	for i, want := range []string{"Train is the default", "£150 a night", "£35 for meals"} {
		f := c.find(subs[i], lowEffort)
		require.Contains(t, strings.Join(answerTexts(c, f), " "), want, subs[i].Text)
	}
}
