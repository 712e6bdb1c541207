package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

func TestAsksByName(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want askedBy
	}{
		{"What is the retail price of the Kestrel dryer?", askedHead},
		{"What dividend per share will Glenrock pay for 2025?", askedHead},
		{"What is the top speed of the bikes?", askedHead},
		{"Who is the mayor of Castellane?", askedHead},
		{"How many litres of water does the dryer use?", askedAny},
		{"How many people died in the fire?", askedAny},       // "people died": the phrase runs into the verb
		{"Which village did Chopin visit in 1824?", askedNot}, // a class: sources name the village, not "village"
		{"What religion was Beyoncé raised in?", askedNot},
		{"Who led the study?", askedNot},
		{"Who was responsible for the delay?", askedNot},
		{"When did the funicular open?", askedNot},
		{"Brief me on the outage.", askedNot},
		// A property named in two words or more, singular, after "what is the": a name sources use.
		{"What is the serial number of Tomas Lindqvist's scanner?", askedHead},
		{"What are the main drawbacks of the Marrow C2?", askedNot}, // plural: the drawbacks are listed, not named
		{"What is the name of the river?", askedNot},                // one vague word
		{"What is the capital of France?", askedNot},
	} {
		q := analyze(tt.q)
		require.Equal(t, tt.want, q.Asked, tt.q)
	}
}

// A question that asks for a property by name ("the retail price", "the mayor") is not answered
// from documents about its subject that never name that property; it is when one does.
func TestUnnamedAttributeIsNotAnswered(t *testing.T) {
	dryer := "# The Kestrel dryer\n\nThe Kestrel dryer is a heat-pump dryer with a drum for 8 kilograms of laundry. " +
		"It is sold in white and in silver, and it dries a full load in about three hours.\n"
	town := "# Castellane\n\nCastellane is a town of 1,500 people in the Verdon valley. The town council meets monthly " +
		"in the town hall, which the council restored in 2019.\n"
	for _, tt := range []struct {
		doc, q, want, missing string
	}{
		{dryer, "What is the retail price of the Kestrel dryer?", "", "mentions “retail price”"},
		{dryer + "\nThe retail price of the Kestrel dryer is 649 euros.\n", "What is the retail price of the Kestrel dryer?", "649 euros", ""},
		{town, "Who is the mayor of Castellane?", "", "source about “Castellane” mentions “mayor”"},
		{town + "\nThe mayor of Castellane, Anne Roux, chairs the council.\n", "Who is the mayor of Castellane?", "Anne Roux", ""},
		{dryer, "How many kilograms of laundry does the Kestrel dryer take?", "8 kilograms", ""},
		{dryer, "What is the serial number of the Kestrel dryer?", "", "mentions “serial number”"},
		{dryer + "\nThe serial number of the Kestrel dryer is on a label inside the door: KD-48213.\n", "What is the serial number of the Kestrel dryer?", "KD-48213", ""},
		// The head of what is asked names it: a "release" is not a "release manager".
		{"# FernDB 4.0\n\nFernDB 4.0 was released on 18 September 2024 after a long beta.\n", "Who was the release manager for FernDB 4.0?", "", "mentions “release manager”"},
		// A rate is named by a figure per unit; an allowance is an amount of money a source names.
		{"# Alder Ltd expenses\n\n## Mileage\n\nStaff of Alder Ltd who drive their own car for business are paid 45p per mile.\n", "What mileage rate does Alder Ltd pay?", "45p per mile", ""},
		{"# Alder Ltd expenses\n\nStaff of Alder Ltd book all business travel through the travel portal.\n", "What is the daily allowance for taxis at Alder Ltd?", "", "mentions “daily allowance”"},
		{"# Alder Ltd pool\n\nThe Alder Ltd pool took 9 visitors per hour in 2024 and borrowed £1.5 million for repairs.\n", "What interest rate does Alder Ltd pay on its loan for the pool?", "", "mentions “interest rate”"},
		// A section's heading names what its lines give: the dates under "Application deadline".
		{"# MSc Tidal Surveying\n\nThe MSc Tidal Surveying runs for a year.\n\n## Application deadline\n\nInternational applicants: 30 June 2026\nHome applicants: 31 August 2026\n", "What is the application deadline for international applicants to the MSc Tidal Surveying?", "30 June 2026", ""},
	} {
		d, reason := extract.File("input_files/doc.md", []byte(tt.doc))
		require.Empty(t, reason)
		requireFinding(t, newCorpus([]extract.Document{d}), tt.q, tt.want, tt.missing)
	}
}

func TestWhatDidItCost(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want answerType
	}{
		{"What did an adult ticket for the lido cost in 2024?", typeMoney},
		{"What does the museum charge for entry?", typeMoney},
		{"What did the council decide about the lido?", typeAny},
		{"What did the report say the repairs would cost?", typeMoney},
		// Any form of the verb: "how much did building the canal end up costing?"
		{"How much did building the canal end up costing?", typeMoney},
		{"How much is the council spending on street trees?", typeMoney},
		{"How much did the canal carry in 1830?", typeNumber},
	} {
		require.Equal(t, tt.want, analyze(tt.q).Type, tt.q)
	}
}

// A property asked for by name is stated by a synonym or, for a measured noun, by a figure of what
// it measures: such documents do name it.
func TestNamedPropertyStatedOtherwise(t *testing.T) {
	for _, tt := range [][2]string{
		{"The Falcon e-bike reaches 25 km/h with assistance.", "What is the top speed of the Falcon e-bike?"},
		{"The Kestrel dryer takes 8 kilograms of laundry.", "What is the capacity of the Kestrel dryer?"},
		{"Glenrock had sales of £4.2 million in 2024.", "What was the revenue of Glenrock in 2024?"},
		{"Halvorsen Marine earned a profit of NOK 310 million.", "What was the net income of Halvorsen Marine?"},
		{"Almeron tablets should be kept below 25 °C.", "What is the storage temperature of Almeron tablets?"},
		{"The Kelby festival lasted three days.", "What was the duration of the Kelby festival?"},
		// A unit is stated by a figure in another unit of its dimension, money by an amount.
		{"Riverbank Park lies 69 feet above the Hudson River.", "How many meters is Riverbank Park above the Hudson River?"},
		{"Apple paid Creative $100 million for a licence.", "How much money did Apple pay Creative?"},
		// An agent noun is named by its verb, or by a passive's agent.
		{"Glenrock was founded in 2009 by a group of roasters.", "Who was the founder of Glenrock?"},
		{"The Kelby report was written by Anna Roe in 2023.", "Who is the author of the Kelby report?"},
		{"The Kelby Swift Watch is led by Mary Stone.", "Who is the leader of the Kelby Swift Watch?"},
		{"The K2 mower is made by Brightwell in Sweden.", "Who is the manufacturer of the K2 mower?"},
	} {
		d, reason := extract.File("input_files/doc.md", []byte(tt[0]+"\n"))
		require.Empty(t, reason)
		c := newCorpus([]extract.Document{d})
		s := c.forRun().scorer(analyze(tt[1]))
		require.NotEqual(t, askedNot, s.q.Asked, tt[1])
		require.False(t, s.attributeUnnamed(), tt[1])
	}
}
