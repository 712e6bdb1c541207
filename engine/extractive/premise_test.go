package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPremiseOfAQuestion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ q, premise string }{
		{"I'm 68 and registered at Hollins Green. Can I get the shingles vaccine now?", "I'm 68 and registered at Hollins Green"},
		{"my mum's GP practice uses Lumen software, when can they get the new Beacon?", "my mum's GP practice uses Lumen software"},
		{"taking my two kids (7 and 10) to the festival on Saturday, do they need tickets?", "taking my two kids (7 and 10) to the festival on Saturday"},
		{"We're a village hall charity in Lynford. What is the most we could get from the Rook Hill fund?", "We're a village hall charity in Lynford"},
		// A fronted phrase, or a statement about someone else, is part of what is asked.
		{"As of 2012, how many downloads did the app have?", ""},
		{"Homer's Odyssey is the third episode of The Simpsons. What character first appears in this episode?", ""},
		{"What is a heat pump and how does it save energy?", ""},
	} {
		require.Equal(t, c.premise, premiseOf(c.q), c.q)
	}
}

// The premise's figures are the asker's own and its words weigh less; a question that asks in
// fewer than two words of its own asks about the premise, whose words then weigh in full.
func TestPremiseWeighsLess(t *testing.T) {
	t.Parallel()
	q := analyze("I've got a £3,500 engagement ring. Why might HomeGuard not pay its full value if it's stolen?")
	require.Empty(t, q.Numbers, "£3,500 is the asker's ring, not a figure to find")
	require.Empty(t, analyze("taking my two kids to the festival on Saturday, do they need tickets?").Counted, "the asker's two kids")
	require.True(t, q.premise["ring"])
	require.False(t, q.premise["homeguard"], "a name of the question is its subject")

	c := markdownCorpus(t, map[string]string{"policy.md": "# HomeGuard policy\n\nWe pay up to £2,000 for any one item of jewellery that is stolen.\n\nAn engagement ring is a valuable.\n"})
	s := c.scorer(q)
	require.InDelta(t, premiseWeight*c.idf("ring"), s.w["ring"], 1e-9)
	require.InDelta(t, c.idf("valu"), s.w["valu"], 1e-9, "%v", q.Terms)

	// A question of fewer than two words of its own asks about the statement before it, denial
	// and all.
	q = analyze("my pump hums but nothing comes out of the hose, what should I do?")
	require.Empty(t, q.premise)
	require.True(t, q.Negated)
	require.False(t, analyze("I'm really not happy about the café going in downstairs. Can I appeal the council's decision?").Negated,
		"the premise's denial is the asker's, the question asks plainly")
}

func TestDashedStatementIsNoQuestionOfItsOwn(t *testing.T) {
	t.Parallel()
	subs := subQuestions("doing a school project on Edwin Saint Aldric - who did he train with as a teenager?", 3)
	require.Len(t, subs, 1)
	require.Equal(t, "Doing a school project on Edwin Saint Aldric. Who did he train with as a teenager?", subs[0].Text)
	subs = subQuestions("Summarise the data engineer job for me - is it worth applying?", 3)
	require.Len(t, subs, 2)
}
