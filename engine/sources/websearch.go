package sources

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/researchd/researchd/engine/nlp"
)

// SearchResult is one hit of a web search. Snippet is the provider's excerpt: it points the way to a
// page but is never evidence (only a fetched, stored page is).
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// Searcher searches the web. It is the one seam between engines and a search provider: the
// operator picks the provider (RESEARCH_SEARCH_PROVIDER), engines only see this interface.
type Searcher interface {
	// Provider names the backend (wikipedia, searxng, brave, tavily) for the timeline.
	Provider() string
	// Search returns at most n results for query, best first.
	Search(ctx context.Context, query string, n int) ([]SearchResult, error)
}

// Search providers (RESEARCH_SEARCH_PROVIDER).
const (
	SearchNone      = "none"
	SearchWikipedia = "wikipedia" // keyless: the MediaWiki Action API of Wikipedia (or another wiki)
	SearchSearXNG   = "searxng"
	SearchBrave     = "brave"
	SearchTavily    = "tavily"
)

// PageReader is a Searcher that reads its own results through its API (Wikipedia: a page's plain
// text), where other providers' results are fetched from their URLs. Engines ask it first for any URL
// it Reads.
type PageReader interface {
	// Reads says whether ReadPage can read raw (a URL of the provider's site).
	Reads(raw string) bool
	// ReadPage reads the page at raw; now stamps its RetrievedAt (nil: time.Now).
	ReadPage(ctx context.Context, raw string, now func() time.Time) (Page, error)
}

// DefaultUserAgent is what the search providers are told the requests come from, unless
// SearchConfig.UserAgent says otherwise (Wikimedia asks for a name and a contact).
const DefaultUserAgent = "researchd (https://github.com/researchd/researchd; self-hosted research service)"

// searchDialTimeout bounds name resolution plus connecting to a provider: a machine without a
// network learns it in about two seconds, not after the run's budget.
const searchDialTimeout = 2 * time.Second

// Default API endpoints of the hosted providers; SearchConfig.URL overrides them (a proxy, a test).
const (
	braveDefaultURL  = "https://api.search.brave.com/res/v1/web/search"
	tavilyDefaultURL = "https://api.tavily.com/search"
)

// searchMaxResults caps n for every provider (Brave and Tavily refuse more than 20).
const searchMaxResults = 20

// searchMaxBody caps a provider's answer.
const searchMaxBody = 4 << 20

// SearchConfig is the operator's choice of search provider.
type SearchConfig struct {
	Provider string // none (or ""), wikipedia, searxng, brave, tavily
	// URL is the SearXNG base URL (required for searxng), the wiki's site for wikipedia (default
	// https://{Lang}.wikipedia.org), or the endpoint of a hosted API (optional: the provider's
	// public endpoint by default).
	URL    string
	Lang   string // wikipedia: the language edition (default en); ignored when URL is set
	APIKey string // required for brave and tavily; never written to events or errors
	// UserAgent names this service to the provider (default DefaultUserAgent).
	UserAgent string
	// HTTPClient talks to the provider (nil: a client with a 30-second timeout that gives up
	// connecting after 2 seconds). The provider is operator-configured, so it is not the
	// SSRF-guarded client: a self-hosted SearXNG usually lives on a private network.
	HTTPClient *http.Client
}

// newSearchClient is the default client for a provider: 30 seconds per request, 2 to resolve and
// connect, the environment's proxy settings.
func newSearchClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: searchDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 5 * time.Second
	tr.ResponseHeaderTimeout = 20 * time.Second
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// NewSearcher builds the configured Searcher; nil (and no error) for provider none.
func NewSearcher(cfg SearchConfig) (Searcher, error) {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = newSearchClient()
	}
	ua := cmp.Or(strings.TrimSpace(cfg.UserAgent), DefaultUserAgent)
	endpoint := func(def string) (string, error) {
		u := strings.TrimSpace(cfg.URL)
		if u == "" {
			u = def
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return "", fmt.Errorf("engine: search: %q is not an http(s) URL", u)
		}
		return u, nil
	}
	p := strings.ToLower(strings.TrimSpace(cfg.Provider))
	switch p {
	case "", SearchNone:
		return nil, nil
	case SearchWikipedia:
		return newWikipedia(cfg.URL, cfg.Lang, ua, hc)
	case SearchSearXNG:
		if strings.TrimSpace(cfg.URL) == "" {
			return nil, errors.New("engine: search: searxng needs the instance's base URL (RESEARCH_SEARCH_URL)")
		}
		u, err := endpoint("")
		if err != nil {
			return nil, err
		}
		return &searxng{base: strings.TrimRight(u, "/"), key: cfg.APIKey, ua: ua, hc: hc}, nil
	case SearchBrave, SearchTavily:
		if strings.TrimSpace(cfg.APIKey) == "" {
			return nil, fmt.Errorf("engine: search: %s needs an API key (RESEARCH_SEARCH_API_KEY)", p)
		}
		def := braveDefaultURL
		if p == SearchTavily {
			def = tavilyDefaultURL
		}
		u, err := endpoint(def)
		if err != nil {
			return nil, err
		}
		if p == SearchBrave {
			return &brave{endpoint: u, key: cfg.APIKey, ua: ua, hc: hc}, nil
		}
		return &tavily{endpoint: u, key: cfg.APIKey, ua: ua, hc: hc}, nil
	}
	return nil, fmt.Errorf("engine: search: unknown provider %q (want wikipedia, none, searxng, brave or tavily)", cfg.Provider)
}

// SearchError is a provider's refusal or failure, safe to show (it never holds the API key).
type SearchError struct {
	Provider string
	Status   int // HTTP status, 0 when the provider could not be reached or answered garbage
	Message  string
	// unreachable: no answer at all (see Unreachable).
	unreachable bool
}

func (e *SearchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s search: HTTP %d: %s", e.Provider, e.Status, e.Message)
	}
	return fmt.Sprintf("%s search: %s", e.Provider, e.Message)
}

func clampResults(n int) int {
	if n <= 0 {
		return 10
	}
	return min(n, searchMaxResults)
}

// doSearch sends req and decodes a JSON answer into out; errors never include the key. The caller
// sets the User-Agent.
func doSearch(hc *http.Client, req *http.Request, provider, key string, out any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return ctxErr
		}
		// The network's reason alone: the request URL (the query) is not part of it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		msg := fmt.Sprintf("the provider (%s) could not be reached: %s", req.URL.Host, nlp.Truncate(err.Error(), 200))
		return &SearchError{Provider: provider, Message: redactKey(msg, key), unreachable: true}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, searchMaxBody))
	if err != nil {
		return &SearchError{Provider: provider, Status: resp.StatusCode, Message: "reading the answer failed"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &SearchError{Provider: provider, Status: resp.StatusCode, Message: redactKey(nlp.Truncate(nlp.Collapse(string(body)), 200), key)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &SearchError{Provider: provider, Status: resp.StatusCode, Message: "the answer is not the provider's JSON"}
	}
	return nil
}

func redactKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// keep drops results without an http(s) URL and duplicates, then cuts to n.
func keep(rs []SearchResult, n int) []SearchResult {
	out := make([]SearchResult, 0, min(len(rs), n))
	seen := map[string]bool{}
	for _, r := range rs {
		u, err := url.Parse(strings.TrimSpace(r.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		out = append(out, SearchResult{Title: nlp.Collapse(r.Title), URL: u.String(), Snippet: nlp.Truncate(nlp.Collapse(r.Snippet), 500)})
		if len(out) == n {
			break
		}
	}
	return out
}

// searxng speaks SearXNG's JSON API: GET {base}/search?q=…&format=json (the instance must list
// json under search.formats in its settings.yml).
type searxng struct {
	base, key, ua string
	hc            *http.Client
}

func (*searxng) Provider() string { return SearchSearXNG }

func (s *searxng) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	n = clampResults(n)
	q := url.Values{"q": {query}, "format": {"json"}, "pageno": {"1"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("engine: searxng request: %w", err)
	}
	if s.key != "" {
		// Instances behind an authenticating proxy; plain SearXNG needs no key.
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	var body contentResults
	req.Header.Set("User-Agent", s.ua)
	if err := doSearch(s.hc, req, SearchSearXNG, s.key, &body); err != nil {
		return nil, err
	}
	return keep(body.results(), n), nil
}

// brave speaks the Brave Search web API: GET …/res/v1/web/search?q=…&count=n with the key in
// X-Subscription-Token.
type brave struct {
	endpoint, key, ua string
	hc                *http.Client
}

func (*brave) Provider() string { return SearchBrave }

func (b *brave) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	n = clampResults(n)
	q := url.Values{"q": {query}, "count": {strconv.Itoa(n)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("engine: brave request: %w", err)
	}
	req.Header.Set("X-Subscription-Token", b.key)
	var body struct {
		Web struct {
			Results []struct {
				Title         string   `json:"title"`
				URL           string   `json:"url"`
				Description   string   `json:"description"`
				ExtraSnippets []string `json:"extra_snippets"`
			} `json:"results"`
		} `json:"web"`
	}
	req.Header.Set("User-Agent", b.ua)
	if err := doSearch(b.hc, req, SearchBrave, b.key, &body); err != nil {
		return nil, err
	}
	rs := make([]SearchResult, len(body.Web.Results))
	for i, r := range body.Web.Results {
		// Brave marks matched words with <strong>; snippets are shown as plain text.
		rs[i] = SearchResult{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description)}
	}
	return keep(rs, n), nil
}

// tavily speaks the Tavily search API: POST {"query", "max_results"} with a bearer key.
type tavily struct {
	endpoint, key, ua string
	hc                *http.Client
}

func (*tavily) Provider() string { return SearchTavily }

func (t *tavily) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	n = clampResults(n)
	payload, err := json.Marshal(map[string]any{"query": query, "max_results": n, "search_depth": "basic"})
	if err != nil {
		return nil, fmt.Errorf("engine: tavily request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("engine: tavily request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	var body contentResults
	req.Header.Set("User-Agent", t.ua)
	if err := doSearch(t.hc, req, SearchTavily, t.key, &body); err != nil {
		return nil, err
	}
	return keep(body.results(), n), nil
}

// contentResults is the answer shape SearXNG and Tavily share: results with a title, a URL and the
// matching content.
type contentResults struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

func (b contentResults) results() []SearchResult {
	rs := make([]SearchResult, len(b.Results))
	for i, r := range b.Results {
		rs[i] = SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content}
	}
	return rs
}

// stripTags removes inline markup (<strong>, <b>) from a provider's title or snippet.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'").Replace(b.String())
}
