package sources

import (
	"context"
	"errors"
	"net/http"
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
