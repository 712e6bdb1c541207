package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/researchd/researchd/qadata"
)

// HandQuestion is a hand-written question: the facts a right answer holds (for a list, each
// item; scored as the share found), or unanswerable from the documents.
type HandQuestion struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"` // factoid, why, list, compare, brief, paraphrase, unanswerable
	Question     string   `json:"question"`
	Expect       []string `json:"expect,omitempty"`
	Unanswerable bool     `json:"unanswerable,omitempty"`
}

// HandStructured is a structured-output case: a question, a JSON Schema and what each field holds.
type HandStructured struct {
	ID       string                 `json:"id"`
	Question string                 `json:"question"`
	Schema   map[string]any         `json:"schema"`
	Expect   map[string]FieldExpect `json:"expect"`
}

// Handwritten is the hand-written set: documents (every job gets all of them) and cases.
type Handwritten struct {
	Docs       []qadata.Doc     `json:"-"`
	Questions  []HandQuestion   `json:"questions"`
	Structured []HandStructured `json:"structured"`
}

// LoadHandwritten reads the documents in dir/docs and the cases of dir/questions.json, or of every
// dir/questions*.json when several writers keep a file each (a training set).
func LoadHandwritten(dir string) (*Handwritten, error) {
	files, err := filepath.Glob(filepath.Join(dir, "questions*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no questions*.json", dir)
	}
	var h Handwritten
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var part Handwritten
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		h.Questions = append(h.Questions, part.Questions...)
		h.Structured = append(h.Structured, part.Structured...)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "docs"))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		t, err := os.ReadFile(filepath.Join(dir, "docs", e.Name()))
		if err != nil {
			return nil, err
		}
		h.Docs = append(h.Docs, qadata.Doc{Name: e.Name(), Text: string(t)})
	}
	sort.Slice(h.Docs, func(i, j int) bool { return h.Docs[i].Name < h.Docs[j].Name })
	if len(h.Docs) == 0 || len(h.Docs) > 20 {
		return nil, fmt.Errorf("%s: want 1 to 20 documents (one job takes at most 20 attachments), have %d", dir, len(h.Docs))
	}
	return &h, nil
}

// fieldRules are the rules FieldRight knows.
var fieldRules = map[string]bool{"null": true, "number": true, "contains": true, "equal": true, "contains_all": true}

// check refuses a set that would be scored wrong without a word: an id used twice, an answerable
// question with nothing to find or an unanswerable one that is not marked so, a field rule
// FieldRight does not know ("equals" for "equal" scores every answer wrong).
func (h *Handwritten) check() error {
	seen := map[string]bool{}
	for _, q := range h.Questions {
		switch {
		case seen[q.ID]:
			return fmt.Errorf("question id %q twice", q.ID)
		case q.Kind == "unanswerable" && !q.Unanswerable:
			return fmt.Errorf("question %s: kind unanswerable without \"unanswerable\": true", q.ID)
		case !q.Unanswerable && len(q.Expect) == 0:
			return fmt.Errorf("question %s: answerable with no expected facts", q.ID)
		}
		seen[q.ID] = true
	}
	for _, s := range h.Structured {
		for field, want := range s.Expect {
			if !fieldRules[want.Rule] {
				return fmt.Errorf("structured case %s, field %s: unknown rule %q", s.ID, field, want.Rule)
			}
		}
	}
	return nil
}

// Tasks are the set's jobs: each question and each structured case against all the documents.
func (h *Handwritten) Tasks() []Task {
	var out []Task
	for _, q := range h.Questions {
		it := qadata.Item{ID: q.ID, Kind: q.Kind, Question: q.Question, Docs: h.Docs}
		out = append(out, Task{Set: SetHand, Item: it, Expect: q.Expect, Unanswerable: q.Unanswerable})
	}
	for _, s := range h.Structured {
		it := qadata.Item{ID: s.ID, Kind: "structured", Question: s.Question, Docs: h.Docs}
		out = append(out, Task{Set: SetStructured, Item: it, Schema: s.Schema, Fields: s.Expect})
	}
	return out
}
