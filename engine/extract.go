package engine

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Limits on what a run reads, so one huge upload cannot stall a worker.
const (
	maxFileBytes  = 16 << 20
	maxSources    = 2000
	maxTotalBytes = 256 << 20
)

// document is one readable source, as lines of text.
type document struct {
	Path  string // as cited: input_files/x.txt, context/notes.md, corpus/a/b.html, or a page's URL
	Kind  string // text, html, pdf, docx
	Lines []string
	// Web marks a page found by web search; Title and Retrieved describe it.
	Web       bool
	Title     string
	Retrieved time.Time
}

// skippedFile is a source that could not be read as text.
type skippedFile struct{ Path, Reason string }

// sourceDir is a folder of sources and the prefix its files are cited under.
type sourceDir struct{ Label, Dir string }

// sourceDirs lists where a run looks, in a fixed order: the job's input files, the context
// folders, then the corpus. Labels never contain server paths.
func sourceDirs(in Input, corpus string) []sourceDir {
	dirs := []sourceDir{{Label: InputDir, Dir: filepath.Join(in.Workspace.Dir(), InputDir)}}
	for i, d := range in.ContextDirs {
		label := "context"
		if i > 0 {
			label = fmt.Sprintf("context%d", i+1)
		}
		dirs = append(dirs, sourceDir{Label: label, Dir: d})
	}
	if corpus != "" {
		dirs = append(dirs, sourceDir{Label: "corpus", Dir: corpus})
	}
	return dirs
}

// loadSources reads every regular file under dirs (lexical order, hidden entries and symlinks
// skipped) and extracts its text.
func loadSources(ctx context.Context, dirs []sourceDir) ([]document, []skippedFile, error) {
	var docs []document
	var skipped []skippedFile
	var total int64
	for _, sd := range dirs {
		err := filepath.WalkDir(sd.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == sd.Dir {
					return fs.SkipDir // a job without attachments has no input_files/
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel, _ := filepath.Rel(sd.Dir, p)
			cite := path.Join(sd.Label, filepath.ToSlash(rel))
			if p != sd.Dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				skipped = append(skipped, skippedFile{cite, "not a regular file"})
				return nil
			}
			if len(docs)+len(skipped) >= maxSources {
				skipped = append(skipped, skippedFile{cite, fmt.Sprintf("over the limit of %d files", maxSources)})
				return fs.SkipAll
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() > maxFileBytes || total+info.Size() > maxTotalBytes {
				skipped = append(skipped, skippedFile{cite, fmt.Sprintf("too large (%d bytes)", info.Size())})
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			total += int64(len(data))
			doc, reason := extract(cite, data)
			if reason != "" {
				skipped = append(skipped, skippedFile{cite, reason})
				return nil
			}
			docs = append(docs, doc)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("engine: read %s: %w", sd.Label, err)
		}
	}
	return docs, skipped, nil
}

// textExts are read as plain text without sniffing.
var textExts = map[string]bool{
	".txt": true, ".md": true, ".markdown": true, ".rst": true, ".csv": true, ".tsv": true,
	".json": true, ".jsonl": true, ".ndjson": true, ".yaml": true, ".yml": true, ".toml": true,
	".xml": true, ".log": true, ".tex": true, ".org": true, ".ini": true, ".sql": true,
}

// extract turns a file into text lines, or says why it cannot.
func extract(name string, data []byte) (document, string) {
	ext := strings.ToLower(path.Ext(name))
	doc := document{Path: name, Kind: "text"}
	var text string
	switch {
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		t, err := htmlToText(data)
		if err != nil {
			return doc, "unreadable HTML: " + err.Error()
		}
		doc.Kind, text = "html", t
	case ext == ".pdf":
		t, err := pdfToText(data)
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
	case textExts[ext] || looksLikeText(data):
		text = strings.ToValidUTF8(string(data), "\uFFFD")
	default:
		return doc, "binary file (no text extractor for " + describeExt(ext) + ")"
	}
	doc.Lines = splitLines(text)
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

// looksLikeText: valid UTF-8 with no NUL bytes in the first 8 KiB.
func looksLikeText(data []byte) bool {
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

// splitLines cuts text into lines, whatever its line endings.
func splitLines(text string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
}

// pdfToText extracts the text of each page; the parser panics on some malformed files, which is
// turned into an error so one bad upload cannot kill a worker.
func pdfToText(data []byte) (text string, err error) {
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

// docxToText reads word/document.xml: text runs, with a line per paragraph.
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
	dec := xml.NewDecoder(io.LimitReader(rc, maxFileBytes*4))
	var b strings.Builder
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteByte('\t')
			case "br", "cr":
				b.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				b.WriteString("\n\n")
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
	}
	return b.String(), nil
}
