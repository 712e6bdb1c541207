package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Answers that depend on how a document is laid out and how a question names its value: an
// interest rate is a percentage (the field line giving it leads, not the introduction that speaks
// of rates); a heading names what a question asks in another form of the word ("How to complain"
// for "complaint"); "how many farms" leads with the passage that counts farms, not one that counts
// seasons or farming families.
func TestAnswersByLayoutAndValue(t *testing.T) {
	fees := "FENWICK MUTUAL BANK PLC\n\nEVERYDAY CURRENT ACCOUNT\n\nIt sets out the fees we charge on your Everyday Current Account and the interest rates for borrowing on an arranged overdraft.\n\n" +
		"2. OVERDRAFTS\n\n  Arranged overdraft interest rate ........ 39.9% EAR (variable)\n\n" +
		"5. HOW TO COMPLAIN\n\nIf you are unhappy with our service, please tell us. You can complain:\n- in any Fenwick Mutual Bank branch;\n- by phone on 03069 990 214;\n- in writing to PO Box 772.\n\n" +
		"6. DEPOSIT PROTECTION\n\nFenwick Mutual Bank deposits are protected up to £85,000 by the FSCS.\n"
	trial := "# Winter cover crops on arable farms: a three-season on-farm trial\n\nWe thank the twelve farming families who hosted the trial. " +
		"On 12 commercial farms, over three winters, we compared three treatments in strips.\n"
	for _, tt := range []struct {
		name, doc, q, want string
	}{
		{"fees.txt", fees, "What is the interest rate on an arranged overdraft on the Fenwick Mutual Everyday Current Account?", "39.9% EAR"},
		{"fees.txt", fees, "What are the ways I can make a complaint to Fenwick Mutual Bank?", "PO Box 772"},
		{"trial.md", trial, "How many commercial farms were in the cover crop trial?", "On 12 commercial farms"},
	} {
		d, reason := extract.File("input_files/"+tt.name, []byte(tt.doc))
		require.Empty(t, reason)
		requireFinding(t, newCorpus([]extract.Document{d}), tt.q, tt.want, "")
	}
	require.Equal(t, typePercent, analyze("What is the interest rate on the loan?").Type)
	require.Equal(t, typeNumber, analyze("What is the mileage rate?").Type)
	require.NotContains(t, analyze("Summarise the findings in a few sentences.").Terms, nlp.Stem("sentences"))
	require.Contains(t, analyze("Which sentences did the court pass?").Terms, nlp.Stem("sentences"))
}

// A form of the same word is a WordNet relative one stem of which opens the other; another sense
// is not.
func TestDerivedForms(t *testing.T) {
	require.Contains(t, derived(nlp.Stem("complaint")), nlp.Stem("complain"))
	require.NotContains(t, derived(nlp.Stem("complaint")), nlp.Stem("ailment"))
}

// A page's sections are part of the section above them: a reason asked about the lunch system is
// answered by "Why are we changing?" under "Our new lunch ordering system", and a list of staff
// changes by both sections under "Staff changes". "Which staff are leaving" and "what uniform and
// PE reminders" ask for several things.
func TestSectionsUnderSections(t *testing.T) {
	page := "# Summer Newsletter\n\n## Staff changes\n\n### Saying goodbye\n\nMr Daniel Price is leaving us to become a deputy head. Mrs Joan Whitlow is retiring.\n\n" +
		"### Welcoming\n\nMiss Amira Shah will join us as the new Year 4 teacher.\n\n" +
		"## Our new lunch ordering system: your questions answered\n\nFrom September we are moving to a new online lunch ordering system called Plateful.\n\n" +
		"### Why are we changing?\n\nWhen the kitchen knows how many meals to cook, we can cut food waste.\n\n" +
		"### When do I need to order?\n\nOrders must be placed by 9am on Thursday.\n"
	d, reason := extract.File("input_files/news.md", []byte(page))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	requireFinding(t, c, "Why is the school switching to the new online lunch ordering system?", "cut food waste", "")
	requireFinding(t, c, "Which staff are leaving the school?", "Joan Whitlow", "")
	for _, q := range []string{"Which staff are leaving?", "What uniform and PE reminders does it give?", "What personal protective equipment does the SOP require?"} {
		require.Equal(t, shapeList, analyze(q).Shape, q)
	}
}

// A question's figure matches the sources' however each writes its decimals and thousands.
func TestNormNumber(t *testing.T) {
	for in, want := range map[string]string{"300.00": "300", "2.50": "2.5", "1,450.00": "1450", "1,204": "1204", "4.2": "4.2", "12.0": "12", "0.75": "0.75"} {
		require.Equal(t, want, normNumber(in), in)
	}
}

// A list is answered from the section whose heading names the things asked for ("Proposed
// savings"), items and all: a lead-in that names nothing ("These are:") heads no section of its
// own.
func TestListUnderItsNoun(t *testing.T) {
	page := "# Budget consultation\n\n## Proposed savings\n\nUnder our preferred option, we would make savings of £2.1 million.\n\nThese are:\n\n" +
		"- Closing the Tillbrook Road office (£480,000)\n- Part-night street lighting (£320,000)\n- Shorter library hours (£260,000)\n\n" +
		"## Option A: 4.99% increase (our preferred option)\n\nBand D would pay £1,874.37 a year.\n"
	d, reason := extract.File("input_files/budget.md", []byte(page))
	require.Empty(t, reason)
	requireFinding(t, newCorpus([]extract.Document{d}), "What savings is the council proposing under its preferred option?", "Shorter library hours", "")
}

// A passage announcing a list ("arranged in five rooms") brings the whole list; a comparison of a
// table's columns ("online" and "on the door") on a row the question names is that row.
func TestListAndColumnComparison(t *testing.T) {
	page := "# Salt & Indigo\n\n## Inside the exhibition\n\nThe exhibition is arranged in five rooms. Allow around 75 minutes for your visit.\n\n" +
		"- Room 1 – The Net Lofts: nets and netting needles.\n- Room 2 – Ganseys: fishermen's jumpers.\n- Room 3 – Indigo Harbours: smocks.\n" +
		"- Room 4 – Herring Girls: the gutting yards.\n- Room 5 – Mending and Making: new commissions.\n\n" +
		"## Tickets\n\nBooking online in advance is cheaper.\n\n| Ticket | Online | On the door |\n|---|---|---|\n| Adult | £12.50 | £14.00 |\n| Child (5–17) | £5.00 | £6.00 |\n"
	d, reason := extract.File("input_files/exhibition.md", []byte(page))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	requireFinding(t, c, "What are the five rooms of the exhibition?", "Mending and Making", "")
	requireFinding(t, c, "How does the price of an adult ticket bought online compare with buying one on the door?", "£14.00", "")
}

// A comparison quotes both sides: the walks of weeks 3–4 as well as those of weeks 7–8.
func TestComparisonQuotesEachSide(t *testing.T) {
	page := "# Juniper's recovery\n\n## Exercise allowed after surgery\n\n**Weeks 1–2:** Strict rest in a crate or small room.\n\n" +
		"**Weeks 3–4:** Lead walks on flat ground of **10 minutes, three times a day**.\n\n" +
		"**Weeks 5–6:** Lead walks of **15–20 minutes, three times a day**.\n\n" +
		"**Weeks 7–8:** Lead walks of **up to 30 minutes, twice a day**. Still no running.\n"
	d, reason := extract.File("input_files/recovery.md", []byte(page))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	requireFinding(t, c, "How do the lead walks allowed in weeks 3–4 compare with those allowed in weeks 7–8?", "10 minutes, three times a day", "")
}

// Whom a briefing is for is no subject of it ("for a new PhD student"); an enum value written with
// an abbreviation's point ("Carc. 2") is one phrase; a document's opening field lines, blank lines
// between them, are no points of its summary.
func TestAudienceAbbreviationAndOpeningFields(t *testing.T) {
	q := analyze("Summarise the dichloromethane handling SOP for a new PhD student.")
	require.NotContains(t, q.Names, nlp.Stem("PhD"))
	require.Contains(t, q.Terms, nlp.Stem("dichloromethane"))
	require.Equal(t, "Classified Carc 2 (H351)", enumText("Classified Carc. 2 (H351)"))
	sop := "# Handling Dichloromethane\n\n**Document number:** CHEM-SOP-042\n\n**Version:** 3.1\n\n**Review date:** 14 March 2025\n\n" +
		"## Scope\n\nThis procedure covers the use of dichloromethane in the fume cupboards of the synthesis laboratories.\n\n" +
		"## Procedure\n\nKeep no more than 1 L of dichloromethane open in the fume cupboard at any one time.\n"
	d, reason := extract.File("input_files/sop.md", []byte(sop))
	require.Empty(t, reason)
	c := newCorpus([]extract.Document{d})
	for u, un := range c.units {
		if strings.HasPrefix(un.Text, "**Version:**") {
			require.True(t, c.openingFields[u], "a field line after a blank line still opens the document")
		}
	}
	for _, u := range c.summary(0, 4, func(int) bool { return true }, false) {
		require.NotContains(t, c.units[u].Text, "**", "summary point %q", c.units[u].Text)
	}
}
