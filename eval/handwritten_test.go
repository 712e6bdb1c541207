package eval

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var reTag = regexp.MustCompile(`<[^>]*>`)

func TestLoadHandwritten(t *testing.T) {
	q := func(ids ...string) string {
		var parts []string
		for _, id := range ids {
			parts = append(parts, `{"id":"`+id+`","kind":"factoid","question":"Q?","expect":["x"]}`)
		}
		return `{"questions":[` + strings.Join(parts, ",") + `]}`
	}
	tests := []struct {
		name    string
		files   map[string]string
		want    int
		wantErr string
	}{
		{"one file", map[string]string{"questions.json": q("h01", "h02")}, 2, ""},
		{"a file per writer", map[string]string{"questions-a.json": q("a01"), "questions-b.json": q("b01", "b02")}, 3, ""},
		{"an id twice", map[string]string{"questions-a.json": q("a01"), "questions-b.json": q("a01")}, 0, `question id "a01" twice`},
		{"no questions", map[string]string{}, 0, "no questions*.json"},
		{"broken file", map[string]string{"questions.json": "{"}, 0, "questions.json"},
		{"unanswerable kind not marked", map[string]string{"questions.json": `{"questions":[{"id":"u1","kind":"unanswerable","question":"Q?"}]}`}, 0, "without"},
		{"answerable with nothing to find", map[string]string{"questions.json": `{"questions":[{"id":"f1","kind":"factoid","question":"Q?"}]}`}, 0, "no expected facts"},
		{"unknown field rule", map[string]string{"questions.json": q("h01"), "questions-structured.json": `{"structured":[{"id":"s1","question":"Q?","schema":{},"expect":{"d":{"value":"x","rule":"equals"}}}]}`}, 0, `unknown rule "equals"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte("# A\n\nText."), 0o644); err != nil {
				t.Fatal(err)
			}
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			h, err := LoadHandwritten(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Questions) != tt.want || len(h.Docs) != 1 {
				t.Fatalf("questions %d docs %d, want %d and 1", len(h.Questions), len(h.Docs), tt.want)
			}
		})
	}
}

// The committed hand-written sets load: ids unique, every expected fact stated by some document
// (a fact no document states would score every answer wrong).
func TestCommittedHandwrittenSets(t *testing.T) {
	dirs, err := filepath.Glob("testdata/handwritten*")
	if err != nil || len(dirs) < 10 {
		t.Fatalf("sets %v: %v", dirs, err)
	}
	for _, dir := range dirs {
		h, err := LoadHandwritten(dir)
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		binary := false
		for _, d := range h.Docs {
			switch filepath.Ext(d.Name) {
			case ".docx", ".pdf":
				binary = true // its text is checked by the run's own quote check, not here
			case ".html":
				all.WriteString(strings.ToLower(html.UnescapeString(reTag.ReplaceAllString(d.Text, " "))))
			default:
				all.WriteString(strings.ToLower(d.Text))
			}
		}
		if binary {
			continue
		}
		for _, q := range h.Questions {
			if q.Unanswerable != (len(q.Expect) == 0) {
				t.Errorf("%s %s: unanswerable %v with %d expected facts", dir, q.ID, q.Unanswerable, len(q.Expect))
			}
			for _, e := range q.Expect {
				for _, alt := range strings.Split(e, "|") {
					if !strings.Contains(all.String(), strings.ToLower(alt)) {
						t.Errorf("%s %s: no document states %q", dir, q.ID, alt)
					}
				}
			}
		}
	}
}
