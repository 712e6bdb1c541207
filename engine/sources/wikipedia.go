package sources

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/researchd/researchd/engine/nlp"
)

// WikipediaBaseURL is the site the wikipedia provider searches by default (lang: the edition).
func WikipediaBaseURL(lang string) string { return "https://" + lang + ".wikipedia.org" }

// wikiLang is a Wikipedia edition's subdomain: en, de, simple, zh-yue, be-tarask.
var wikiLang = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// wikipedia speaks the MediaWiki Action API of a wiki: list=search to find pages, then
// prop=extracts (plain text) to read each one. It needs no key. It reads its own results
// (PageReader): a page is the wiki's plain-text extract, not the HTML of its URL.
type wikipedia struct {
	base string // the site, e.g. https://en.wikipedia.org (no trailing slash)
	api  string // its Action API endpoint, base + /w/api.php
	ua   string
	hc   *http.Client
}

func newWikipedia(raw, lang, ua string, hc *http.Client) (*wikipedia, error) {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if lang == "" {
		lang = "en"
	}
	if !wikiLang.MatchString(lang) {
		return nil, fmt.Errorf("engine: search: %q is not a Wikipedia language edition (RESEARCH_SEARCH_LANG, e.g. en, de, simple)", lang)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = WikipediaBaseURL(lang)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("engine: search: %q is not an http(s) URL", raw)
	}
	u.RawQuery, u.Fragment = "", ""
	// The site's base URL; its API endpoint given in full (…/w/api.php) is accepted too.
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/api.php"), "/w")
	u.Path, u.RawPath = p, ""
	base := strings.TrimRight(u.String(), "/")
	return &wikipedia{base: base, api: base + "/w/api.php", ua: ua, hc: hc}, nil
}

func (*wikipedia) Provider() string { return SearchWikipedia }

// Search runs a full-text search. Wikipedia's search wants every word of the query on a page, so a
// question is first cut to its content words, and when that finds nothing, any of them will do.
func (w *wikipedia) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	n = clampResults(n)
	words := searchWords(query)
	queries := []string{strings.Join(words, " ")}
	if len(words) > 1 {
		queries = append(queries, strings.Join(words, " OR "))
	}
	for _, q := range queries {
		rs, err := w.search(ctx, q, n)
		if err != nil || len(rs) > 0 {
			return rs, err
		}
	}
	return []SearchResult{}, nil
}

func (w *wikipedia) search(ctx context.Context, q string, n int) ([]SearchResult, error) {
	v := url.Values{"action": {"query"}, "list": {"search"}, "srsearch": {q}, "srlimit": {strconv.Itoa(n)}, "srprop": {"snippet"},
		"format": {"json"}, "formatversion": {"2"}}
	var body struct {
		Query struct {
			Search []struct {
				Title   string `json:"title"`
				PageID  int64  `json:"pageid"`
				Snippet string `json:"snippet"`
			} `json:"search"`
		} `json:"query"`
		Error *wikiError `json:"error"`
	}
	if err := w.get(ctx, v, &body); err != nil {
		return nil, err
	}
	if body.Error != nil {
		return nil, body.Error.searchError()
	}
	rs := make([]SearchResult, 0, len(body.Query.Search))
	for _, r := range body.Query.Search {
		if strings.TrimSpace(r.Title) == "" {
			continue
		}
		rs = append(rs, SearchResult{Title: r.Title, URL: w.articleURL(r.Title), Snippet: html.UnescapeString(markup.ReplaceAllString(r.Snippet, ""))})
	}
	return keep(rs, n), nil
}

// Reads says whether raw is an article of this wiki ({base}/wiki/Title).
func (w *wikipedia) Reads(raw string) bool { return w.title(raw) != "" }

// ReadPage reads an article's plain text through the API (prop=extracts), following redirects.
// The page is cited by its article URL.
func (w *wikipedia) ReadPage(ctx context.Context, raw string, now func() time.Time) (Page, error) {
	title := w.title(raw)
	if title == "" {
		return Page{}, fmt.Errorf("%s is not an article of %s", raw, w.base)
	}
	if now == nil {
		now = time.Now
	}
	v := url.Values{"action": {"query"}, "prop": {"extracts"}, "explaintext": {"1"}, "exsectionformat": {"wiki"}, "titles": {title},
		"redirects": {"1"}, "format": {"json"}, "formatversion": {"2"}}
	var body struct {
		Query struct {
			Pages []struct {
				Title   string `json:"title"`
				Missing bool   `json:"missing"`
				Invalid bool   `json:"invalid"`
				Extract string `json:"extract"`
			} `json:"pages"`
		} `json:"query"`
		Error *wikiError `json:"error"`
	}
	if err := w.get(ctx, v, &body); err != nil {
		return Page{}, err
	}
	if body.Error != nil {
		return Page{}, body.Error.searchError()
	}
	if len(body.Query.Pages) == 0 || body.Query.Pages[0].Missing || body.Query.Pages[0].Invalid {
		return Page{}, fmt.Errorf("the wiki has no page %q", title)
	}
	pg := body.Query.Pages[0]
	text := wikiText(pg.Extract)
	if strings.TrimSpace(text) == "" {
		return Page{}, fmt.Errorf("the page %q has no text", pg.Title)
	}
	p := Page{URL: w.articleURL(cmp.Or(pg.Title, title)), Title: cmp.Or(pg.Title, title), ContentType: "text/plain", Kind: "text", Status: http.StatusOK,
		Text: text, RetrievedAt: now().UTC()}
	if len(p.Text) > fetchMaxBytes {
		p.Text, p.Truncated = strings.ToValidUTF8(p.Text[:fetchMaxBytes], ""), true
	}
	return p, nil
}

func (w *wikipedia) get(ctx context.Context, v url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.api+"?"+v.Encode(), nil)
	if err != nil {
		return fmt.Errorf("engine: wikipedia request: %w", err)
	}
	// Wikimedia's User-Agent policy: say who is asking and how to reach them.
	req.Header.Set("User-Agent", w.ua)
	return doSearch(w.hc, req, SearchWikipedia, "", out)
}

// wikiError is the Action API's error answer (it comes with HTTP 200).
type wikiError struct {
	Code string `json:"code"`
	Info string `json:"info"`
}

func (e *wikiError) searchError() error {
	return &SearchError{Provider: SearchWikipedia, Status: http.StatusOK, Message: nlp.Truncate(nlp.Collapse(e.Code+": "+e.Info), 200)}
}

// articleURL is the page's address on the wiki, encoded as MediaWiki encodes it
// (https://en.wikipedia.org/wiki/AC/DC, …/wiki/M%C3%BCnchen).
func (w *wikipedia) articleURL(title string) string {
	var b strings.Builder
	b.WriteString(w.base + "/wiki/")
	for _, c := range []byte(strings.ReplaceAll(strings.TrimSpace(title), " ", "_")) {
		if c < 0x80 && (c == '_' || c == '-' || c == '.' || c == '~' || strings.IndexByte(";@$!*(),/:", c) >= 0 ||
			unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// title is the page title of an article URL of this wiki, "" for any other URL.
func (w *wikipedia) title(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	b, err := url.Parse(w.base)
	if err != nil || !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(u.Host, b.Host) {
		return ""
	}
	t, ok := strings.CutPrefix(u.Path, b.Path+"/wiki/")
	if !ok {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(t, "_", " "))
}

// markup is an HTML tag in a search snippet (<span class="searchmatch">).
var markup = regexp.MustCompile(`<[^>]*>`)

// wikiHeading is a section heading of a plain-text extract ("== History ==").
var wikiHeading = regexp.MustCompile(`^(={2,6})\s*(.*?)\s*={2,6}$`)

// wikiText makes an extract read like the other sources: section headings as Markdown ("## History"),
// so passages open with their section as they do in HTML pages.
func wikiText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if m := wikiHeading.FindStringSubmatch(strings.TrimSpace(l)); m != nil && m[2] != "" {
			lines[i] = strings.Repeat("#", len(m[1])) + " " + m[2]
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// searchStopwords are the words of a question that are not its subject.
var searchStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or of in on at to for from by with about as into over under than then
		is are was were be been being am do does did has have had can could should would will shall may might must
		what which who whom whose when where why how many much it its this that these those there their they them
		i me my we our you your he she his her please tell explain describe give list find show`) {
		m[w] = true
	}
	return m
}()

// searchWords are the content words of a query, in order (the query's own words if it has no other).
func searchWords(q string) []string {
	all := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '\'' && r != '.'
	})
	var words []string
	for _, w := range all {
		w = strings.Trim(w, "-'.")
		if w != "" && !searchStopwords[strings.ToLower(w)] {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return []string{strings.TrimSpace(q)}
	}
	return words
}
