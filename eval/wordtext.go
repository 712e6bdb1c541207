package eval

import (
	"archive/zip"
	"encoding/xml"
	"io"
	"strings"
)

// wordText is the text of a Word (.docx) file's body as a reader sees it: each paragraph and table
// cell on a line of its own. The checker reads the file itself rather than trusting the engine's
// extraction, so that a quotation is verified against what the user uploaded. A file that is not a
// readable Word file has no text.
func wordText(data string) string {
	zr, err := zip.NewReader(strings.NewReader(data), int64(len(data)))
	if err != nil {
		return ""
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			rc, err := f.Open()
			if err != nil {
				return ""
			}
			defer rc.Close()
			return bodyText(rc)
		}
	}
	return ""
}

func bodyText(r io.Reader) string {
	var b strings.Builder
	dec := xml.NewDecoder(r)
	inText := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return b.String()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			inText = t.Name.Local == "t"
			if t.Name.Local == "tab" {
				b.WriteByte('\t')
			}
		case xml.EndElement:
			inText = false
			if t.Name.Local == "p" || t.Name.Local == "tc" {
				b.WriteString("\n\x00\n") // as between an HTML page's blocks
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
	}
}
