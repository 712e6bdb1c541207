package llm

import (
	"fmt"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/sources"
)

// The report, the structured output and its basis are written from the evidence, not from the
// research conversation: the passages of every source the run read, ranked by relevance to the
// question and the agent's notes (BM25, the index of search.go), as many as fit the model's window,
// shown in each source's own order so a quote can be copied from running text. A long research
// run therefore never overflows the writing call, and a smaller window (a context-length
// refusal) only leaves out the least relevant passages.

// evidenceIndex is the read sources as passages.
type evidenceIndex struct {
	ix      *index
	sources []sources.StoredSource // by document index of ix
	read    int                    // len(agentRun.read) when built
}

// evidenceIndex builds (once the reading is over) the index of the sources read.
func (r *agentRun) evidenceIx() *evidenceIndex {
	if r.evidence != nil && r.evidence.read == len(r.read) {
		return r.evidence
	}
	ev := &evidenceIndex{read: len(r.read)}
	var docs []extract.Document
	for _, st := range r.readSources() {
		text, err := r.srcs.Text(st)
		if err != nil {
			continue // unreadable copies cannot be quoted anyway
		}
		docs = append(docs, extract.Document{Path: st.ID, Lines: extract.SplitLines(text)})
		ev.sources = append(ev.sources, st)
	}
	ev.ix = newIndex(docs)
	r.evidence = ev
	return ev
}

// readSources are the sources this run read, in id order.
func (r *agentRun) readSources() []sources.StoredSource {
	var out []sources.StoredSource
	for _, st := range r.srcs.All() {
		if r.read[st.ID] {
			out = append(out, st)
		}
	}
	return out
}

// render writes the passages that fit in maxBytes, the most relevant to query first, grouped by
// source in reading order; it also returns how many passages it left out.
func (ev *evidenceIndex) render(query string, maxBytes int) (string, int) {
	ix := ev.ix
	if len(ix.passages) == 0 {
		return "", 0
	}
	order := make([]int, 0, len(ix.passages))
	ranked := map[int]bool{}
	for _, h := range ix.search(nlp.Terms(query), 0, nil) {
		order = append(order, h.P)
		ranked[h.P] = true
	}
	for p := range ix.passages {
		if !ranked[p] {
			order = append(order, p)
		}
	}
	chosen := map[int]bool{}
	size, left := 0, 0
	for _, p := range order {
		n := len(ix.passages[p].Text) + 4
		if size+n > maxBytes {
			left++
			continue
		}
		chosen[p] = true
		size += n
	}
	var b strings.Builder
	doc, prevEnd := -1, 0
	for p, ps := range ix.passages {
		if !chosen[p] {
			continue
		}
		if ps.Doc != doc {
			doc, prevEnd = ps.Doc, 0
			st := ev.sources[ps.Doc]
			fmt.Fprintf(&b, "\n=== %s: %s", st.ID, st.Origin)
			if st.Title != "" && st.Title != st.Origin {
				fmt.Fprintf(&b, " (%s)", st.Title)
			}
			b.WriteString(" ===\n")
		}
		if prevEnd > 0 && ps.Start > prevEnd+1 {
			b.WriteString("…\n")
		}
		b.WriteString(ps.Text)
		b.WriteString("\n")
		prevEnd = ps.End
	}
	return b.String(), left
}

// writing builds the messages of a writing call within budget tokens: the writer's system message,
// then one user message with the question, the agent's notes and the evidence, then tail (the
// request and any retry). The evidence takes what the rest leaves.
func (r *agentRun) writing(budget int, tail []chatMsg) ([]chatMsg, error) {
	priorChars := max(0, budget/4) * 3
	sys := chatMsg{Role: "system", Content: r.writerSystem(priorChars)}
	var head strings.Builder
	fmt.Fprintf(&head, "Question: %s\n", r.in.Question)
	fixed := estimateMsgs(append([]chatMsg{sys}, tail...)) + estimateTokens(head.String()) + 6
	avail := budget - fixed
	if avail < 0 {
		return nil, errContextTooSmall
	}
	if notes := strings.TrimSpace(strings.Join(r.notes, "\n\n")); notes != "" {
		notes = cutText(notes, avail/6*3)
		fmt.Fprintf(&head, "\nYour research notes:\n%s\n", notes)
		avail -= estimateTokens(notes) + 8
	}
	if len(r.read) > 0 {
		text, left := r.evidenceIx().render(r.in.Question+" "+strings.Join(r.notes, " "), avail*3-200)
		if strings.TrimSpace(text) == "" {
			return nil, errContextTooSmall
		}
		head.WriteString("\nEvidence: passages of the sources read, under each source's id")
		if left > 0 {
			fmt.Fprintf(&head, " (the most relevant to the question; %d less relevant passage(s) are left out to fit the model's context; … marks a gap)", left)
		}
		head.WriteString(":\n")
		head.WriteString(text)
	}
	return append([]chatMsg{sys, {Role: "user", Content: head.String()}}, tail...), nil
}
