package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// docxToText reads word/document.xml as the Markdown-like text the other formats become: a
// paragraph a line, a heading style ("Heading2", "Title") as "## …", a numbered or bulleted
// paragraph as "- …", a table as pipe rows with its first row as header; so a Word file's
// sections, lists and tables are read as those of a Markdown file are.
func docxToText(data []byte) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", err
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
		}
	}
	if doc == nil {
		return "", errors.New("no word/document.xml")
	}
	rc, err := doc.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	w := &docxWriter{}
	if err := w.read(xml.NewDecoder(io.LimitReader(rc, MaxFileBytes*4))); err != nil {
		return "", err
	}
	return w.out.String(), nil
}

// docxWriter writes a Word body as text while its XML is read.
type docxWriter struct {
	out    strings.Builder
	para   strings.Builder // the paragraph being read
	style  string          // its style ("Heading1")
	listed bool            // it is numbered or bulleted
	inList bool            // the last line written was a list item
	inText bool
	depth  int        // table nesting
	row    []string   // cells of the table row being read
	cell   []string   // paragraphs of the cell being read
	rows   [][]string // rows of the table being read
}

func (w *docxWriter) read(dec *xml.Decoder) error {
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			w.start(t)
		case xml.EndElement:
			w.end(t.Name.Local)
		case xml.CharData:
			if w.inText {
				w.para.Write(t)
			}
		}
	}
}

func (w *docxWriter) start(t xml.StartElement) {
	switch t.Name.Local {
	case "t":
		w.inText = true
	case "tab":
		w.para.WriteByte('\t')
	case "br", "cr":
		w.para.WriteByte('\n')
	case "pStyle":
		w.style = attrOf(t, "val")
	case "numPr":
		w.listed = true
	case "tbl":
		w.depth++
		if w.depth == 1 {
			w.rows = nil
		}
	case "tr":
		if w.depth == 1 {
			w.row = nil
		}
	case "tc":
		if w.depth == 1 {
			w.cell = nil
		}
	}
}

func (w *docxWriter) end(name string) {
	switch name {
	case "t":
		w.inText = false
	case "p":
		w.endParagraph()
	case "tc":
		if w.depth == 1 {
			w.row = append(w.row, strings.ReplaceAll(strings.Join(w.cell, " "), "|", "/"))
		}
	case "tr":
		if w.depth == 1 {
			w.rows = append(w.rows, w.row)
		}
	case "tbl":
		if w.depth--; w.depth == 0 {
			w.writeTable()
		}
	}
}

func (w *docxWriter) endParagraph() {
	text := strings.TrimSpace(w.para.String())
	style, listed := w.style, w.listed
	w.para.Reset()
	w.style, w.listed = "", false
	item := w.depth == 0 && text != "" && headingLevel(style) == 0 && (listed || strings.HasPrefix(strings.ToLower(style), "list"))
	if w.inList && !item && text != "" && w.depth == 0 {
		w.out.WriteString("\n") // a list ends before the next block
	}
	if text != "" && w.depth == 0 {
		w.inList = item
	}
	switch {
	case text == "":
	case w.depth > 0:
		w.cell = append(w.cell, nlp.Collapse(text))
	case headingLevel(style) > 0:
		w.out.WriteString(strings.Repeat("#", headingLevel(style)) + " " + nlp.Collapse(text) + "\n\n")
	case item:
		w.out.WriteString("- " + nlp.Collapse(text) + "\n")
	default:
		w.out.WriteString(text + "\n\n")
	}
}

// writeTable writes the rows read as a pipe table, the first row its header.
func (w *docxWriter) writeTable() {
	var rows [][]string
	for _, r := range w.rows {
		if strings.TrimSpace(strings.Join(r, "")) != "" {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	w.inList = false
	w.out.WriteString("\n")
	for i, r := range rows {
		w.out.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			w.out.WriteString(strings.Repeat("| --- ", len(r)) + "|\n")
		}
	}
	w.out.WriteString("\n")
}

// headingLevel is the level of a heading style: "Heading2" 2, "Title" 1, other styles 0.
func headingLevel(style string) int {
	s := strings.ToLower(strings.ReplaceAll(style, " ", ""))
	switch {
	case s == "title":
		return 1
	case strings.HasPrefix(s, "heading") && len(s) == len("heading")+1 && s[len(s)-1] >= '1' && s[len(s)-1] <= '6':
		return int(s[len(s)-1] - '0')
	}
	return 0
}

func attrOf(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
