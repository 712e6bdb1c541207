package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

const poolPage = `# Ferndale lido

The Ferndale lido was built in 1934 and closed in 1989, before the town council reopened it in 2011.

The lido is open daily from May to September. Swimming sessions run from 07:00 to 19:30.

Lifeguards are on duty during every session.
`

func TestWhatTimeQuestionsLeadWithATimeOfDay(t *testing.T) {
	t.Parallel()
	d, reason := extract.File("input_files/lido.md", []byte(poolPage))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	f := c.find(plainSub("What time does the Ferndale lido close?"), o)
	require.NotEmpty(t, f.Answer)
	require.Equal(t, "Swimming sessions run from 07:00 to 19:30.", c.units[f.Answer[0]].Text, "not the year it closed")
	require.True(t, analyze("At what time does the bus leave?").Clock)
	require.False(t, analyze("What time period saw the most growth?").Clock)
}
