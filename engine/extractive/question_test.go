package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func texts(subs []subQuestion) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Text
	}
	return out
}

func TestSubQuestions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, q string
		max     int
		want    []string
	}{
		{"question word after and", "What is a heat pump and how does it save energy?", 2,
			[]string{"What is a heat pump?", "How does it save energy?"}},
		// A briefing spelled out after a colon is its parts: the clause before only announces them.
		{"colon before question words", "Brief me on Almeron: what it treats, how to take it and what to watch out for", 4,
			[]string{"What it treats?", "How to take it?", "What to watch out for?"}},
		{"briefing listing its topics", "Give me an overview of the travel policy: booking trains and flights, hotels and meals.", 4,
			[]string{"Booking trains and flights?", "Hotels?", "Meals?"}},
		{"briefing with one topic kept", "Give me an overview of the travel policy: trains and flights", 4,
			[]string{"Give me an overview of the travel policy: trains and flights?"}},
		{"briefing with one part", "Give me an overview of a trip to Sarvela: when to go", 4,
			[]string{"When to go?"}},
		{"question before a colon kept", "What is a heat pump: how does it work, and what does it cost?", 4,
			[]string{"What is a heat pump?", "How does it work?", "What does it cost?"}},
		// A statement before a question that has parts: the parts are cut after it, at a comma
		// before a question word, contracted or not ("what's").
		{"statement, then parts", "My dryer stopped and the display says E34. What's wrong with it, how long should I leave it, and what's the warmest room it can run in?", 4,
			[]string{"My dryer stopped and the display says E34. What's wrong with it?", "How long should I leave it?", "What's the warmest room it can run in?"}},
		{"a part opened by also", "Does pausing change my minimum term? Also, what does a paused month cost, what's the longest pause allowed?", 4,
			[]string{"Does pausing change my minimum term?", "Also, what does a paused month cost?", "What's the longest pause allowed?"}},
		// A request about how to answer is no question of its own.
		{"a request after the question", "How do I claim back what I paid on a business trip? Give me the gist.", 4,
			[]string{"How do I claim back what I paid on a business trip. Give me the gist?"}},
		{"a question after a spaced dash", "Summarise the data engineer job for me - is it worth applying?", 4,
			[]string{"Summarise the data engineer job for me?", "Is it worth applying?"}},
		{"a dash around words is no question", "What is the cost - in euros - of the pump?", 4,
			[]string{"What is the cost - in euros - of the pump?"}},
		{"sentences", "Describe battery storage. Why do prices fall?", 2,
			[]string{"Describe battery storage?", "Why do prices fall?"}},
		{"semicolon and comma wh", "grid costs; who pays, why now", 3,
			[]string{"Grid costs?", "Who pays?"}}, // "why now" has no content words
		// Coordinated words stay in their question: it is answered as a whole, its answer grouped by
		// what it covers, never rewritten into questions it did not ask.
		{"noun coordination kept", "What are the costs and benefits of heat pumps?", 2,
			[]string{"What are the costs and benefits of heat pumps?"}},
		{"list kept", "Compare LFP and NMC on energy density, cycle life, safety and cost", 3,
			[]string{"Compare LFP and NMC on energy density, cycle life, safety and cost?"}},
		{"noun phrases kept", "How do falling lithium prices and price volatility affect grid storage?", 3,
			[]string{"How do falling lithium prices and price volatility affect grid storage?"}},
		{"names kept", "Were Scott Derrickson and Ed Wood of the same nationality?", 3,
			[]string{"Were Scott Derrickson and Ed Wood of the same nationality?"}},
		{"abbreviation is not a sentence end", "Which F.C. club did he join in 1998?", 3,
			[]string{"Which F.C. club did he join in 1998?"}},
		// A fronted phrase before a comma is part of the question, not a question of its own.
		{"fronted phrase kept", "As of 2012, how many downloads have there been of Gold Digger?", 3,
			[]string{"As of 2012, how many downloads have there been of Gold Digger?"}},
		{"according to kept", "According to Shields, which of the book's lessons are universal?", 3,
			[]string{"According to Shields, which of the book's lessons are universal?"}},
		{"request before a comma", "Tell me about the Kestrel, what does it cost?", 3,
			[]string{"Tell me about the Kestrel?", "What does it cost?"}},
		// An auxiliary after "but" opens a question only before a subject of its own.
		{"shared subject kept", "Who almost signed Kanye but was ultimately swayed?", 3,
			[]string{"Who almost signed Kanye but was ultimately swayed?"}},
		{"auxiliary before its subject", "What does the pump cost and is it safe?", 3,
			[]string{"What does the pump cost?", "Is it safe?"}},
		// A statement before a question says what the question is about.
		{"statement before a question", "I have a Kestrel dryer. How do I clean its filter?", 3,
			[]string{"I have a Kestrel dryer. How do I clean its filter?"}},
		{"statements only", "Heat pumps in Norway. Electric buses in Oslo.", 3,
			[]string{"Heat pumps in Norway?", "Electric buses in Oslo?"}},
		// No templates: a simple question is one sub-question, whatever the budget.
		{"no facets", "Heat pump adoption in Norway", 4, []string{"Heat pump adoption in Norway?"}},
		{"plural subject", "electric buses", 2, []string{"Electric buses?"}},
		{"duplicates dropped", "What is solar? What is solar?", 3, []string{"What is solar?"}},
		{"only stopwords", "what is it?", 3, []string{"What is it?"}},
		{"empty", "", 2, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := subQuestions(tt.q, tt.max)
			require.Equal(t, tt.want, texts(got))
			require.LessOrEqual(t, len(got), max(tt.max, 1))
		})
	}
}

func TestSubQuestionsCarryTheSubject(t *testing.T) {
	t.Parallel()
	subs := subQuestions("What is a heat pump and how does it save energy?", 5)
	require.Equal(t, []string{"What is a heat pump?", "How does it save energy?"}, texts(subs))
	require.Nil(t, subs[0].Carry)
	require.Equal(t, []string{"heat", "pump"}, subs[1].Carry, "\"it\" is the heat pump")

	subs = subQuestions("What error codes can the Kestrel dryer show, and what does each one mean?", 5)
	require.Equal(t, []string{"What error codes can the Kestrel dryer show?", "What does each one mean?"}, texts(subs))
	require.NotEmpty(t, subs[1].Carry, "\"each one\" is an error code")

	subs = subQuestions("Brief me on Almeron: what it treats and what to watch out for", 5)
	require.Len(t, subs, 2)
	require.Equal(t, []string{"almeron"}, subs[0].Carry, "a part after the colon is about Almeron")
	require.Equal(t, []string{"almeron"}, subs[1].Carry)
	require.True(t, subs[0].Part && subs[1].Part, "each is a part of the briefing")

	subs = subQuestions("Give me an overview of a trip to Sarvela: when to go", 5)
	require.Equal(t, []string{"trip", "sarvela"}, subs[0].Carry, "not \"give\" or \"overview\"")

	subs = subQuestions("What is a heat pump: how does it work?", 5)
	require.False(t, subs[1].Part, "the parts of a question are answered as what they ask")

	subs = subQuestions("Who founded Acme, and when did Globex go public?", 5)
	require.Len(t, subs, 2)
	require.Nil(t, subs[1].Carry, "a question of its own carries nothing")

	subs = subQuestions("Which country had the highest export price in 2021? Which metro line had the lowest ridership?", 5)
	require.Len(t, subs, 2)
	require.Nil(t, subs[1].Carry, "a question of its own carries nothing")
}

func TestKeyPhrases(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"solar power", "running costs", "heat pumps"},
		keyPhrases("How does solar power affect running costs of heat pumps?"))
	require.Equal(t, []string{"grid", "prices"}, keyPhrases("grid, prices"))
	require.Equal(t, []string{"heat pump adoption", "Norway", "NATO"}, keyPhrases("Heat pump adoption in Norway and NATO"))
}
