// Package extract turns files into text and text into structure: plain text, HTML (html.go),
// PDF and DOCX become lines of text; lines become the units a run can quote (sentences, list
// items, "Label: value" lines, table rows) and tables (units.go, tables.go). It imports only nlp.
package extract

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// MaxFileBytes is the largest file a run reads, so one huge upload cannot stall a worker.
const MaxFileBytes = 16 << 20

// Document is one readable source, as lines of text.
type Document struct {
	Path  string // as cited: input_files/x.txt, context/notes.md, corpus/a/b.html, or a page's URL
	Kind  string // text, html, pdf, docx
	Lines []string
	// Web marks a page found by web search; Title and Retrieved describe it.
	Web       bool
	Title     string
	Retrieved time.Time
}

// textExts are read as plain text without sniffing.
var textExts = map[string]bool{
	".txt": true, ".md": true, ".markdown": true, ".rst": true, ".csv": true, ".tsv": true,
	".json": true, ".jsonl": true, ".ndjson": true, ".yaml": true, ".yml": true, ".toml": true,
	".xml": true, ".log": true, ".tex": true, ".org": true, ".ini": true, ".sql": true,
}

// File turns a file into text lines, or says why it cannot.
func File(name string, data []byte) (Document, string) {
	ext := strings.ToLower(path.Ext(name))
	doc := Document{Path: name, Kind: "text"}
	var text string
	switch {
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		t, err := HTMLToText(data)
		if err != nil {
			return doc, "unreadable HTML: " + err.Error()
		}
		doc.Kind, text = "html", t
	case ext == ".pdf":
		t, err := PDFToText(data)
		if err != nil {
			return doc, "unreadable PDF: " + err.Error()
		}
		doc.Kind, text = "pdf", t
	case ext == ".docx":
		t, err := docxToText(data)
		if err != nil {
			return doc, "unreadable DOCX: " + err.Error()
		}
		doc.Kind, text = "docx", t
	case textExts[ext] || LooksLikeText(data):
		text = strings.ToValidUTF8(string(data), "\uFFFD")
	default:
		return doc, "binary file (no text extractor for " + describeExt(ext) + ")"
	}
	doc.Lines = SplitLines(text)
	if strings.TrimSpace(text) == "" {
		return doc, "no text"
	}
	return doc, ""
}

func describeExt(ext string) string {
	if ext == "" {
		return "files without an extension"
	}
	return ext
}

// LooksLikeText: valid UTF-8 with no NUL bytes in the first 8 KiB.
func LooksLikeText(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	// A multi-byte rune may be cut at the 8 KiB boundary.
	for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return utf8.Valid(head)
}

// SplitLines cuts text into lines, whatever its line endings.
func SplitLines(text string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
}

// PDFToText extracts the text of each page; the parser panics on some malformed files, which is
// turned into an error so one bad upload cannot kill a worker.
func PDFToText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed PDF: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		// Font names are per page ("F1" differs between pages), so the cache is too.
		fonts := map[string]*pdf.Font{}
		for _, name := range p.Fonts() {
			f := p.Font(name)
			fonts[name] = &f
		}
		t, err := p.GetPlainText(fonts)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i, err)
		}
		b.WriteString(strings.TrimSpace(t))
		b.WriteString("\n\n")
	}
	return b.String(), nil
}

// Text is the text a run reads from a file, by its name's extension: plain text formats as
// they are, the visible text of HTML, the text of PDF pages and DOCX paragraphs. ok is false for
// files without readable text (images, other binaries, empty or unreadable documents). Other
// packages use it to mirror what runs will see (expert context files).
func Text(name string, data []byte) (text string, ok bool) {
	doc, reason := File(name, data)
	if reason != "" {
		return "", false
	}
	return strings.Join(doc.Lines, "\n"), true
}
