package llm

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/sources"
)

// Retrieve-then-read: for a model that cannot call tools (or did not), the service does the
// reading itself, the way the extractive engine does, and the model only writes: the local files
// are ranked for the question with the BM25 passage index, the web is searched with the question
// and the results' pages are read; every source read is stored, and the report is written from
// their passages (evidence.go).

// webShare is how many of the effort's sources retrieval keeps for web pages when a search
// provider is configured.
const webShare = 3

// retrieve reads for the model; why says in the timeline why the service does.
func (r *agentRun) retrieve(ctx context.Context, why string) error {
	if err := r.em.Event(ctx, engine.KindStatus, "Retrieve-then-read", why, map[string]any{"tool_mode": ToolsRetrieve}); err != nil {
		return err
	}
	localMax := r.budget.Sources
	if r.e.opts.Searcher != nil {
		localMax = max(1, r.budget.Sources-min(webShare, r.budget.Sources/2))
	}
	if err := r.retrieveLocal(ctx, localMax); err != nil {
		return err
	}
	return r.retrieveWeb(ctx)
}

// retrieveLocal reads the local documents whose passages match the question best (the job's own
// files even when nothing matches: the caller attached them for a reason), up to limit sources.
func (r *agentRun) retrieveLocal(ctx context.Context, limit int) error {
	if len(r.ix.docs) == 0 {
		return nil
	}
	q := r.in.Question
	data := map[string]any{"tool": "search_files", "query": q, "by": "service"}
	if err := r.em.Event(ctx, engine.KindToolCall, "search_files", q, data); err != nil {
		return err
	}
	var order []int
	seen := map[int]bool{}
	for _, h := range r.ix.search(nlp.Terms(q), 0, nil) {
		if d := r.ix.passages[h.P].Doc; !seen[d] {
			seen[d] = true
			order = append(order, d)
		}
	}
	for d, doc := range r.ix.docs {
		if !seen[d] && strings.HasPrefix(doc.Path, engine.InputDir+"/") {
			order = append(order, d)
		}
	}
	var lines []string
	for _, d := range order {
		if len(r.read) >= limit {
			break
		}
		st, err := r.admit(sources.FromDocument(r.ix.docs[d]))
		if err != nil {
			break
		}
		lines = append(lines, fmt.Sprintf("[%s] %s", st.ID, r.ix.docs[d].Path))
	}
	summary := fmt.Sprintf("%d file(s) read", len(lines))
	if len(lines) > 0 {
		summary += ":\n" + strings.Join(lines, "\n")
	}
	return r.em.Event(ctx, engine.KindToolResult, "search_files", summary, map[string]any{"tool": "search_files", "by": "service", "error": false})
}

// retrieveWeb searches the web with the question and reads the results' pages, within the
// effort's source and search budgets. A failed search costs the run its web evidence only.
func (r *agentRun) retrieveWeb(ctx context.Context) error {
	left := r.budget.Sources - len(r.read)
	if r.e.opts.Searcher == nil || left <= 0 || r.searches >= r.searchBudget() {
		return nil
	}
	q := r.in.Question
	if err := r.em.Event(ctx, engine.KindToolCall, "web_search", q, map[string]any{"tool": "web_search", "query": q, "by": "service"}); err != nil {
		return err
	}
	r.searches++
	pages, err := sources.NewWebSearcher(r.e.opts.Searcher, r.e.opts.FetchClient, r.in.Now).SearchPages(ctx, q, min(left, 5))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("engine: %w", ctx.Err())
		}
		return r.em.Event(ctx, engine.KindToolResult, "web_search", "failed: "+err.Error(), map[string]any{"tool": "web_search", "by": "service", "error": true})
	}
	var lines []string
	for _, p := range pages {
		if p.Err != "" || strings.TrimSpace(p.Text) == "" {
			lines = append(lines, fmt.Sprintf("not read: %s (%s)", p.URL, cmp.Or(p.Err, "the page has no text")))
			continue
		}
		d := extract.Document{Path: p.URL, Kind: cmp.Or(p.Kind, "text"), Lines: extract.SplitLines(p.Text), Web: true, Title: p.Title, Retrieved: p.Retrieved}
		st, err := r.admit(sources.FromDocument(d))
		if err != nil {
			break // the source budget is spent
		}
		lines = append(lines, fmt.Sprintf("[%s] %s", st.ID, p.URL))
	}
	return r.em.Event(ctx, engine.KindToolResult, "web_search", fmt.Sprintf("%d result(s)\n%s", len(pages), strings.Join(lines, "\n")),
		map[string]any{"tool": "web_search", "by": "service", "error": false})
}
