package extractive

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/sources"
)

// searchWeb runs the effort's web searches (one per sub-question, at most depth.Queries) within
// its time budget and returns the pages as documents cited by URL. Every page read is stored under
// sources/ at once (a citation of it points to that copy). Without a searcher it does nothing.
func (r *extractiveRun) searchWeb(ctx context.Context, subs []subQuestion) ([]extract.Document, error) {
	if r.web == nil {
		return nil, nil
	}
	srcs, err := r.sources()
	if err != nil {
		return nil, err
	}
	var docs []extract.Document
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
		if err := r.em.Event(ctx, engine.KindToolCall, "web_search", sq.Text, map[string]any{"tool": "web_search", "query": sq.Text, "max": r.depth.Pages}); err != nil {
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
			if e := r.em.Event(ctx, engine.KindToolResult, "web_search", "failed: "+err.Error(), map[string]any{"tool": "web_search", "error": err.Error()}); e != nil {
				return nil, e
			}
			if sources.Unreachable(err) {
				// Said once: the next sub-question would meet the same closed door.
				r.notes = append(r.notes, "Web search was not available ("+err.Error()+"), so this run used only its other sources.")
				break
			}
			if note := "A web search failed: " + err.Error(); !slices.Contains(r.notes, note) {
				r.notes = append(r.notes, note)
			}
			continue
		}
		urls := []string{}
		var unread []map[string]any
		var notRead strings.Builder
		for _, p := range pages {
			if p.Err != "" || p.Text == "" {
				reason := cmp.Or(p.Err, "the page has no text")
				unread = append(unread, map[string]any{"url": p.URL, "reason": reason})
				fmt.Fprintf(&notRead, "\nnot read: %s (%s)", p.URL, reason)
				r.notes = append(r.notes, fmt.Sprintf("A web page found could not be read: `%s` (%s).", strings.ReplaceAll(p.URL, "`", ""), reason))
				continue
			}
			if seen[p.URL] {
				continue
			}
			seen[p.URL] = true
			d := extract.Document{Path: p.URL, Kind: cmp.Or(p.Kind, "text"), Lines: extract.SplitLines(p.Text), Web: true, Title: p.Title, Retrieved: p.Retrieved}
			if _, err := srcs.Save(sources.FromDocument(d)); err != nil {
				return nil, err
			}
			urls = append(urls, p.URL)
			docs = append(docs, d)
		}
		summary := fmt.Sprintf("%d page(s) read", len(urls)) + notRead.String()
		if err := r.em.Event(ctx, engine.KindToolResult, "web_search", summary, map[string]any{"tool": "web_search", "urls": urls, "not_read": unread}); err != nil {
			return nil, err
		}
	}
	return docs, nil
}
