package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// WebSearcher is what the extractive engine needs from a web search provider: for a query, up to
// max pages, already fetched through the SSRF guard and reduced to text.
type WebSearcher interface {
	SearchPages(ctx context.Context, query string, max int) ([]WebPage, error)
}

// WebPage is one search result, fetched. A result that could not be read has Err set and no Text.
type WebPage struct {
	URL, Title string
	Kind       string // html, pdf or text: how Text was extracted
	Text       string // extracted text (HTML pages through the same extraction as files)
	Retrieved  time.Time
	Err        string // why the page could not be read (refused by the SSRF guard, HTTP 404, …)
}

// NewWebSearcher is the extractive engine's web search: the provider's results (s), each page
// fetched through fetch (in production the netguard client, which refuses private and loopback
// addresses at dial time and on every redirect) and reduced to text by FetchPage. A provider's
// snippet is never evidence: only a fetched page is read. now stamps retrieval times (nil:
// time.Now).
func NewWebSearcher(s Searcher, fetch *http.Client, now func() time.Time) WebSearcher {
	return &fetchingSearcher{s: s, fetch: fetch, now: now}
}

type fetchingSearcher struct {
	s     Searcher
	fetch *http.Client
	now   func() time.Time
}

func (f *fetchingSearcher) SearchPages(ctx context.Context, query string, max int) ([]WebPage, error) {
	results, err := f.s.Search(ctx, query, max)
	if err != nil {
		return nil, err
	}
	pages := make([]WebPage, 0, len(results))
	for _, res := range results {
		if ctx.Err() != nil {
			break // out of time: the pages read so far still count
		}
		p, err := f.read(ctx, res.URL)
		if err != nil {
			pages = append(pages, WebPage{URL: res.URL, Title: res.Title, Err: err.Error()})
			continue
		}
		title := p.Title
		if title == "" {
			title = res.Title
		}
		pages = append(pages, WebPage{URL: p.URL, Title: title, Kind: p.Kind, Text: p.Text, Retrieved: p.RetrievedAt})
	}
	return pages, nil
}

// read reads a result: through the provider when it reads its own pages (Wikipedia's API), else
// by fetching its URL.
func (f *fetchingSearcher) read(ctx context.Context, raw string) (Page, error) {
	if pr, ok := f.s.(PageReader); ok && pr.Reads(raw) {
		return pr.ReadPage(ctx, raw, f.now)
	}
	return FetchPage(ctx, f.fetch, raw, f.now)
}

// Unreachable says whether err is a search provider that could not be reached (no network, a
// closed port, a name that does not resolve), rather than one that answered with an error.
func Unreachable(err error) bool {
	var se *SearchError
	return errors.As(err, &se) && se.unreachable
}

// searchWeb runs the effort's web searches (one per sub-question, at most depth.Queries) within
// its time budget and returns the pages as documents cited by URL. Every page read is stored under
// sources/ at once (a citation of it points to that copy). Without a searcher it does nothing.
func (r *extractiveRun) searchWeb(ctx context.Context, subs []subQuestion) ([]document, error) {
	if r.web == nil {
		return nil, nil
	}
	srcs, err := r.sources()
	if err != nil {
		return nil, err
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
			if Unreachable(err) {
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
			d := document{Path: p.URL, Kind: cmp.Or(p.Kind, "text"), Lines: splitLines(p.Text), Web: true, Title: p.Title, Retrieved: p.Retrieved}
			if _, err := srcs.Save(docSource(d)); err != nil {
				return nil, err
			}
			urls = append(urls, p.URL)
			docs = append(docs, d)
		}
		summary := fmt.Sprintf("%d page(s) read", len(urls)) + notRead.String()
		if err := r.em.event(ctx, KindToolResult, "web_search", summary, map[string]any{"tool": "web_search", "urls": urls, "not_read": unread}); err != nil {
			return nil, err
		}
	}
	return docs, nil
}
