package extract

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDOCXStructure: a Word file's heading styles, numbered paragraphs and tables are read as a
// Markdown file's headings, list items and pipe rows; runs of one paragraph join.
func TestDOCXStructure(t *testing.T) {
	t.Parallel()
	body := `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		`<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Rook Fund</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t xml:space="preserve">Grants of £5,000 </w:t></w:r><w:r><w:t>to £15,000.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>What we fund</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>solar panels;</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="ListBullet"/></w:pPr><w:r><w:t>heat pumps.</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>Key dates:</w:t></w:r></w:p>` +
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Stage</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Date</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>Deadline</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>12 noon,</w:t></w:r></w:p><w:p><w:r><w:t>30 April 2026</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		`</w:body></w:document>`
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("word/document.xml")
	require.NoError(t, err)
	_, err = f.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())

	text, err := docxToText(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, "# Rook Fund\n\nGrants of £5,000 to £15,000.\n\n## What we fund\n\n- solar panels;\n- heat pumps.\n\nKey dates:\n\n"+
		"\n| Stage | Date |\n| --- | --- |\n| Deadline | 12 noon, 30 April 2026 |\n\n", text)
}
