package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

// TestCommittedModel: the committed answer model was fitted on this build's features, and a
// model fitted on others is refused (cmd/trainanswer must be run again).
func TestCommittedModel(t *testing.T) {
	t.Parallel()
	m, err := loadModel(answerModelJSON)
	require.NoError(t, err)
	require.Greater(t, m.Threshold, 0.0)
	require.Less(t, m.Threshold, 1.0)
	_, err = loadModel([]byte(strings.Replace(string(answerModelJSON), `"coverage"`, `"retired_feature"`, 1)))
	require.ErrorContains(t, err, "trainanswer")
}

// TestCandidateFeatures: features measure what their names say, on sentences written for them.
func TestCandidateFeatures(t *testing.T) {
	t.Parallel()
	docs := []extract.Document{
		{Path: "ferry.txt", Lines: []string{"The new Halden ferry carries 600 passengers.", "", "Each ticket costs 40 euros and the ferry is the oldest on the route."}},
		{Path: "trees.txt", Lines: []string{"Lisbon planted street trees in parks."}},
		{Path: "bus.txt", Lines: []string{"The Halden bus does not carry bicycles."}},
	}
	c := newCorpus(docs)
	feature := func(q string, text string, name string) float64 {
		s := c.scorer(analyze(q))
		st := s.stats()
		for u := range c.units {
			if c.units[u].Text == text {
				return s.features(u, st)[slices.Index(featureNames, name)]
			}
		}
		t.Fatalf("no unit %q", text)
		return 0
	}
	ferry := "The new Halden ferry carries 600 passengers."
	ticket := "Each ticket costs 40 euros and the ferry is the oldest on the route."
	require.Equal(t, 1.0, feature("How many passengers does the Halden ferry carry?", ferry, "type_hit"))
	require.Equal(t, 0.0, feature("How many tickets does the ferry sell?", ticket, "type_hit"), "money is not a count")
	require.Equal(t, 1.0, feature("Which ferry is the youngest on the route?", ticket, "opposite"))
	require.Equal(t, 1.0, feature("How many passengers did the Halden ferry carry in 2019?", ferry, "number_absent"))
	require.Equal(t, 1.0, feature("How many passengers does the Oslo ferry carry?", ferry, "name_absent"))
	require.Equal(t, 0.0, feature("Did Lisbon ferry passengers plant trees?", ferry, "names_unbridged"), "another document names Lisbon")
	// A question that denies something, answered by a sentence that does not, and the other way
	// round, are told apart: a sentence may deny in answer to a plain question.
	require.Equal(t, 1.0, feature("Which ferry does not carry passengers?", ferry, "negation_question"))
	require.Equal(t, 0.0, feature("Which ferry does not carry passengers?", ferry, "negation_unit"))
	require.Equal(t, 1.0, feature("Does the Halden bus carry bicycles?", "The Halden bus does not carry bicycles.", "negation_unit"))
	require.Equal(t, 0.0, feature("Does the Halden bus carry bicycles?", "The Halden bus does not carry bicycles.", "negation_question"))
	require.InDelta(t, 4.0/5, feature("How many passengers does the Halden ferry carry?", ferry, "proximity"), 1e-9,
		"four terms in a window of five words")
}

// TestSubstituteFeature: a sentence that has a word of the same kind in place of the question's
// ("rain" for "snow") has a substitute; one with the question's own word, or whose neighbour of a
// question word is another word of the question, has none.
func TestSubstituteFeature(t *testing.T) {
	t.Parallel()
	text := "The fire brigade was on set to simulate rain for the night scenes."
	c := newCorpus([]extract.Document{{Path: "film.txt", Lines: []string{text}}})
	substitute := func(q string) float64 {
		s := c.scorer(analyze(q))
		return s.features(0, s.stats())[slices.Index(featureNames, "substitute")]
	}
	require.Greater(t, substitute("Why was the fire brigade on set to simulate snow?"), 0.0)
	require.Zero(t, substitute("Why was the fire brigade on set to simulate rain?"))
	require.Zero(t, substitute("Why did the fire brigade simulate snow and rain?"),
		"a neighbour of a question word that the question states itself matches that word")
}

// TestQuestionShape: question analysis reads the shape of answer a question wants.
func TestQuestionShape(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]questionShape{
		"Who designed the bridge?":                                        shapeFactoid,
		"Why did the bridge collapse?":                                    shapeReason,
		"What are the main uses of heat pumps?":                           shapeList,
		"What are the main causes of the heat island?":                    shapeReason,
		"Compare LFP and NMC on energy density and cost.":                 shapeCompare,
		"Brief me on sodium-ion batteries for grid storage":               shapeBrief,
		"What is a heat pump?":                                            shapeDefinition,
		"How do falling lithium prices and price volatility affect grid?": shapeFactoid,
	} {
		require.Equal(t, want, analyze(q).Shape, q)
	}
	require.Equal(t, typeOrg, analyze("Which company built the ferry?").Type)
	require.Equal(t, typePlace, analyze("In which city was she born?").Type)
}

// A document's byline names what the whole document is about, as its title does.
func TestBylineNamesTheDocumentsSubject(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"Alder Analytics · applies to all staff from 1 March 2026 · owner: Finance": true,
		"By Ana Ruiz | 4 May 2026":                                                    true,
		"Alder Analytics applies this policy to all staff.":                           false,
		"Alder Analytics · a sentence after all.":                                     false,
		"| City | Nightly limit |":                                                    false, // a table row
		"*Patient information · Hollins Green Surgery · Last reviewed: January 2026*": true,  // in italics
	} {
		require.Equal(t, want, byline([]string{"# Travel and expenses policy", "", text}) == text, text)
	}
	c := markdownCorpus(t, map[string]string{"policy.md": "# Travel and expenses policy\n\n" +
		"Alder Analytics · applies to all staff from 1 March 2026 · owner: Finance\n\n## Meals\n\n" +
		"On a day away from your usual office you may claim up to £35 for meals, or £45 abroad.\n"})
	requireFinding(t, c, "How much can I claim for meals on a day abroad at Alder Analytics?", "£45 abroad", "")

	// The byline is the context of every sentence, not a sentence that answers.
	c = markdownCorpus(t, map[string]string{"shingles.md": "# Shingles vaccination\n\n" +
		"*Patient information · Hollins Green Surgery, 4 Tanyard Road · Last reviewed: January 2026*\n\n## What to bring\n\n" +
		"Please bring a list of the medicines you take.\n\nThe appointment takes about ten minutes.\n"})
	requireFinding(t, c, "What do I need to bring to my shingles jab at Hollins Green Surgery?", "list of the medicines", "")

	// The field lines a document opens with are its byline too: they answer what their labels
	// name, not every question about the flat.
	c = markdownCorpus(t, map[string]string{"lease.md": "# Tenancy agreement\n\n**Property:** Flat 4B, Wrenfield Court, 27 Marlow Street\n" +
		"**Landlord:** Rosalind Tebbit\n\n## Pets\n\nOne cat may be kept at the Property.\n\n## Schedule\n\n" +
		"| Item | Details |\n|---|---|\n| Deposit | £1,471 |\n"})
	requireFinding(t, c, "How much is the deposit on the Wrenfield Court flat?", "£1,471", "")
	requireFinding(t, c, "How big is the deposit on the Wrenfield Court flat?", "£1,471", "") // a house number is no answer
	requireFinding(t, c, "Who is the landlord of Flat 4B Wrenfield Court?", "Rosalind Tebbit", "")
}

// The field lines that open a section ("From: …" of a quoted e-mail) are its sentences' context.
func TestSectionFieldsAreContext(t *testing.T) {
	t.Parallel()
	c := markdownCorpus(t, map[string]string{"thread.txt": "Subject: Re: Ticket 48213, scanner stops\nFrom: Priya Anand\n\n" +
		"Hello Tomas,\n\nFirmware 2.1.6 raises the timer to ten minutes.\n\n-----Original message-----\nFrom: Tomas Lindqvist\n" +
		"Date: 13 October 2026\n\nOur scanner stops every time we scan a long document. We bought the scanner in June.\n"})
	requireFinding(t, c, "When did Tomas Lindqvist buy the scanner?", "in June", "")
	last := len(c.units) - 1
	require.True(t, c.ctx[last]["lindqvist"], "the quoted message's sender")
	require.False(t, c.ctx[last]["anand"], "not the reply's")

	c = markdownCorpus(t, map[string]string{"zelda.txt": "The Legend of Zelda: Twilight Princess (Japanese: ゼルダの伝説) is an " +
		"action-adventure game developed and published by Nintendo for the GameCube and Wii home video game consoles, and it " +
		"was released worldwide in December 2006 after a delay of a year to refine it.[b]\n\nLink can walk, run and attack.\n"})
	require.False(t, c.ctx[len(c.units)-1]["nintendo"], "prose that opens like a field line is no field")
}
