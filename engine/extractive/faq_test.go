package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const allotmentFAQ = `# Greenhithe allotments: questions from new tenants

The Greenhithe Allotment Society rents 64 plots on Ferry Lane to residents of the parish.

## What do I need to do when I take on a plot?

Two things. First, sign the tenancy agreement at the society's hut. Second, pay the first year's rent of 45 pounds before you start digging.

## Can I keep chickens on my plot?

No. The lease from the parish council forbids animals on the site, and that includes bees.

## Can I put up a shed?

Yes, if it is no larger than 2 by 3 metres and stands on the plot's northern edge.

## When is water available?

The taps are turned on from 1 April to 31 October. In winter the pipes are drained to protect them from frost.
`

func TestFAQHeadingsAnswerTheQuestionsTheyAsk(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"allotments.md": allotmentFAQ})
	o := lowEffort
	for _, tc := range []struct{ q, want, not string }{
		// The question adds words of its own ("new tenants", "Greenhithe allotment") to the heading's.
		{"What do new tenants need to do when they take on a Greenhithe allotment plot?", "pay the first year's rent of 45 pounds", ""},
		{"Can I keep chickens on my Greenhithe allotment plot?", "No.", ""},
	} {
		f := c.find(plainSub(tc.q), o)
		got := strings.Join(answerTexts(c, f), " ")
		if tc.want != "" {
			require.Contains(t, got, tc.want, tc.q)
		}
		if tc.not != "" {
			require.NotContains(t, got, tc.not, tc.q)
		}
	}

	all := func(int) bool { return true }
	for q, want := range map[string]bool{
		"What do I need to do when I take on a plot?": true,
		"Why do I need to take on a plot?":            false, // another question word asks another question
		"What do I need to do?":                       false, // "need" alone: one of the heading's words
		"When is water available on the plots?":       true,
		"When is the hut open?":                       false,
	} {
		_, ok := c.scorer(analyze(q)).faqSection(all)
		require.Equal(t, want, ok, q)
	}

	f := c.find(plainSub("Can I keep chickens on my plot?"), o)
	require.Equal(t, []string{"No. The lease from the parish council forbids animals on the site, and that includes bees."}, answerTexts(c, f),
		"the section's verdict and its reason, not the next section's \"Yes\"")
}

// A web page's headings ask their questions without a question mark.
func TestHeadingsOpenedByAQuestionWordAsk(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>Bin collections | Ashby Council</title></head><body>
<nav><a href="/">Home</a> <a href="/bins">Bins</a></nav>
<main><h1>Bin collections</h1>
<p>Ashby Council empties every household's bins. Each household has a grey bin for general waste, a green bin for recycling and a brown bin for garden waste.</p>
<h2>What goes in the green bin</h2>
<ul><li>Paper and cardboard</li><li>Plastic bottles and tubs</li><li>Cans and clean foil</li></ul>
<h2>When your bins are collected</h2>
<p>The grey bin and the green bin are collected on alternate weeks.</p>
</main></body></html>`
	c := markdownCorpus(t, map[string]string{"ashby-bins.html": page})
	f := c.find(plainSub("What can go in the green recycling bin?"), lowEffort)
	got := strings.Join(answerTexts(c, f), " ")
	require.Contains(t, got, "Paper and cardboard")
	require.Contains(t, got, "Cans and clean foil")

	all := func(int) bool { return true }
	for q, want := range map[string]bool{
		"When are my green and grey bins collected?":                     true,
		"When is the green bin emptied?":                                 false, // "emptied" is not "collected"
		"How are the bins collected?":                                    false, // another question word
		"What goes in the green bin in the first week of a new tenancy?": false, // the heading says too little of it
	} {
		_, ok := c.scorer(analyze(q)).faqSection(all)
		require.Equal(t, want, ok, q)
	}
}
