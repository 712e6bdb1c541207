// Package qadata reads public question-answering data (SQuAD 2.0 and HotpotQA, in their original
// JSON formats) and turns it into development items: one question, the documents it is asked
// against, and what a right answer contains. Training the answer finder and `make eval` both read
// the data through here, so they agree on the split: articles and records are divided into a part
// for fitting and a part for measuring, and neither is ever committed (they are read from a path).
package qadata

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"
)

// Split names a part of the data: what models are fitted on, or what they are measured on.
type Split string

const (
	Train Split = "train"
	Dev   Split = "dev"
)

// Kinds of item.
const (
	KindSQuAD   = "squad"   // a SQuAD question against its own article (answerable or not)
	KindSwapped = "swapped" // a SQuAD question against another article: unanswerable by construction
	KindHotpot  = "hotpot"  // a HotpotQA question against its ten paragraphs
	KindPooled  = "pooled"  // a SQuAD question against its article among others
)

// Doc is one document an item is asked against.
type Doc struct {
	Name string // a file name: the title, made safe, with .txt
	Text string
	// Sentences are the document's sentences as the data set divides them (HotpotQA), whose
	// concatenation is Text; nil when the data set does not divide them.
	Sentences []string
}

// Fact is a supporting sentence: the document it is in and its index in Doc.Sentences.
type Fact struct {
	Doc      string
	Sentence int
}

// Item is one question with its documents.
type Item struct {
	ID       string
	Kind     string
	Question string
	Answers  []string // empty: the documents do not answer it
	Docs     []Doc
	Support  []Fact // HotpotQA's supporting facts
}

// Answerable reports whether the documents hold an answer.
func (it Item) Answerable() bool { return len(it.Answers) > 0 }

type squadFile struct {
	Data []struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Context string `json:"context"`
			QAs     []struct {
				ID         string `json:"id"`
				Question   string `json:"question"`
				Impossible bool   `json:"is_impossible"`
				Answers    []struct {
					Text string `json:"text"`
				} `json:"answers"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

// devArticles are the SQuAD articles measured on; the others are fitted on. Unanswerable questions
// exist only in two articles of the sample: one is on each side.
var devArticles = []string{"Spectre_(2015_film)", "To_Kill_a_Mockingbird", "Solar_energy", "Kanye_West"}

func splitOfArticle(title string) Split {
	if slices.Contains(devArticles, title) {
		return Dev
	}
	return Train
}

// SQuAD reads a SQuAD 2.0 file and returns the split's questions, each against its whole article
// (one document), plus as many swapped items (a question against another article of the same
// split, so unanswerable) as the split has answerable questions times swapShare.
func SQuAD(path string, split Split, swapShare float64, seed uint64) ([]Item, error) {
	var f squadFile
	if err := readJSON(path, &f); err != nil {
		return nil, err
	}
	var items []Item
	var docs []Doc
	for _, a := range f.Data {
		if splitOfArticle(a.Title) != split {
			continue
		}
		paras := make([]string, 0, len(a.Paragraphs))
		for _, p := range a.Paragraphs {
			paras = append(paras, strings.TrimSpace(p.Context))
		}
		doc := Doc{Name: fileName(a.Title), Text: strings.Join(paras, "\n\n") + "\n"}
		docs = append(docs, doc)
		for _, p := range a.Paragraphs {
			for _, qa := range p.QAs {
				it := Item{ID: qa.ID, Kind: KindSQuAD, Question: strings.TrimSpace(qa.Question), Docs: []Doc{doc}}
				if !qa.Impossible {
					for _, an := range qa.Answers {
						it.Answers = append(it.Answers, an.Text)
					}
				}
				items = append(items, it)
			}
		}
	}
	if len(docs) < 2 || swapShare <= 0 {
		return items, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x5157))
	var answerable []Item
	for _, it := range items {
		if it.Answerable() {
			answerable = append(answerable, it)
		}
	}
	n := int(float64(len(answerable)) * swapShare)
	for _, i := range rng.Perm(len(answerable))[:min(n, len(answerable))] {
		src := answerable[i]
		other := docs[rng.IntN(len(docs))]
		for other.Name == src.Docs[0].Name {
			other = docs[rng.IntN(len(docs))]
		}
		items = append(items, Item{ID: src.ID + "-swapped", Kind: KindSwapped, Question: src.Question, Docs: []Doc{other}})
	}
	return items, nil
}

type hotpotRecord struct {
	ID       string              `json:"_id"`
	Question string              `json:"question"`
	Answer   string              `json:"answer"`
	Support  [][]any             `json:"supporting_facts"`
	Context  [][]json.RawMessage `json:"context"`
}

// Hotpot reads a HotpotQA file (distractor setting) and returns the split's records, each against
// its paragraphs, one document per paragraph. Every third record is measured on, the rest fitted on.
func Hotpot(path string, split Split) ([]Item, error) {
	var recs []hotpotRecord
	if err := readJSON(path, &recs); err != nil {
		return nil, err
	}
	var items []Item
	for i, r := range recs {
		if (i%3 == 2) != (split == Dev) {
			continue
		}
		it := Item{ID: r.ID, Kind: KindHotpot, Question: strings.TrimSpace(r.Question), Answers: []string{r.Answer}}
		names := map[string]string{}
		for _, c := range r.Context {
			if len(c) != 2 {
				return nil, fmt.Errorf("qadata: %s: context entry is not [title, sentences]", r.ID)
			}
			var title string
			var sents []string
			if err := json.Unmarshal(c[0], &title); err != nil {
				return nil, fmt.Errorf("qadata: %s: context title: %w", r.ID, err)
			}
			if err := json.Unmarshal(c[1], &sents); err != nil {
				return nil, fmt.Errorf("qadata: %s: context sentences: %w", r.ID, err)
			}
			name := fileName(title)
			names[title] = name
			it.Docs = append(it.Docs, Doc{Name: name, Text: strings.TrimSpace(strings.Join(sents, "")) + "\n", Sentences: sents})
		}
		for _, s := range r.Support {
			if len(s) != 2 {
				continue
			}
			title, _ := s[0].(string)
			idx, _ := s[1].(float64)
			it.Support = append(it.Support, Fact{Doc: names[title], Sentence: int(idx)})
		}
		items = append(items, it)
	}
	return items, nil
}

// fileName makes a title a safe, readable file name.
func fileName(title string) string {
	var b strings.Builder
	for _, r := range title {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.':
			b.WriteRune(r)
		case r == ' ' || r == '_':
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "._")
	if name == "" {
		name = "document"
	}
	return name + ".txt"
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("qadata: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("qadata: %s: %w", path, err)
	}
	return nil
}

// Sample returns up to n items chosen at random (seeded), in their original order.
func Sample(items []Item, n int, seed uint64) []Item {
	if n <= 0 || n >= len(items) {
		return items
	}
	rng := rand.New(rand.NewPCG(seed, 0x5A3B))
	idx := rng.Perm(len(items))[:n]
	slices.Sort(idx)
	out := make([]Item, n)
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}

// Pool returns, for a share of the SQuAD items, a copy asked against its article together with
// others other articles of the items (so a search has to find the right document first). The
// answers stay: only the item's own article is meant to hold them.
func Pool(items []Item, share float64, others int, seed uint64) []Item {
	rng := rand.New(rand.NewPCG(seed, 0x9001))
	var docs []Doc
	seen := map[string]bool{}
	for _, it := range items {
		if it.Kind == KindSQuAD && !seen[it.Docs[0].Name] {
			seen[it.Docs[0].Name] = true
			docs = append(docs, it.Docs[0])
		}
	}
	if len(docs) <= others {
		return nil
	}
	var out []Item
	for _, it := range items {
		if it.Kind != KindSQuAD || rng.Float64() >= share {
			continue
		}
		pooled := it
		pooled.ID, pooled.Kind = it.ID+"-pooled", KindPooled
		pooled.Docs = []Doc{it.Docs[0]}
		for _, i := range rng.Perm(len(docs)) {
			if len(pooled.Docs) > others {
				break
			}
			if docs[i].Name != it.Docs[0].Name {
				pooled.Docs = append(pooled.Docs, docs[i])
			}
		}
		out = append(out, pooled)
	}
	return out
}
