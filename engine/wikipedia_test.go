package engine_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/wikitest"
)

const wikiUA = "researchd/test (https://github.com/researchd/researchd; self-hosted research service)"

// wikiPages is the scripted wiki's content.
var wikiPages = []wikitest.Page{
	{Title: "Halden ferry", Extract: "The Halden ferry is a car ferry on the Halden fjord.\n\n\n== Service ==\nThe Halden ferry carries 600 passengers and 200 cars, and crosses the fjord in 25 minutes.\n\n\n== History ==\nIt was built at the Vestvik yard in 2025."},
	{Title: "Vestvik yard", Extract: "Vestvik yard is a shipyard that built the Halden ferry."},
	{Title: "AC/DC", Extract: "AC/DC is a rock band."},
}

func newWiki(t *testing.T) *wikitest.Server {
	t.Helper()
	return wikitest.New(t, wikiPages, map[string]string{"Halden Ferry": "Halden ferry"})
}

func wikiSearcher(t *testing.T, url string) engine.Searcher {
	t.Helper()
	s, err := engine.NewSearcher(engine.SearchConfig{Provider: engine.SearchWikipedia, URL: url, UserAgent: wikiUA})
	require.NoError(t, err)
	require.Equal(t, engine.SearchWikipedia, s.Provider())
	return s
}

// TestWikipediaSearch: the search sends a question's content words (then any of them when all of
// them find nothing), with a descriptive User-Agent, and returns article URLs with plain snippets.
// The site may be given with or without its API path.
func TestWikipediaSearch(t *testing.T) {
	t.Parallel()
	wiki := newWiki(t)
	tests := []struct {
		name     string
		base     string
		query    string
		searches []string // srsearch values sent
		want     []string // result URLs
	}{
		{"content words", wiki.URL, "How many passengers are on the Halden ferry?",
			[]string{"passengers Halden ferry"}, []string{wiki.URL + "/wiki/Halden_ferry"}},
		{"any word when all find nothing", wiki.URL + "/", "Halden ferry zeppelin",
			[]string{"Halden ferry zeppelin", "Halden OR ferry OR zeppelin"}, []string{wiki.URL + "/wiki/Halden_ferry", wiki.URL + "/wiki/Vestvik_yard"}},
		{"no hits", wiki.URL + "/w/api.php", "What is a zeppelin?", []string{"zeppelin"}, nil},
		{"title with a slash", wiki.URL, "rock band", []string{"rock band"}, []string{wiki.URL + "/wiki/AC/DC"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(wiki.Requests())
			got, err := wikiSearcher(t, tt.base).Search(context.Background(), tt.query, 5)
			require.NoError(t, err)
			var urls []string
			for _, r := range got {
				urls = append(urls, r.URL)
				require.NotContains(t, r.Snippet, "<span")
				require.Contains(t, r.Snippet, "& more")
			}
			require.Equal(t, tt.want, urls)
			var sent []string
			for _, r := range wiki.Requests()[before:] {
				require.Equal(t, "search", r.Action)
				require.Equal(t, wikiUA, r.UserAgent)
				sent = append(sent, r.Search)
			}
			require.Equal(t, tt.searches, sent)
		})
	}
}

// TestWikipediaReadPage: an article is read as the wiki's plain text through the API (redirects
// followed, sections as Markdown headings), cited by its canonical article URL; only this wiki's
// articles are read this way.
func TestWikipediaReadPage(t *testing.T) {
	t.Parallel()
	wiki := newWiki(t)
	s := wikiSearcher(t, wiki.URL)
	pr, ok := s.(engine.PageReader)
	require.True(t, ok, "the wikipedia provider reads its own pages")
	for raw, want := range map[string]bool{
		wiki.URL + "/wiki/Halden_ferry":                                      true,
		wiki.URL + "/wiki/AC/DC":                                             true,
		wiki.URL + "/other/Halden_ferry":                                     false,
		"https://example.com/wiki/Halden_ferry":                              false,
		strings.Replace(wiki.URL, "http", "https", 1) + "/wiki/Halden_ferry": false,
	} {
		require.Equal(t, want, pr.Reads(raw), raw)
	}

	p, err := pr.ReadPage(context.Background(), wiki.URL+"/wiki/Halden_Ferry", runClock)
	require.NoError(t, err)
	require.Equal(t, wiki.URL+"/wiki/Halden_ferry", p.URL, "the redirect's target is cited")
	require.Equal(t, "Halden ferry", p.Title)
	require.Equal(t, "text", p.Kind)
	require.Equal(t, runClock(), p.RetrievedAt)
	require.Contains(t, p.Text, "\n## Service\nThe Halden ferry carries 600 passengers")
	require.NotContains(t, p.Text, "==")
	last := wiki.Requests()[len(wiki.Requests())-1]
	require.Equal(t, "extracts", last.Action)
	require.Equal(t, "Halden Ferry", last.Titles)
	require.Equal(t, wikiUA, last.UserAgent)

	_, err = pr.ReadPage(context.Background(), wiki.URL+"/wiki/Zeppelin", runClock)
	require.ErrorContains(t, err, `the wiki has no page "Zeppelin"`)
}

// TestWikipediaArticleURL: titles are encoded as MediaWiki encodes them.
func TestWikipediaArticleURL(t *testing.T) {
	t.Parallel()
	wiki := wikitest.New(t, []wikitest.Page{
		{Title: "München", Extract: "x"}, {Title: "AT&T", Extract: "x"}, {Title: "Python (programming language)", Extract: "x"}, {Title: "C++", Extract: "x"},
	}, nil)
	got, err := wikiSearcher(t, wiki.URL).Search(context.Background(), "x", 10)
	require.NoError(t, err)
	var urls []string
	for _, r := range got {
		urls = append(urls, strings.TrimPrefix(r.URL, wiki.URL))
	}
	require.Equal(t, []string{"/wiki/M%C3%BCnchen", "/wiki/AT%26T", "/wiki/Python_(programming_language)", "/wiki/C%2B%2B"}, urls)
	pr := wikiSearcher(t, wiki.URL).(engine.PageReader)
	for _, r := range got {
		p, err := pr.ReadPage(context.Background(), r.URL, nil)
		require.NoError(t, err, r.URL)
		require.Equal(t, r.Title, p.Title)
		require.Equal(t, r.URL, p.URL)
	}
}

func TestWikipediaErrors(t *testing.T) {
	t.Parallel()
	wiki := wikitest.New(t, nil, nil)
	_, err := wikiSearcher(t, wiki.URL).Search(context.Background(), " ", 5)
	var se *engine.SearchError
	require.ErrorAs(t, err, &se)
	require.ErrorContains(t, err, "wikipedia search: HTTP 200: nosrsearch")
	require.False(t, engine.Unreachable(err))

	_, err = wikiSearcher(t, closedURL(t)).Search(context.Background(), "ferry", 5)
	require.ErrorContains(t, err, "could not be reached")
	require.ErrorContains(t, err, "connection refused")
	require.NotContains(t, err.Error(), "srsearch", "the reason, not the request URL")
	require.True(t, engine.Unreachable(err))

	for _, cfg := range []engine.SearchConfig{
		{Provider: engine.SearchWikipedia, Lang: "en gb"},
		{Provider: engine.SearchWikipedia, URL: "ftp://wiki.example"},
	} {
		_, err := engine.NewSearcher(cfg)
		require.Error(t, err, cfg)
	}
	for _, lang := range []string{"", "de", "simple", "zh-yue"} {
		s, err := engine.NewSearcher(engine.SearchConfig{Provider: "Wikipedia", Lang: lang})
		require.NoError(t, err, lang)
		require.NotNil(t, s, lang)
	}
}

// closedURL is a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// TestExtractiveWikipedia: with only a question and the wikipedia provider, the extractive engine
// answers from the article it read, stored under sources/ with its title, URL and retrieval time,
// and every quote verifies against the stored copy.
func TestExtractiveWikipedia(t *testing.T) {
	t.Parallel()
	wiki := newWiki(t)
	repo := newWorkspace(t, nil)
	sink := &recordingSink{repo: repo}
	// The article is read through the wiki's API, never fetched: the fetch client refuses everything.
	refuse := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { panic("fetched a page the provider reads") })}
	eng := engine.NewExtractive(engine.ExtractiveOptions{Web: engine.NewWebSearcher(wikiSearcher(t, wiki.URL), refuse, runClock)})
	res, err := eng.Run(context.Background(), engine.Input{Question: "How many passengers does the Halden ferry carry?", Effort: engine.EffortLow, Workspace: repo, Now: runClock}, sink)
	require.NoError(t, err)
	require.False(t, res.NoSources)
	article := wiki.URL + "/wiki/Halden_ferry"
	require.Contains(t, section(res.Report, "Answer"), "600 passengers")
	require.Contains(t, section(res.Report, "Sources"), "`"+article+"`")

	srcs, err := engine.OpenSources(repo, nil)
	require.NoError(t, err)
	st, ok := srcs.Lookup(article)
	require.True(t, ok, "%+v", srcs.All())
	require.Equal(t, engine.SourceKindWeb, st.Kind)
	require.Equal(t, "Halden ferry", st.Title)
	require.Equal(t, runClock(), st.RetrievedAt)
	v, err := engine.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Positive(t, v.Total)
	require.Equal(t, v.Total, v.Verified, "%+v", v.Failed)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestExtractiveSearchUnreachable: a provider that cannot be reached is tried once, said once (in
// the timeline and the report's Limitations), and the run goes on with its other sources at once.
func TestExtractiveSearchUnreachable(t *testing.T) {
	t.Parallel()
	repo := newWorkspace(t, map[string][]byte{"ferry.txt": []byte("The Halden ferry was built at the Vestvik yard.\n")})
	sink := &recordingSink{repo: repo}
	eng := engine.NewExtractive(engine.ExtractiveOptions{Web: engine.NewWebSearcher(wikiSearcher(t, closedURL(t)), http.DefaultClient, runClock)})
	start := time.Now()
	// Effort medium searches for two sub-questions: the second is not tried.
	res, err := eng.Run(context.Background(), engine.Input{Question: "Where was the Halden ferry built, and how many passengers does it carry?",
		Effort: engine.EffortMedium, Workspace: repo}, sink)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 2*time.Second)
	require.Contains(t, section(res.Report, "Answer"), "Vestvik yard")
	var calls, results []string
	for _, e := range sink.ofKind(engine.KindToolCall) {
		if e.Title == "web_search" {
			calls = append(calls, e.Content)
		}
	}
	for _, e := range sink.ofKind(engine.KindToolResult) {
		if e.Title == "web_search" {
			results = append(results, e.Content)
		}
	}
	require.Len(t, calls, 1)
	require.Len(t, results, 1)
	require.Contains(t, results[0], "could not be reached")
	limits := section(res.Report, "Limitations")
	require.Equal(t, 1, strings.Count(limits, "Web search was not available"), limits)
	require.Contains(t, limits, "so this run used only its other sources")
}

// TestOpenAIReadsWikipedia: the openai engine's fetch_url reads an article of the configured wiki
// through its API (never fetching the page itself), stores it, and its quote verifies.
func TestOpenAIReadsWikipedia(t *testing.T) {
	t.Parallel()
	wiki := newWiki(t)
	article := wiki.URL + "/wiki/Halden_ferry"
	repo := newWorkspace(t, nil)
	cs := newChatServer(t,
		toolCalls("", call{"web_search", `{"query":"Halden ferry passengers"}`}, call{"fetch_url", `{"url":"` + article + `"}`}),
		answer("The ferry carries 600 passengers."),
		reportFrom(t, repo, "Halden ferry",
			claimSpec{"It carries 600 passengers.", article, "The Halden ferry carries 600 passengers and 200 cars, and crosses the fjord in 25 minutes."}),
	)
	refuse := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { panic("fetched a page the provider reads") })}
	e, err := engine.NewOpenAI(engine.OpenAIOptions{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", FetchClient: refuse, Searcher: wikiSearcher(t, wiki.URL)})
	require.NoError(t, err)
	res, sink, err := runAgent(t, e, engine.Input{Workspace: repo, Now: runClock})
	require.NoError(t, err)
	results := sink.ofKind(engine.KindToolResult)
	require.Contains(t, results[0].Content, article)
	require.Contains(t, results[1].Content, "] Halden ferry\nURL: "+article)
	require.Contains(t, res.Report, "<"+article+">")
	v, err := engine.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Equal(t, 1, v.Total)
	require.Equal(t, 1, v.Verified, "%+v", v.Failed)
}
