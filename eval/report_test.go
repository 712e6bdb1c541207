package eval

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/qadata"
)

const singleReport = "# Who built the bridge?\n\n" +
	"_Extractive report · effort low · 2 sources, quotes from 1 · 1 sub-question_\n\n" +
	"## Answer\n\n" +
	"“The bridge was built by William Arrol \\[of Glasgow\\] in 1887.” [1] “It carries *two* tracks.” [2]\n\n" +
	"## Evidence\n\n" +
	"> Sir William Arrol later built the Forth Bridge.\n>\n> — `input_files/tay.txt`, line 4 [3]\n\n" +
	"> ```\n> | Bridge | Year |\n> …\n> | Tay | 1887 |\n> ```\n>\n> — `input_files/bridges.md`, lines 1, 5 [4]\n\n" +
	"## Sources\n\n1. `input_files/tay.txt`, line 2\n2. `input_files/tay.txt`, line 3\n3. `input_files/tay.txt`, line 4\n" +
	"4. `input_files/bridges.md`, lines 1, 5 (table rows with their header row)\n"

const listReport = "# Compare A and B\n\n## Answer\n\n" +
	"- **What is A?** “A is a letter, e.g. the first one.” [1] Stated above [1].\n" +
	"- **What is B?** The sources do not answer this. No source mentions “B”.\n\n" +
	"## Open questions\n\n- What is B? — No source mentions “B”.\n\n## Sources\n\n1. `input_files/a.txt`, line 1\n"

const refusedReport = "# Q\n\n## Answer\n\n" +
	"- **Part one?** The sources do not answer this. No passage states it.\n" +
	"- **Part two?** THE SOURCES DO NOT ANSWER this either.\n\n## Sources\n\nNo sources were quoted.\n"

func TestParseReport(t *testing.T) {
	t.Parallel()
	r := ParseReport(singleReport)
	require.Equal(t, "Who built the bridge?", r.Title)
	require.Equal(t, []string{"1", "2"}, r.Cited)
	require.Equal(t, map[string]string{"1": "input_files/tay.txt", "2": "input_files/tay.txt", "3": "input_files/tay.txt", "4": "input_files/bridges.md"}, r.Sources)
	require.Equal(t, "The bridge was built by William Arrol [of Glasgow] in 1887.", r.FirstSentence())
	require.False(t, r.Abstained())
	require.Equal(t, []Quote{
		{Text: "The bridge was built by William Arrol [of Glasgow] in 1887.", Cite: "1", Answer: true},
		{Text: "It carries *two* tracks.", Cite: "2", Answer: true},
		{Text: "Sir William Arrol later built the Forth Bridge.", Cite: "3", Block: true},
		{Text: "| Bridge | Year |\n…\n| Tay | 1887 |", Cite: "4", Block: true},
	}, r.Quotes)
	require.Contains(t, r.AnswerText(), "It carries two tracks.")
	require.NotContains(t, r.AnswerText(), "[1]")

	l := ParseReport(listReport)
	require.Len(t, l.Parts, 2)
	require.Equal(t, "A is a letter, e.g. the first one.", l.FirstSentence(), "the first bullet's text after its label")
	require.False(t, l.Abstained(), "one part is answered")
	require.Equal(t, []Quote{{Text: "A is a letter, e.g. the first one.", Cite: "1", Answer: true}}, l.Quotes,
		"an echoed question word in quotation marks, with no citation, is no quotation")

	require.True(t, ParseReport(refusedReport).Abstained(), "every part refused, in any case")
	require.True(t, ParseReport("# Q\n\n## Answer\n\nThe sources do not answer this. No source mentions “x”.\n").Abstained())
	require.True(t, ParseReport("no answer section at all").Abstained())
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ answer, want string }{
		"prose, citations and emphasis": {"The **bridge** fell in 1879 [1]. Everyone died [2].", "The bridge fell in 1879."},
		"initials":                      {"J. K. Rowling wrote it. Then more.", "J. K. Rowling wrote it."},
		"abbreviation":                  {"Dr. Who arrived at 5 p.m. on Monday. Later he left.", "Dr. Who arrived at 5 p.m. on Monday."},
		"quoted with nested marks":      {"“He said “no” twice.” [1] “Next.” [2]", "He said “no” twice."},
		"question and exclamation":      {"Why? Because! Yes.", "Why?"},
		"closing quote after the stop":  {"He said \"stop.\" Then he went.", "He said \"stop.\""},
		"lower-case after a stop":       {"Version 2.0 is out. It works.", "Version 2.0 is out."},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, ParseReport("## Answer\n\n"+tc.answer+"\n").FirstSentence())
		})
	}
}

func TestVerified(t *testing.T) {
	t.Parallel()
	src := "Line one of the text.\nThe bridge was built by William Arrol [of Glasgow]\nin 1887.\n| Bridge | Year |\n| Forth | 1890 |\n| Tay | 1887 |\n"
	require.True(t, Verified("The bridge was built by William Arrol [of Glasgow] in 1887.", src), "across a line wrap")
	require.True(t, Verified(`The bridge was built by William Arrol \[of Glasgow\]`, src), "Markdown escapes removed")
	require.True(t, Verified("| Bridge | Year |\n…\n| Tay | 1887 |", src), "elided table rows, in order")
	require.False(t, Verified("| Tay | 1887 |\n…\n| Bridge | Year |", src), "out of order")
	require.False(t, Verified("The bridge was built by Thomas Bouch.", src))
	require.False(t, Verified("  ", src))
}

func TestQuoteCheckAndCitedDocs(t *testing.T) {
	t.Parallel()
	docs := []qadata.Doc{
		{Name: "tay.txt", Text: "Intro.\nThe bridge was built by William Arrol [of Glasgow] in 1887.\nIt carries two tracks.\nSir William Arrol later built the Forth Bridge.\n"},
		{Name: "bridges.md", Text: "| Bridge | Year |\n| --- | --- |\n| Forth | 1890 |\n| Tay | 1887 |\n"},
		{Name: "other.txt", Text: "Nothing."},
	}
	r := ParseReport(singleReport)
	q, v := QuoteCheck(r, docs)
	require.Equal(t, 4, q)
	require.Equal(t, 3, v, "“two” is emphasised in the report, not in the source")
	require.Equal(t, 2, CitedDocs(r, docs))

	// An HTML page is read as its visible text: inline tags do not break a quotation, blocks do.
	page := &qadata.Doc{Name: "job.html", Text: "<ul><li><strong>Salary:</strong> £58,000 &amp; bonus</li><li>Hybrid</li></ul>"}
	require.True(t, Verified("Salary: £58,000 & bonus", visibleText(page)))
	require.False(t, Verified("bonus Hybrid", visibleText(page)))

	// A Word file is read as its paragraphs and cells, runs joined, not as its zipped bytes.
	word := &qadata.Doc{Name: "call.docx", Text: docxOf(t, `<w:document xmlns:w="w"><w:body>`+
		`<w:p><w:r><w:t>Awards range from </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>£5,000</w:t></w:r></w:p>`+
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Closes</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>3 March</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`+
		`</w:body></w:document>`)}
	require.True(t, Verified("Awards range from £5,000", visibleText(word)))
	require.True(t, Verified("3 March", visibleText(word)))
	require.False(t, Verified("£5,000 Closes", visibleText(word)))
	require.Empty(t, visibleText(&qadata.Doc{Name: "broken.docx", Text: "not a zip"}))
}

func docxOf(t *testing.T, body string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("word/document.xml")
	require.NoError(t, err)
	_, err = w.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.String()
}

func TestCitedSentencesAndPRF(t *testing.T) {
	t.Parallel()
	docs := []qadata.Doc{
		{Name: "A.txt", Sentences: []string{"Alpha was born in 1950.", " Alpha wrote three novels.", " Alpha died in Oslo."}},
		{Name: "B.txt", Sentences: []string{"Beta is a band.", " Beta formed in 1990 in Bergen."}},
		{Name: "C.txt", Sentences: []string{"Gamma is a distractor."}},
	}
	for i := range docs {
		for _, s := range docs[i].Sentences {
			docs[i].Text += s
		}
	}
	md := "# Q\n\n## Answer\n\n“Alpha was born in 1950.” [1] “Beta formed in 1990” [2]\n\n## Evidence\n\n" +
		"> Gamma is a distractor.\n>\n> — `input_files/C.txt`, line 1 [3]\n\n" +
		"> Alpha wrote three novels. Alpha died in Oslo.\n>\n> — `input_files/A.txt`, line 1 [4]\n\n" +
		"## Sources\n\n1. `input_files/A.txt`, line 1\n2. `input_files/B.txt`, line 1\n3. `input_files/C.txt`, line 1\n4. `input_files/A.txt`, line 1\n"
	got := CitedSentences(ParseReport(md), docs)
	require.ElementsMatch(t, []qadata.Fact{{Doc: "A.txt", Sentence: 0}, {Doc: "B.txt", Sentence: 1}, {Doc: "C.txt", Sentence: 0},
		{Doc: "A.txt", Sentence: 1}, {Doc: "A.txt", Sentence: 2}}, got,
		"a quote inside a sentence, a sentence quoted whole, and a quote holding two sentences")

	gold := []qadata.Fact{{Doc: "A.txt", Sentence: 0}, {Doc: "B.txt", Sentence: 1}}
	p, r, f1 := PRF(got, gold)
	require.InDelta(t, 2.0/5, p, 1e-9)
	require.InDelta(t, 1.0, r, 1e-9)
	require.InDelta(t, 2*0.4/1.4, f1, 1e-9)
	p, r, f1 = PRF(nil, gold)
	require.Zero(t, p+r+f1)

	it := qadata.Item{Question: "When was Alpha born, and where did Beta form?", Docs: docs, Support: gold}
	facts, first := HotpotBaseline(it)
	require.Equal(t, "Alpha was born in 1950.", first)
	require.Len(t, facts, 2)
	require.NotEqual(t, facts[0].Doc, facts[1].Doc, "the second sentence comes from another paragraph")
}

func TestBaselineSentence(t *testing.T) {
	t.Parallel()
	text := "The castle was built in 1180.\nIt was built by Count Philip of Alsace. It later served as a prison."
	require.Equal(t, []string{"The castle was built in 1180.", "It was built by Count Philip of Alsace.", "It later served as a prison."}, Sentences(text))
	require.Equal(t, "It was built by Count Philip of Alsace.", BestSentence("Which count built it?", Sentences(text)),
		"stopwords (which, it) do not count")
}

func TestFieldRight(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		got  any
		want FieldExpect
		ok   bool
	}{
		"number within tolerance": {8.43, FieldExpect{Value: 8.4, Rule: "number", Tolerance: 0.05}, true},
		"number outside":          {9.0, FieldExpect{Value: 8.4, Rule: "number", Tolerance: 0.05}, false},
		"number exact":            {2930.0, FieldExpect{Value: 2930.0, Rule: "number"}, true},
		"number as string":        {"8.4", FieldExpect{Value: 8.4, Rule: "number"}, false},
		"contains":                {"Sir Thomas Bouch", FieldExpect{Value: "bouch", Rule: "contains"}, true},
		"contains not":            {"Henry Rothery", FieldExpect{Value: "Bouch", Rule: "contains"}, false},
		"enum equal":              {"fibres", FieldExpect{Value: "fibres", Rule: "equal"}, true},
		"enum other":              {"films", FieldExpect{Value: "fibres", Rule: "equal"}, false},
		"boolean":                 {false, FieldExpect{Value: false, Rule: "equal"}, true},
		"boolean null":            {nil, FieldExpect{Value: false, Rule: "equal"}, false},
		"array holds all":         {[]any{"Polyester fibres", "polyethylene", "polypropylene"}, FieldExpect{Value: []any{"polyester", "polypropylene"}, Rule: "contains_all"}, true},
		"array misses one":        {[]any{"polyester"}, FieldExpect{Value: []any{"polyester", "polypropylene"}, Rule: "contains_all"}, false},
		"null expected":           {nil, FieldExpect{Rule: "null"}, true},
		"unknown rule":            {"x", FieldExpect{Value: "x", Rule: "fuzzy"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.ok, FieldRight(tc.got, tc.want))
		})
	}
}

func TestExpectShare(t *testing.T) {
	t.Parallel()
	require.InDelta(t, 2.0/3, ExpectShare("Dark  surfaces and AIR conditioning.", []string{"dark surfaces|asphalt", "air conditioning", "river"}), 1e-9)
	require.InDelta(t, 1.0, ExpectShare("Revenue was NOK 6,820 million.", []string{"6.82 billion|6,820"}), 1e-9)
	require.Zero(t, ExpectShare("anything", nil))
}

func TestScoreAndSummarise(t *testing.T) {
	t.Parallel()
	doc := qadata.Doc{Name: "a.txt", Text: "The castle was built in 1180.\nIt is tall.\n"}
	tasks := []Task{
		{Set: SetSQuAD, Item: qadata.Item{ID: "1", Question: "When was the castle built?", Answers: []string{"1180"}, Docs: []qadata.Doc{doc}}},
		{Set: SetSQuAD, Item: qadata.Item{ID: "2", Question: "Who owns the castle?", Docs: []qadata.Doc{doc}}},
		{Set: SetSwapped, Item: qadata.Item{ID: "3", Question: "Who won?", Docs: []qadata.Doc{doc}}},
	}
	answered := "# Q\n\n## Answer\n\n“The castle was built in 1180.” [1]\n\n## Sources\n\n1. `input_files/a.txt`, line 1\n"
	refused := "# Q\n\n## Answer\n\nThe sources do not answer this. No source mentions “owns”.\n\n## Sources\n\nNo sources were quoted.\n"
	var results []Result
	for i, md := range []string{answered, refused, answered} {
		r := Score(tasks[i], Job{Status: "completed", Markdown: md})
		r.Effort = "low"
		results = append(results, r)
	}
	require.True(t, results[0].FirstHit)
	require.True(t, results[1].Abstained)
	require.False(t, results[2].Abstained)
	require.Equal(t, 1, results[0].QuotesVerified)

	sections := Summarise(tasks, results, []string{"low"}, nil)
	require.Equal(t, "SQuAD 2.0 (one article, one question per job)", sections[0].Title)
	fig := map[string]Figure{}
	for _, f := range sections[0].Figures["low"] {
		fig[f.Name] = f
	}
	require.Equal(t, 100.0, fig["answerable: first answer sentence holds the answer"].Value)
	require.Equal(t, 100.0, fig["abstained on unanswerable (SQuAD)"].Value)
	require.Equal(t, 0.0, fig["abstained on swapped article"].Value)
	require.Equal(t, 2, fig["overall accuracy (answerable right + unanswerable abstained)"].Num)
	require.Equal(t, 100.0, sections[0].Baseline[0].Value)
}
