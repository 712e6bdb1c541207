package extract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func unitTexts(p Parsed) []string {
	var out []string
	for _, u := range p.Units {
		out = append(out, u.Kind+" "+u.Text)
	}
	return out
}

// TestParseDocument: sentences are whole across hard-wrapped lines and know the lines they span;
// headings of every style are sections, never units; lists, fields and tables are units of their own.
func TestParseDocument(t *testing.T) {
	t.Parallel()
	text := `PLANT REPORT

Results

Results. The plant treated 10,000 tonnes of
batteries in 2023. It recovered 95 percent of the
lithium, e.g. in cell form, and Dr. L. Okafor approved it.

Outlook
=======

- Capacity grows to 12,000 tonnes
  in 2025.
- A second line opens.

Site: Kolding
Owner: GreenLoop ApS

| Metal | Recovered |
|-------|-----------|
| Lithium | 95% |
| Cobalt | 98% |
`
	para := 0
	p := ParseDocument(0, Document{Path: "r.txt", Lines: strings.Split(text, "\n")}, &para)
	require.Equal(t, "PLANT REPORT", p.Title)
	require.Equal(t, []string{
		"sentence The plant treated 10,000 tonnes of batteries in 2023.",
		"sentence It recovered 95 percent of the lithium, e.g. in cell form, and Dr. L. Okafor approved it.",
		"item Capacity grows to 12,000 tonnes in 2025.",
		"item A second line opens.",
		"field Site: Kolding",
		"field Owner: GreenLoop ApS",
		"row | Lithium | 95% |",
		"row | Cobalt | 98% |",
	}, unitTexts(p))
	first, second := p.Units[0], p.Units[1]
	require.Equal(t, [2]int{5, 6}, [2]int{first.Start, first.End})
	require.Equal(t, [2]int{6, 7}, [2]int{second.Start, second.End})
	require.Equal(t, "Results", first.Section, "a run-in heading is the section")
	require.Equal(t, 0, second.Prev, "the sentence before is context")
	require.Equal(t, "Outlook", p.Units[2].Section, "setext heading")
	require.Len(t, p.Tables, 1)
	require.Equal(t, []string{"Metal", "Recovered"}, p.Tables[0].Header)
	require.Equal(t, []int{21, 22}, p.Tables[0].RowLines)
}

func TestParseCSV(t *testing.T) {
	t.Parallel()
	para := 0
	p := ParseDocument(0, Document{Path: "data/prices.csv", Lines: strings.Split("item,\"price, eur\"\nroll,0.90\n\nbun,3.20\n", "\n")}, &para)
	require.Equal(t, "prices", p.Title)
	require.Equal(t, []string{"item", "price, eur"}, p.Tables[0].Header)
	require.Equal(t, []int{2, 4}, p.Tables[0].RowLines)
	require.Equal(t, []string{"row roll,0.90", "row bun,3.20"}, unitTexts(p))
}

func TestSentenceSpans(t *testing.T) {
	t.Parallel()
	cut := func(s string) []string {
		var out []string
		for _, sp := range sentenceSpans(s) {
			out = append(out, strings.TrimSpace(s[sp[0]:sp[1]]))
		}
		return out
	}
	require.Equal(t, []string{"It cost $1.4 million.", "After debate it passed."}, cut("It cost $1.4 million. After debate it passed."))
	require.Equal(t, []string{`"It works," he said.`, "Then it stopped!"}, cut(`"It works," he said. Then it stopped!`))
	require.Equal(t, []string{"Approx. five units, i.e. most.", "U.S. data agree."}, cut("Approx. five units, i.e. most. U.S. data agree."))
	require.Equal(t, []string{"Mayor L. Okafor chaired it."}, cut("Mayor L. Okafor chaired it."))
	require.Equal(t, []string{"Haymo of Faversham ( c. 1190 – 1244) was a friar.", "He taught."}, cut("Haymo of Faversham ( c. 1190 – 1244) was a friar. He taught."))
	// A work's number and a reign's dates follow their abbreviations; a number after a sentence's
	// last word still starts the next.
	require.Equal(t, []string{"He premiered his Piano Concerto No. 2 in F minor, Op. 21 on 17 March 1830.", "It was a success."},
		cut("He premiered his Piano Concerto No. 2 in F minor, Op. 21 on 17 March 1830. It was a success."))
	require.Equal(t, []string{"During the reign of the Jiajing Emperor (r. 1521–1567), Daoism was sponsored."},
		cut("During the reign of the Jiajing Emperor (r. 1521–1567), Daoism was sponsored."))
	require.Equal(t, []string{"The line opened in 1847 with a depot at Ashcombe Road.", "12 trains ran daily."},
		cut("The line opened in 1847 with a depot at Ashcombe Road. 12 trains ran daily."))
}

func TestHTMLChromeStripped(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>Ferries go electric | News</title><script>var x=1</script></head><body>
<header class="site-header"><a href="/">News</a><nav><a>Home</a><a>Ports</a></nav></header>
<div class="cookie-banner">We use cookies. <button>Accept</button></div>
<main><article>
<h1>Ferries go electric</h1>
<p>The new ferries carry
200 cars.</p>
<ul><li>Battery: 4.3 MWh</li><li>Charging: 11 minutes</li><li><strong>Hall</strong>, Market Place: step-free <em>except</em> the gallery</li></ul>
<table><tr><th>Route</th><th>Minutes</th></tr><tr><td>Halden</td><td>50</td></tr></table>
<aside class="related"><h3>Related</h3><p>Hydrogen trials delayed</p></aside>
</article></main>
<div class="newsletter-box"><p>Sign up for our newsletter.</p></div>
<footer><p>© 2024 News AS. All rights reserved.</p></footer>
<div id="sidebar">Popular posts</div>
</body></html>`
	text, err := HTMLToText([]byte(page))
	require.NoError(t, err)
	// The page's title, of parts naming its site, follows the main heading as a byline.
	require.Equal(t, "# Ferries go electric\n\nFerries go electric | News\n\nThe new ferries carry 200 cars.\n\n- Battery: 4.3 MWh\n- Charging: 11 minutes\n- Hall, Market Place: step-free except the gallery\n\n| Route | Minutes |\n| --- | --- |\n| Halden | 50 |\n", text)

	// A class word of furniture ("advert") does not hide what holds the page's main heading.
	text, err = HTMLToText([]byte(`<html><body><div class="advert">Buy now</div><article class="job-advert"><h1>Data Engineer</h1>
<p>The salary is £58,000.</p></article></body></html>`))
	require.NoError(t, err)
	require.Equal(t, "# Data Engineer\n\nThe salary is £58,000.\n", text)

	// Without <main> or <article>: the body less its chrome; the title as heading; copyright lines out.
	text, err = HTMLToText([]byte(`<html><head><title>Plant</title></head><body><div class="menu">Home | Blog</div>
<div class="post"><p>It treats 10,000 tonnes a year.</p><p>Copyright 2024 GreenLoop</p></div><div class="footer">CVR 1234</div></body></html>`))
	require.NoError(t, err)
	require.Equal(t, "# Plant\n\nIt treats 10,000 tonnes a year.\n", text)
}

// A plain-text FAQ's "Q: …?" heads its answer, as an FAQ page's heading does.
func TestPlainTextFAQQuestionsAreHeadings(t *testing.T) {
	t.Parallel()
	text := "LIBRARY CARDS\n\nQ: How long can I keep a book?\nA: Books are lent for three weeks.\n\n" +
		"Question: Are there fines?\n\nA: Not any more.\n\nQ: What is a library card?\n## Fees\n\nA card costs £2.\n"
	p := parseText("faq.txt", text)
	require.Equal(t, []string{"sentence A: Books are lent for three weeks.", "sentence A: Not any more.", "sentence A card costs £2."}, unitTexts(p))
	require.Equal(t, "How long can I keep a book?", p.Units[0].Heading)
	require.Equal(t, "Are there fines?", p.Units[1].Heading)
	require.Equal(t, "Fees", p.Units[2].Heading, "a heading after a question without an answer is read")
}

// A title line straight above field lines heads them.
func TestTitleLineAboveFields(t *testing.T) {
	t.Parallel()
	text := "Residents' association – transcript of the meeting on 3 September 2026\nPresent: Grace Ellery (chair) and 21 residents\n\n" +
		"Grace Ellery: Welcome, everyone.\n"
	p := parseText("minutes.txt", text)
	require.Equal(t, "Residents' association – transcript of the meeting on 3 September 2026", p.Title)
	require.Equal(t, []string{"field Present: Grace Ellery (chair) and 21 residents", "sentence Grace Ellery: Welcome, everyone."}, unitTexts(p))
}

// Field lines with bold labels, one per line, are a record as plain ones are, not one sentence.
func TestBoldFieldLines(t *testing.T) {
	t.Parallel()
	text := "# Tenancy Agreement\n\n**Property:** Flat 4B, Wrenfield Court\n**Landlord:** Rosalind Tebbit\n**Date of this agreement:** 12 February 2026\n\n" +
		"**Note:** The rent is paid monthly.\n"
	p := parseText("lease.md", text)
	require.Equal(t, []string{"field **Property:** Flat 4B, Wrenfield Court", "field **Landlord:** Rosalind Tebbit",
		"field **Date of this agreement:** 12 February 2026", "sentence **Note:** The rent is paid monthly."}, unitTexts(p))
}

// A record whose lines are field lines is one unit per line, though some lines end as sentences
// do, when one of them is a plain field; it does not run into one long sentence.
func TestFieldLinesThatEndAsSentences(t *testing.T) {
	t.Parallel()
	text := "NOTICE OF DECISION\n\nSite: 3 Market Steps, Little Casterby\nApplicant: Rookery Lane Kitchen Ltd\n" +
		"Proposal: Change of use of the ground floor from shop to café; use of the rear courtyard for seating.\n" +
		"Decided by: Planning Committee, 2 October 2024. The application was referred to committee.\n\n" +
		"Note: the café opens in spring.\nReason: It had been empty since 2022.\n"
	p := parseText("decision.txt", text)
	require.Equal(t, []string{"field Site: 3 Market Steps, Little Casterby", "field Applicant: Rookery Lane Kitchen Ltd",
		"field Proposal: Change of use of the ground floor from shop to café; use of the rear courtyard for seating.",
		"field Decided by: Planning Committee, 2 October 2024. The application was referred to committee.",
		"sentence Note: the café opens in spring.", "sentence Reason: It had been empty since 2022."}, unitTexts(p))
}

// A plain-text table whose columns are aligned with spaces is a table; a numbered title in
// capitals is a heading; prose with two spaces after a full stop is still prose.
func TestAlignedPlainTextTable(t *testing.T) {
	t.Parallel()
	text := "2. RESULTS FOR THE QUARTER\n\n" +
		"                              Q3 2025        Q3 2024\n" +
		"  Revenue                     £1.42m         £1.27m\n" +
		"    Wholesale (cafes, hotels) £890,000       £865,000\n" +
		"  Gross margin                36%            39%\n\n" +
		"Revenue grew by 12% on the same quarter last year.  Margin fell because green coffee\ncost more than a year ago.\n"
	p := parseText("memo.txt", text)
	require.Len(t, p.Tables, 1)
	require.Equal(t, []string{"", "Q3 2025", "Q3 2024"}, p.Tables[0].Header)
	require.Equal(t, [][]string{{"Revenue", "£1.42m", "£1.27m"}, {"Wholesale (cafes, hotels)", "£890,000", "£865,000"}, {"Gross margin", "36%", "39%"}},
		p.Tables[0].Rows)
	require.Equal(t, []string{"row Revenue £1.42m £1.27m", "row Wholesale (cafes, hotels) £890,000 £865,000", "row Gross margin 36% 39%",
		"sentence Revenue grew by 12% on the same quarter last year.", "sentence Margin fell because green coffee cost more than a year ago."}, unitTexts(p))
	require.Equal(t, "RESULTS FOR THE QUARTER", p.Units[0].Heading)
}

// An e-mail is about its subject line.
func TestEmailTitleIsItsSubject(t *testing.T) {
	t.Parallel()
	text := "Subject: Re: Scanner stops after 20 pages\nFrom: Priya Anand\n\nHello Tomas,\n\nThe feeder sleeps after 90 seconds.\n\n" +
		"-----Original message-----\nFrom: Tomas Lindqvist\n\nOur scanner stops every time.\n"
	p := parseText("thread.txt", text)
	require.Equal(t, "Re: Scanner stops after 20 pages", p.Title)
	require.Equal(t, "-----Original message-----", p.Units[len(p.Units)-1].Section)
}

// parseText parses text as the only document, named path.
func parseText(path, text string) Parsed {
	para := 0
	return ParseDocument(0, Document{Path: path, Lines: strings.Split(text, "\n")}, &para)
}

// A line that ends in a colon and announces a list heads the list's items only: the paragraph
// after the list is under the heading the lead-in interrupted.
func TestLeadInHeadsItsListOnly(t *testing.T) {
	t.Parallel()
	text := "# Almeron\n\n## Possible side effects\n\nLike all medicines, it can cause side effects.\n\n" +
		"Common side effects (may affect up to 1 in 10 people):\n\n- headache;\n- dry mouth.\n\n" +
		"Uncommon side effects: nausea and dizziness.\n\n## Storage\n\nStore below 25 °C.\n"
	p := parseText("leaflet.md", text)
	sections := map[string]string{}
	for _, u := range p.Units {
		sections[u.Text] = u.Section
	}
	require.Equal(t, "Common side effects (may affect up to 1 in 10 people):", sections["headache;"])
	require.Equal(t, "Common side effects (may affect up to 1 in 10 people):", sections["dry mouth."])
	require.Equal(t, "Possible side effects", sections["Uncommon side effects: nausea and dizziness."])
	require.Equal(t, "Storage", sections["Store below 25 °C."])
}

// A page's <br> breaks a line the reader sees: no unit runs across one, while the page source's
// own line breaks are no breaks at all. A page marks its headings: what follows one is content.
func TestHTMLLineBreaks(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>MSc Coastal Engineering</h1>
<dl><dt>Start date</dt><dd>21 September 2026</dd>
<dt>Application deadline</dt><dd>International applicants: 30 June 2026<br>Home applicants: 31 August 2026</dd></dl>
<p>The course runs
for a year.<br>It starts in September.</p>
<ul><li>Field week
on the estuary<br>Safety boots: about £60</li></ul>
<table><tr><th>Fee status</th><th>Full-time</th></tr><tr><td>Home<br>(UK)</td><td>£9,800</td></tr></table>
</main></body></html>`
	text, err := HTMLToText([]byte(page))
	require.NoError(t, err)
	doc := Document{Path: "course.html", Kind: "html", Lines: SplitLines(text)}
	para := 0
	p := ParseDocument(0, doc, &para)
	require.Equal(t, []string{
		"sentence 21 September 2026", // a description list's term heads its description, however short
		"field International applicants: 30 June 2026", "field Home applicants: 31 August 2026",
		"sentence The course runs for a year.", "sentence It starts in September.",
		"item Field week on the estuary", "item Safety boots: about £60", "row | Home … (UK) | £9,800 |",
	}, unitTexts(p))
	require.Equal(t, "Start date", p.Units[0].Section)
	require.Equal(t, p.Units[3].Para, p.Units[4].Para, "the lines of one paragraph share it")
	require.Equal(t, 3, p.Units[4].Prev)
}

// A dot leader joins a label to its value as a field line's colon does; lines indented under an
// item describe it, and a lower-case line goes on with the line before.
func TestDotLeaderLines(t *testing.T) {
	t.Parallel()
	text := "EXCESSES\n\n  Standard excess (all claims) ......... £150\n  Escape of water ...................... £400\n" +
		"  Loss or damage by fire, smoke,\n  flood or theft\n  Home Emergency Cover ..... £42.00\n    24-hour call-out for boilers. Up to £500.\n\n" +
		"We waited... and then it rained.\n"
	p := parsePlain(text)
	require.Equal(t, []string{
		"field Standard excess (all claims) ......... £150", "field Escape of water ...................... £400",
		"sentence Loss or damage by fire, smoke, flood or theft", "field Home Emergency Cover ..... £42.00",
		"sentence 24-hour call-out for boilers.", "sentence Up to £500.", "sentence We waited... and then it rained.",
	}, unitTexts(p))
	require.Equal(t, 3, p.Units[4].Prev, "a description follows its item")
	require.NotEqual(t, p.Units[0].Para, p.Units[1].Para, "a price list's lines are no record")
	require.Equal(t, "Escape of water", FieldLabel(p.Units[1].Text))
	require.Equal(t, "Price", FieldLabel("Price: £4"))
	require.Equal(t, "£400", FieldValue(p.Units[1].Text))
	require.Equal(t, "BW-RC-2025-04", FieldValue("**Recall reference:** BW-RC-2025-04"))
	require.Empty(t, FieldValue("No label here"))
}

// A title page stacks its issuer, product and kind of document in capitals: one heading, no sentence.
func TestStackedTitleInCapitals(t *testing.T) {
	t.Parallel()
	text := "KESTREL MUTUAL\nHEARTH HOME PLUS\nHOME INSURANCE POLICY SUMMARY\n\nThis summary gives you the key facts.\n"
	p := parsePlain(text)
	require.Equal(t, []string{"sentence This summary gives you the key facts."}, unitTexts(p))
	require.Equal(t, "KESTREL MUTUAL HEARTH HOME PLUS HOME INSURANCE POLICY SUMMARY", p.Units[0].Section)
}

// A saved page's footer line, a copyright notice, is no unit in any format.
func TestFooterLineIsNoUnit(t *testing.T) {
	t.Parallel()
	text := "Hub 4 drops Wi-Fi\n\nThe fix is in firmware 4.2.19.\n\nLumenet Community Forums | Privacy | Contact Lumenet © 2025 Lumenet Broadband Ltd\n"
	require.Equal(t, []string{"sentence The fix is in firmware 4.2.19."}, unitTexts(parsePlain(text)))
}

// parsePlain parses text as a plain-text document.
func parsePlain(text string) Parsed {
	para := 0
	return ParseDocument(0, Document{Path: "doc.txt", Kind: "text", Lines: SplitLines(text)}, &para)
}

// Numbered clauses and lettered sub-clauses are paragraphs of their own, their numbers no part of
// their text; a clause that announces its sub-clauses heads them; a wrapped line that opens with a
// figure ("2.5 million …") is no clause; a title stacked in capitals above a version line heads it.
func TestNumberedClauses(t *testing.T) {
	t.Parallel()
	text := "KESTLE GYMS\nMEMBERSHIP TERMS\nVersion 2 - from 1 May 2026\n\n2. MEMBERSHIP TYPES AND PRICES\n" +
		"2.1 We offer the following monthly memberships:\n    (a) Off-Peak - £24.99 per month.\n    (b) Standard - £34.99 per month.\n" +
		"2.2 A joining fee of £20 is payable when you join. Our members number\n2.5 million across the country.\n"
	p := parsePlain(text)
	require.Equal(t, []string{"item Off-Peak - £24.99 per month.", "item Standard - £34.99 per month.",
		"sentence A joining fee of £20 is payable when you join.", "sentence Our members number 2.5 million across the country."}, unitTexts(p))
	require.Equal(t, "We offer the following monthly memberships:", p.Units[0].Section)
	require.Equal(t, "MEMBERSHIP TYPES AND PRICES", p.Units[2].Section)
	require.NotEqual(t, p.Units[0].Para, p.Units[1].Para)
	require.Equal(t, "KESTLE GYMS MEMBERSHIP TERMS", p.Title)
}
