package eval

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/researchd/researchd/qadata"
)

// Figure is one measured number: a share (Num of Den, as a percentage) or a plain value.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"` // a percentage for shares
	Num   int     `json:"num,omitempty"`
	Den   int     `json:"den,omitempty"`
	Share bool    `json:"share,omitempty"`
}

func (f Figure) String() string {
	if f.Share {
		if f.Den == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%% (%d/%d)", f.Value, f.Num, f.Den)
	}
	if f.Value == float64(int64(f.Value)) {
		return fmt.Sprintf("%d", int64(f.Value))
	}
	return fmt.Sprintf("%.2f", f.Value)
}

func share(name string, num, den int) Figure {
	f := Figure{Name: name, Num: num, Den: den, Share: true}
	if den > 0 {
		f.Value = 100 * float64(num) / float64(den)
	}
	return f
}

func value(name string, v float64) Figure { return Figure{Name: name, Value: v} }

// Section is one set's figures per effort, with the effort-free baselines beside them.
type Section struct {
	Title    string              `json:"title"`
	Figures  map[string][]Figure `json:"figures"` // by effort, in a fixed order
	Baseline []Figure            `json:"baseline,omitempty"`
}

// Summarise computes every section's figures from the results.
func Summarise(tasks []Task, results []Result, efforts []string, wall map[string]time.Duration) []Section {
	by := map[string][]Result{}
	for _, r := range results {
		by[r.Effort] = append(by[r.Effort], r)
	}
	squad := Section{Title: "SQuAD 2.0 (one article, one question per job)", Figures: map[string][]Figure{}, Baseline: squadBaseline(tasks)}
	hotpot := Section{Title: "HotpotQA (ten paragraphs, one attachment each)", Figures: map[string][]Figure{}, Baseline: hotpotBaseline(tasks)}
	hand := Section{Title: "Hand-written (all documents attached)", Figures: map[string][]Figure{}}
	all := Section{Title: "All jobs", Figures: map[string][]Figure{}}
	for _, e := range efforts {
		rs := by[e]
		squad.Figures[e] = squadFigures(rs)
		hotpot.Figures[e] = hotpotFigures(rs)
		hand.Figures[e] = handFigures(rs)
		var q, v, failed int
		for _, r := range rs {
			q += r.Quotes
			v += r.QuotesVerified
			if r.Status != "completed" {
				failed++
			}
		}
		secs := wall[e].Seconds()
		jps := 0.0
		if secs > 0 {
			jps = float64(len(rs)) / secs
		}
		all.Figures[e] = []Figure{share("quotes verified", v, q), share("jobs not completed", failed, len(rs)),
			value("jobs", float64(len(rs))), value("wall time (s)", secs), value("jobs/s", jps)}
	}
	var out []Section
	for _, s := range []Section{squad, hotpot, hand, all} {
		if len(s.Figures) > 0 && len(s.Figures[efforts[0]]) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func squadFigures(rs []Result) []Figure {
	var ans, unans, swapped, first, anyHit, absAns, absUnans, absSwapped, q, v int
	for _, r := range rs {
		switch {
		case r.Set == SetSwapped:
			swapped++
			absSwapped += b2i(r.Abstained)
		case r.Set != SetSQuAD:
			continue
		case r.Answerable:
			ans++
			first += b2i(r.FirstHit)
			anyHit += b2i(r.AnyHit)
			absAns += b2i(r.Abstained)
		default:
			unans++
			absUnans += b2i(r.Abstained)
		}
		q += r.Quotes
		v += r.QuotesVerified
	}
	if ans+unans+swapped == 0 {
		return nil
	}
	return []Figure{
		share("answerable: first answer sentence holds the answer", first, ans),
		share("answerable: answer section holds the answer", anyHit, ans),
		share("abstained on answerable", absAns, ans),
		share("abstained on unanswerable (SQuAD)", absUnans, unans),
		share("abstained on swapped article", absSwapped, swapped),
		share("overall accuracy (answerable right + unanswerable abstained)", first+absUnans, ans+unans),
		share("quotes verified", v, q),
	}
}

func squadBaseline(tasks []Task) []Figure {
	n, hit := 0, 0
	for _, t := range tasks {
		if t.Set != SetSQuAD || !t.Item.Answerable() {
			continue
		}
		n++
		if qadata.ContainsAnswer(BestSentence(t.Item.Question, Sentences(t.Item.Docs[0].Text)), t.Item.Answers) {
			hit++
		}
	}
	if n == 0 {
		return nil
	}
	return []Figure{share("answerable: first answer sentence holds the answer", hit, n)}
}

func hotpotFigures(rs []Result) []Figure {
	var n, first, anyHit, refused, cited, distractor, docs int
	var p, rc, f1 float64
	for _, r := range rs {
		if r.Set != SetHotpot {
			continue
		}
		n++
		first += b2i(r.FirstHit)
		anyHit += b2i(r.AnyHit)
		refused += b2i(r.Abstained)
		cited += len(r.Cited)
		distractor += r.DistractorCited
		docs += r.CitedDocs
		p += r.Precision
		rc += r.Recall
		f1 += r.F1
	}
	if n == 0 {
		return nil
	}
	avg := func(x float64) float64 { return 100 * x / float64(n) }
	return []Figure{
		share("first answer sentence holds the answer", first, n),
		share("answer section holds the answer", anyHit, n),
		share("refused (answerable)", refused, n),
		value("supporting-sentence precision", avg(p)),
		value("supporting-sentence recall", avg(rc)),
		value("supporting-sentence F1", avg(f1)),
		share("cited sentences from distractor paragraphs", distractor, cited),
		value("distinct documents cited (mean)", float64(docs)/float64(n)),
	}
}

func hotpotBaseline(tasks []Task) []Figure {
	var n, first int
	var f1 float64
	for _, t := range tasks {
		if t.Set != SetHotpot {
			continue
		}
		n++
		facts, s := HotpotBaseline(t.Item)
		first += b2i(qadata.ContainsAnswer(s, t.Item.Answers))
		_, _, f := PRF(facts, t.Item.Support)
		f1 += f
	}
	if n == 0 {
		return nil
	}
	return []Figure{share("first answer sentence holds the answer", first, n), value("supporting-sentence F1", 100*f1/float64(n))}
}

func handFigures(rs []Result) []Figure {
	var ans, unans, admitted, refused, fields, right, valid, schemas, q, v int
	var found float64
	for _, r := range rs {
		switch r.Set {
		case SetHand:
			if r.Answerable {
				ans++
				found += r.ExpectShare
				refused += b2i(r.Abstained)
			} else {
				unans++
				admitted += b2i(r.Abstained)
			}
		case SetStructured:
			schemas++
			valid += b2i(r.SchemaValid)
			fields += r.Fields
			right += r.FieldsRight
		default:
			continue
		}
		q += r.Quotes
		v += r.QuotesVerified
	}
	if ans+unans+schemas == 0 {
		return nil
	}
	f := share("expected facts in the answer (answerable, share per question)", 0, ans)
	if ans > 0 {
		f.Value = 100 * found / float64(ans)
		f.Num = int(found + 0.5)
	}
	return []Figure{f,
		share("answerable refused", refused, ans),
		share("unanswerable admitted", admitted, unans),
		share("structured fields right", right, fields),
		share("structured output schema-valid", valid, schemas),
		share("quotes verified", v, q),
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Print writes the sections as plain tables: one row per figure, one column per effort, and the
// baseline (computed locally, without the server) where there is one.
func Print(w io.Writer, sections []Section, efforts []string) {
	for _, s := range sections {
		fmt.Fprintf(w, "\n%s\n", s.Title)
		base := map[string]Figure{}
		for _, f := range s.Baseline {
			base[f.Name] = f
		}
		width := 0
		for _, f := range s.Figures[efforts[0]] {
			width = max(width, len(f.Name))
		}
		header := fmt.Sprintf("  %-*s", width, "")
		for _, e := range efforts {
			header += fmt.Sprintf("  %-20s", e)
		}
		if len(base) > 0 {
			header += "  baseline (word overlap)"
		}
		fmt.Fprintln(w, strings.TrimRight(header, " "))
		for i, f := range s.Figures[efforts[0]] {
			line := fmt.Sprintf("  %-*s", width, f.Name)
			for _, e := range efforts {
				line += fmt.Sprintf("  %-20s", s.Figures[e][i].String())
			}
			if b, ok := base[f.Name]; ok {
				line += "  " + b.String()
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
}
