package engine

import "strings"

// ExtractText is the text a run reads from a file, by its name's extension: plain text formats as
// they are, the visible text of HTML, the text of PDF pages and DOCX paragraphs. ok is false for
// files without readable text (images, other binaries, empty or unreadable documents). Other
// packages use it to mirror what runs will see (expert context files).
func ExtractText(name string, data []byte) (text string, ok bool) {
	doc, reason := extract(name, data)
	if reason != "" {
		return "", false
	}
	return strings.Join(doc.Lines, "\n"), true
}
