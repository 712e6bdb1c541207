package extractive_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
)

func TestExtractiveExtractsDocuments(t *testing.T) {
	t.Parallel()
	inputs := map[string][]byte{
		"paper.pdf":   minimalPDF("Geothermal wells reach 150 degrees at depth."),
		"memo.docx":   minimalDOCX("Geothermal drilling costs fell by a third.", "Second paragraph about permits."),
		"page.html":   []byte(`<html><head><script>geothermal = "hidden script"</script></head><body><h2>Geothermal</h2><p>Geothermal plants run <b>all year</b>.</p></body></html>`),
		"broken.pdf":  []byte("%PDF-1.4 this is not really a pdf"),
		"image.png":   {0x89, 'P', 'N', 'G', 0, 0, 0, 0},
		"notes":       []byte("geothermal notes without an extension\n"),
		"latin1.txt":  {'g', 'e', 'o', 't', 'h', 'e', 'r', 'm', 'a', 'l', ' ', 0xe9, '\n'},
		"empty.txt":   {},
		"nested/a.md": []byte("Geothermal heat is steady.\n"),
	}
	for q, want := range map[string][]string{
		"How hot do geothermal wells get?":          {"150 degrees", "(text extracted from PDF)"},
		"How did geothermal drilling costs change?": {"drilling costs fell by a third", "(text extracted from DOCX)"},
		"When do geothermal plants run?":            {"Geothermal plants run all year", "(text extracted from HTML)"},
		"Is geothermal heat steady?":                {"`input_files/nested/a.md`, line 1"},
		"What do the notes say about geothermal?":   {"`input_files/notes`"},
	} {
		r := runOffline(t, engine.Input{Question: q, Effort: engine.EffortBuild, Workspace: enginetest.Workspace(t, inputs)}, "")
		for _, w := range want {
			require.Contains(t, r.res.Report, w, q)
		}
		require.NotContains(t, r.res.Report, "hidden script")
		skipped := map[string]string{}
		for _, e := range r.sink.OfKind(engine.KindStatus) {
			if e.Title == "Skipped file" {
				skipped[e.Data["path"].(string)] = e.Data["reason"].(string)
			}
		}
		require.Contains(t, skipped["input_files/broken.pdf"], "unreadable PDF")
		require.Contains(t, skipped["input_files/image.png"], "binary file")
		require.Equal(t, "no text", skipped["input_files/empty.txt"])
		require.Len(t, skipped, 3)
	}
}

// minimalPDF builds a one-page PDF showing text in Helvetica.
func minimalPDF(text string) []byte {
	content := fmt.Sprintf("BT /F1 12 Tf 72 712 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// minimalDOCX builds a Word document with one paragraph per argument.
func minimalDOCX(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t>%s</w:t></w:r></w:p>`, p)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("word/document.xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>%s</w:body></w:document>`, body.String())
	_ = zw.Close()
	return b.Bytes()
}

// TestHTMLTableQuotedAsItsCells: a table of an HTML page is quoted as its cells in page order,
// which both the run's own check and a reader of the page find verbatim, not as "| a | b |"
// lines the page never held.
func TestHTMLTableQuotedAsItsCells(t *testing.T) {
	t.Parallel()
	page := `<html><body><h1>Kellbridge Festival</h1><h2>Tickets &amp; prices</h2>
<table><tr><th>Ticket</th><th>Standard</th><th>Concession</th></tr>
<tr><td>Weekend pass</td><td>£45</td><td>£31</td></tr>
<tr><td>Day ticket</td><td>£20</td><td>£14</td></tr></table></body></html>`
	repo := enginetest.Workspace(t, map[string][]byte{"festival.html": []byte(page)})
	r := runOffline(t, engine.Input{Question: "How much is a day ticket for the Kellbridge Festival?", Effort: engine.EffortLow, Workspace: repo}, "")
	require.Contains(t, r.res.Report, "> Ticket … Standard … Concession\n")
	require.Contains(t, r.res.Report, "> Day ticket … £20 … £14\n")
	require.NotContains(t, r.res.Report, "| Day ticket |")
	v, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Positive(t, v.Total)
	require.Equal(t, v.Total, v.Verified, v.Failed)
}
