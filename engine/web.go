package engine

import (
	"context"
	"fmt"
	"time"
)

// WebSearcher is what the extractive engine needs from a web search provider: for a query, up to
// max pages, already fetched through the SSRF guard and reduced to text.
type WebSearcher interface {
	SearchPages(ctx context.Context, query string, max int) ([]WebPage, error)
}

// WebPage is one fetched search result.
type WebPage struct {
	URL, Title string
	Text       string // extracted text (HTML pages through ExtractText)
	Retrieved  time.Time
}

// searchWeb runs the effort's web searches (one per sub-question, at most depth.Queries) within
// its time budget and returns the pages as documents cited by URL. Without a searcher it does
// nothing.
func (r *extractiveRun) searchWeb(ctx context.Context, subs []subQuestion) ([]document, error) {
	if r.web == nil {
		return nil, nil
	}
	var docs []document
	seen := map[string]bool{}
	for i, sq := range subs {
		if i >= r.depth.Queries {
			r.notes = append(r.notes, fmt.Sprintf("Web search ran for the first %d sub-question(s) only (effort %s).", r.depth.Queries, r.in.Effort))
			break
		}
		if time.Now().After(r.deadline) {
			r.notes = append(r.notes, fmt.Sprintf("The research time budget of effort %s ran out before every web search ran.", r.in.Effort))
			break
		}
		if err := r.em.event(ctx, KindToolCall, "web_search", sq.Text, map[string]any{"tool": "web_search", "query": sq.Text, "max": r.depth.Pages}); err != nil {
			return nil, err
		}
		sctx, cancel := context.WithDeadline(ctx, r.deadline)
		pages, err := r.web.SearchPages(sctx, sq.Text, r.depth.Pages)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("engine: %w", ctx.Err())
			}
			// A failed search costs the run its web evidence, not its local evidence.
			if e := r.em.event(ctx, KindToolResult, "web_search", "failed: "+err.Error(), map[string]any{"tool": "web_search", "error": err.Error()}); e != nil {
				return nil, e
			}
			r.notes = append(r.notes, "A web search failed: "+err.Error())
			continue
		}
		var urls []string
		for _, p := range pages {
			if seen[p.URL] || p.Text == "" {
				continue
			}
			seen[p.URL] = true
			urls = append(urls, p.URL)
			docs = append(docs, document{Path: p.URL, Kind: "web", Lines: splitLines(p.Text)})
		}
		if err := r.em.event(ctx, KindToolResult, "web_search", fmt.Sprintf("%d page(s) read", len(urls)), map[string]any{"tool": "web_search", "urls": urls}); err != nil {
			return nil, err
		}
	}
	return docs, nil
}
