package eval

import (
	"math"
	"path"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"github.com/researchd/researchd/qadata"
)

// normSpace collapses white space.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// normQuote is a quotation or source text as compared: white space collapsed, typographic
// apostrophes and dashes kept (quotes are verbatim).
func normQuote(s string) string { return normSpace(Unescape(s)) }

// Verified reports whether a quotation appears verbatim (white space normalised, Markdown escapes
// removed) in the source text. A quotation with "…" elisions (table rows, skipped lines) is
// verified piece by piece, in order.
func Verified(quote, source string) bool {
	src := normSpace(source)
	q := normQuote(quote)
	if q == "" {
		return false
	}
	at := 0
	for _, piece := range strings.Split(q, "…") {
		piece = strings.TrimSpace(piece)
		if piece == "" {
			continue
		}
		i := strings.Index(src[at:], piece)
		if i < 0 {
			return false
		}
		at += i + len(piece)
	}
	return true
}

// DocOf is the document a citation points at, by the base name of its source path; nil when the
// citation or the document is unknown.
func DocOf(r Report, cite string, docs []qadata.Doc) *qadata.Doc {
	p, ok := r.Sources[cite]
	if !ok {
		return nil
	}
	base := path.Base(p)
	for i := range docs {
		if docs[i].Name == base {
			return &docs[i]
		}
	}
	return nil
}

// QuoteCheck counts a report's quotations and those verified in the document they cite; a
// quotation whose citation names no known document is not verified.
func QuoteCheck(r Report, docs []qadata.Doc) (quotes, verified int) {
	for _, q := range r.Quotes {
		quotes++
		if d := DocOf(r, q.Cite, docs); d != nil && Verified(q.Text, visibleText(d)) {
			verified++
		}
	}
	return quotes, verified
}

// visibleText is what a reader of the document sees: an HTML page's text without its tags
// ("<strong>Salary:</strong> £58,000" reads "Salary: £58,000"), a Word file's paragraphs, other
// documents as they are.
func visibleText(d *qadata.Doc) string {
	switch strings.ToLower(path.Ext(d.Name)) {
	case ".html", ".htm":
		return htmlText(d.Text)
	case ".docx":
		return wordText(d.Text)
	}
	return d.Text
}

func htmlText(page string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			if name, _ := z.TagName(); !inlineTags[string(name)] {
				b.WriteString("\n\x00\n") // a block's text does not run into the next block's
			}
		}
	}
}

// inlineTags run on within a line of text.
var inlineTags = map[string]bool{"a": true, "b": true, "strong": true, "i": true, "em": true, "span": true,
	"code": true, "small": true, "sup": true, "sub": true, "abbr": true, "mark": true, "u": true, "s": true, "q": true,
	"cite": true, "time": true, "data": true, "kbd": true, "var": true, "bdi": true, "dfn": true}

// CitedDocs is the number of distinct documents the report cites (answer and evidence).
func CitedDocs(r Report, docs []qadata.Doc) int {
	seen := map[string]bool{}
	for n := range r.Sources {
		if d := DocOf(r, n, docs); d != nil {
			seen[d.Name] = true
		}
	}
	return len(seen)
}

// CitedSentences maps each quotation in the report back to the sentences of the cited document
// (Doc.Sentences) it overlaps: a sentence counts when the quotation contains it or it contains the
// quotation, white space normalised.
func CitedSentences(r Report, docs []qadata.Doc) []qadata.Fact {
	seen := map[qadata.Fact]bool{}
	var out []qadata.Fact
	for _, q := range r.Quotes {
		d := DocOf(r, q.Cite, docs)
		if d == nil {
			continue
		}
		qt := normQuote(q.Text)
		for i, s := range d.Sentences {
			st := normSpace(s)
			if st == "" || qt == "" || !(strings.Contains(qt, st) || strings.Contains(st, qt)) {
				continue
			}
			if f := (qadata.Fact{Doc: d.Name, Sentence: i}); !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// PRF is precision, recall and F1 of predicted facts against gold ones. No prediction gives
// precision 0 (HotpotQA's convention).
func PRF(pred, gold []qadata.Fact) (p, r, f1 float64) {
	g := map[qadata.Fact]bool{}
	for _, f := range gold {
		g[f] = true
	}
	tp := 0
	seen := map[qadata.Fact]bool{}
	for _, f := range pred {
		if g[f] && !seen[f] {
			tp++
		}
		seen[f] = true
	}
	if len(seen) > 0 {
		p = float64(tp) / float64(len(seen))
	}
	if len(g) > 0 {
		r = float64(tp) / float64(len(g))
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return p, r, f1
}

// stopwords are left out of the baselines' word overlap.
var stopwords = toSet(`a about after all also an and any are as at be been before being but by can could did do does
during each for from had has have he her his how i if in into is it its many may me more most much my no not of on
one or other our out over she should so some such than that the their them then there these they this those through
to under up was we were what when where which while who whom whose why will with would you your`)

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// ContentWords are a text's distinct lower-cased words, stopwords left out.
func ContentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !stopwords[w] {
			out[w] = true
		}
	}
	return out
}

func overlap(q map[string]bool, s string) int {
	n := 0
	for w := range ContentWords(s) {
		if q[w] {
			n++
		}
	}
	return n
}

// Sentences divides text into sentences (per line, then at sentence ends).
func Sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		for line != "" {
			s := firstSentence(line)
			out = append(out, s)
			line = strings.TrimSpace(line[len(s):])
		}
	}
	return out
}

// BestSentence is the naive baseline: the sentence with the most question words in common
// (the first of equals), or "" when there is none.
func BestSentence(question string, sentences []string) string {
	q := ContentWords(question)
	best, bestN := "", -1
	for _, s := range sentences {
		if n := overlap(q, s); n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

// HotpotBaseline is the multi-document baseline: the best-overlap sentence, then the best one
// from another document. It returns the facts and the first (best) sentence.
func HotpotBaseline(it qadata.Item) (facts []qadata.Fact, first string) {
	q := ContentWords(it.Question)
	type cand struct {
		f qadata.Fact
		n int
		s string
	}
	var cands []cand
	for _, d := range it.Docs {
		for i, s := range d.Sentences {
			cands = append(cands, cand{qadata.Fact{Doc: d.Name, Sentence: i}, overlap(q, s), s})
		}
	}
	if len(cands) == 0 {
		return nil, ""
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].n > cands[j].n })
	facts = append(facts, cands[0].f)
	for _, c := range cands[1:] {
		if c.f.Doc != cands[0].f.Doc {
			facts = append(facts, c.f)
			break
		}
	}
	return facts, cands[0].s
}

// FieldExpect is what one structured-output field must hold and how it is compared.
type FieldExpect struct {
	Value any `json:"value"`
	// Rule: "number" (equal within Tolerance, relative when Relative), "contains" (string holds
	// the value, case-insensitive), "equal" (exact, for enums and booleans), "contains_all" (an
	// array whose items together hold every expected string), "null".
	Rule      string  `json:"rule"`
	Tolerance float64 `json:"tolerance,omitempty"`
}

// FieldRight reports whether a field's value meets its expectation.
func FieldRight(got any, want FieldExpect) bool {
	switch want.Rule {
	case "null":
		return got == nil
	case "number":
		g, ok1 := number(got)
		w, ok2 := number(want.Value)
		return ok1 && ok2 && math.Abs(g-w) <= want.Tolerance+1e-9
	case "contains":
		g, ok := got.(string)
		w, _ := want.Value.(string)
		return ok && w != "" && strings.Contains(strings.ToLower(normSpace(g)), strings.ToLower(w))
	case "equal":
		if g, ok := got.(string); ok {
			w, _ := want.Value.(string)
			return strings.EqualFold(strings.TrimSpace(g), w)
		}
		return got == want.Value
	case "contains_all":
		items, ok := got.([]any)
		wants, _ := want.Value.([]any)
		if !ok || len(wants) == 0 {
			return false
		}
		var all []string
		for _, it := range items {
			if s, ok := it.(string); ok {
				all = append(all, strings.ToLower(s))
			}
		}
		joined := strings.Join(all, "\n")
		for _, w := range wants {
			if s, _ := w.(string); !strings.Contains(joined, strings.ToLower(s)) {
				return false
			}
		}
		return true
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// ExpectShare is the share of expected facts found in text, each a case-insensitive substring;
// "a|b" accepts either form.
func ExpectShare(text string, expect []string) float64 {
	if len(expect) == 0 {
		return 0
	}
	t := strings.ToLower(normSpace(text))
	n := 0
	for _, e := range expect {
		for _, alt := range strings.Split(e, "|") {
			if alt = strings.ToLower(normSpace(alt)); alt != "" && strings.Contains(t, alt) {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(expect))
}
