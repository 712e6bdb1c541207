package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

func TestNamePhrases(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"Who is the protagonist of Midna of Time?", []string{"Midna of Time"}},
		{"What genre is The Legend of Zelda: Clawshot Princess?", []string{"Legend of Zelda", "Clawshot Princess"}},
		{"When did Halvorsen Marine's order backlog grow?", []string{"Halvorsen Marine's"}},
		{"Which single was only released in the U.K. and Ireland?", nil}, // an abbreviation of letters
		{"Were Scott Derrickson and Ed Wood of the same nationality?", []string{"Scott Derrickson", "Ed Wood"}},
		{"Clawshot Princess uses which control scheme?", nil}, // a question's first word may be capitalised for the sentence
		{"Who reviewed it for The Guardian, The Times and Le Monde?", []string{"Le Monde"}},
		{"What Is The Retail Price Of The Kestrel Dryer?", nil}, // title case marks no names
		{"WHO DESIGNED THE TAY BRIDGE?", nil},
		{"Which Apple-produced Nike accessory came first?", nil}, // "Apple" is the name, "produced" is not
		{"Which Rolls-Royce Phantom came first?", []string{"Rolls-Royce Phantom"}},
	} {
		var got []string
		for _, p := range namePhrases(tt.q) {
			got = append(got, p.Text)
		}
		require.Equal(t, tt.want, got, tt.q)
	}
}

// A name of several words that no source writes, although each of its words is in the sources,
// is something the sources do not speak of: the report says so and names it. Written with a word
// between (a middle name), it is the same name.
func TestUnwrittenNameIsNotAnswered(t *testing.T) {
	doc := "# Twilight Princess\n\nThe Legend of Zelda: Twilight Princess is an action-adventure game released in 2006. " +
		"Its main new item is the Clawshot, a spring-loaded grappling hook. The film critic King Wallis Vidor praised its music. " +
		"Its composer played the Glastonbury Festival in 2007 and founded the Tokyo Game Foundation in 2009. " +
		"It won a prize at the 2008 BBC Golden Joystick Awards (GJAs).\n"
	d, reason := extract.File("input_files/zelda.md", []byte(doc))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	for _, tt := range []struct {
		q, want, missing string
	}{
		{"In what year was Twilight Princess released?", "2006", ""},
		{"In what year was Clawshot Princess released?", "", "“Clawshot Princess”"},
		{"Which game's music did King Vidor praise?", "Vidor", ""},
		// A question may capitalise an ordinary word with a name the sources write without it.
		{"In what year did its composer play the Glastonbury Music Festival?", "2007", ""},
		{"In what year was the Tokyo Game Foundation Founded?", "2009", ""},
		{"In what year did its composer play the Glastonbury Clawshot Festival?", "", "“Glastonbury Clawshot Festival”"},
		// A name with an acronym is written where the sources spell the acronym out.
		{"In what year did Twilight Princess win at the BBC GJAs?", "2008", ""},
		{"In what year did Twilight Princess win at the Tokyo GJAs?", "", "“Tokyo GJAs”"},
	} {
		requireFinding(t, c, tt.q, tt.want, tt.missing)
	}
	// A model code names one item of what the rest of the name names, and two names of two words
	// or more may follow one another.
	doc = "# Corvane AquaLift pumps – AL-400 / AL-750\n\nHalloway Freight Systems sells them. The AL-750 weighs 6.2 kg. " +
		"Our Senior Data Engineer was hired in 2024.\n"
	d, reason = extract.File("input_files/pumps.md", []byte(doc))
	require.Empty(t, reason)
	c = newCorpus([]extract.Document{d})
	for _, tt := range []struct {
		q, want, missing string
	}{
		{"How many kg does the Corvane AquaLift AL-750 weigh?", "6.2 kg", ""},
		{"How many kg does the Corvane AquaLift AL-900 weigh?", "", "figures for “900”"},
		{"In what year was the Halloway Freight Senior Data Engineer hired?", "2024", ""},
		{"In what year was the Halloway Data Freight Engineer hired?", "", "“Halloway Data Freight Engineer”"},
	} {
		requireFinding(t, c, tt.q, tt.want, tt.missing)
	}
}

// requireFinding: the corpus answers question q at effort low with a passage holding want, or,
// when want is "", refuses it saying missing.
func requireFinding(t *testing.T, c *corpus, q, want, missing string) {
	t.Helper()
	f := c.find(plainSub(q), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1})
	if want == "" {
		require.False(t, f.answered(), q)
		require.Contains(t, f.Missing, missing, q)
		return
	}
	require.True(t, f.answered(), "%s: %s", q, f.Missing)
	require.Contains(t, strings.Join(answerTexts(c, f), " "), want, q)
}

// A question asking for an amount of money is answered by a passage that gives one: the likeliest
// near the best match leads, and a document that gives none does not answer.
func TestValueLead(t *testing.T) {
	dryer, reason := extract.File("input_files/dryer.md", []byte("# The Kestrel dryer\n\nThe Kestrel dryer is a heat-pump "+
		"dryer with a drum for 8 kilograms of laundry. The dryer is sold in white and in silver.\n"))
	require.Empty(t, reason)
	trees, reason := extract.File("input_files/trees.md", []byte("# Street trees\n\nThe council approved the plan for new "+
		"street trees in the old town on 3 May, and the council will pay for them from its climate budget. The new street "+
		"trees will be planted in 2026. Planting all of them costs 11 million euros in total.\n"))
	require.Empty(t, reason)
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}

	t.Run("none given", func(t *testing.T) {
		c := newCorpus([]extract.Document{dryer})
		f := c.find(plainSub("How much does the Kestrel dryer cost?"), o)
		require.False(t, f.answered())
		require.Contains(t, f.Missing, "give no amount of money")
	})
	t.Run("one near the best match", func(t *testing.T) {
		c := newCorpus([]extract.Document{trees})
		f := c.find(plainSub("How much will the council pay for the new street trees in the old town?"), o)
		require.True(t, f.answered())
		require.Contains(t, c.units[f.Answer[0]].Text, "11 million euros")
	})
	t.Run("who asks for a name", func(t *testing.T) {
		policy, reason := extract.File("input_files/policy.md", []byte("# Hollin Analytics travel policy\n\n"+
			"Economy class is the rule on every flight; business class needs the approval of a director. "+
			"Claims are paid with the salary of the month after.\n"))
		require.Empty(t, reason)
		c := newCorpus([]extract.Document{policy})
		f := c.find(plainSub("Who is the finance director of Hollin Analytics?"), o)
		require.False(t, f.answered(), "a director, but nobody named")
		require.Contains(t, f.Missing, "give no name")
		booking, reason := extract.File("input_files/booking.md", []byte("# Hollin Analytics bookings\n\n"+
			"Bookings go through a travel agency. The agency's account for Hollin Analytics is run by Ana Ruiz.\n"))
		require.Empty(t, reason)
		requireFinding(t, newCorpus([]extract.Document{booking}), "Who runs the agency account for Hollin Analytics?", "Ana Ruiz", "")
	})
}

// Support from another document carries on from the answer: it names what the question or the
// answer names. A document sharing only ordinary words with the question is not quoted.
func TestSupportNamesWhatIsAnswered(t *testing.T) {
	file := func(name, text string) extract.Document {
		d, reason := extract.File("input_files/"+name, []byte(text))
		require.Empty(t, reason)
		return d
	}
	dryer := file("dryer.md", "# The Kestrel HD8 dryer\n\nAfter transport, leave the Kestrel HD8 standing upright for two hours "+
		"before you switch it on. Oil from the compressor must run back first.\n")
	db := file("db.md", "# Database upgrade\n\nWait two hours after the node has been moved before you switch it on again, "+
		"so that the replicas catch up.\n")
	film := file("film.md", "# Night Train\n\nNight Train is a 1998 film directed by Anna Roe.\n")
	roe := file("roe.md", "# Anna Roe\n\nAnna Roe is a Danish director born in Aarhus in 1961.\n")
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 2}
	quoted := func(c *corpus, f finding) string {
		var docs []string
		for _, u := range append(slices.Clone(f.Answer), f.Support...) {
			docs = append(docs, c.docs[c.units[u].Doc].Path)
		}
		return strings.Join(docs, " ")
	}
	c := newCorpus([]extract.Document{dryer, db})
	f := c.find(plainSub("Why do I have to wait two hours before switching on a Kestrel HD8 after it has been moved?"), o)
	require.True(t, f.answered(), f.Missing)
	require.NotContains(t, quoted(c, f), "db.md")
	// Without names, the document must state the most specific word of the question the answer states.
	swifts := file("swifts.md", "# Common swifts\n\nCommon swifts raise their young in dark cavities under roof tiles. "+
		"The parents feed the young insects they catch in flight.\n")
	care := file("care.md", "# Dryer care\n\nRaise the filter flap to clean it. Young children must not raise the flap "+
		"or feed the dryer with wet towels.\n")
	c = newCorpus([]extract.Document{swifts, care})
	q := analyze("How do common swifts raise and feed their young?")
	require.False(t, c.namesWhatIsAnswered(1, q, []int{0}), "the dryer's care does not speak of swifts")
	require.True(t, c.namesWhatIsAnswered(0, q, []int{0}))
	c = newCorpus([]extract.Document{film, roe})
	f = c.find(plainSub("Where was the director of Night Train born?"), findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 2, Hop: true})
	require.True(t, f.answered(), f.Missing)
	require.Contains(t, quoted(c, f), "roe.md", "the answer names Anna Roe")
}

// A word of a name of several words names nothing by itself: "Green coffee prices" does not name
// "Hollins Green".
func TestPartOfANameNamesNothing(t *testing.T) {
	t.Parallel()
	clinic, _ := extract.File("input_files/clinic.md", []byte("# Hollins Green Surgery\n\nYou can have both jabs at the same appointment.\n"))
	memo, _ := extract.File("input_files/memo.md", []byte("# Memo\n\nGreen coffee prices rose by 18%.\n"))
	c := newCorpus([]extract.Document{clinic, memo})
	q := analyze("Can I have both jabs at Hollins Green?")
	require.True(t, c.namesWhatIsAnswered(0, q, nil))
	require.False(t, c.namesWhatIsAnswered(1, q, nil))
}
