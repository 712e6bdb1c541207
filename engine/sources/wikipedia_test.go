package sources_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/engine/wikitest"
)

// TestWikipediaSearch: the search sends a question's content words (then any of them when all of
// them find nothing), with a descriptive User-Agent, and returns article URLs with plain snippets.
// The site may be given with or without its API path.
func TestWikipediaSearch(t *testing.T) {
	t.Parallel()
	wiki := enginetest.Wiki(t)
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
			got, err := enginetest.WikiSearcher(t, tt.base).Search(context.Background(), tt.query, 5)
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
				require.Equal(t, enginetest.WikiUserAgent, r.UserAgent)
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
	wiki := enginetest.Wiki(t)
	s := enginetest.WikiSearcher(t, wiki.URL)
	pr, ok := s.(sources.PageReader)
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

	p, err := pr.ReadPage(context.Background(), wiki.URL+"/wiki/Halden_Ferry", enginetest.Clock)
	require.NoError(t, err)
	require.Equal(t, wiki.URL+"/wiki/Halden_ferry", p.URL, "the redirect's target is cited")
	require.Equal(t, "Halden ferry", p.Title)
	require.Equal(t, "text", p.Kind)
	require.Equal(t, enginetest.Clock(), p.RetrievedAt)
	require.Contains(t, p.Text, "\n## Service\nThe Halden ferry carries 600 passengers")
	require.NotContains(t, p.Text, "==")
	last := wiki.Requests()[len(wiki.Requests())-1]
	require.Equal(t, "extracts", last.Action)
	require.Equal(t, "Halden Ferry", last.Titles)
	require.Equal(t, enginetest.WikiUserAgent, last.UserAgent)

	_, err = pr.ReadPage(context.Background(), wiki.URL+"/wiki/Zeppelin", enginetest.Clock)
	require.ErrorContains(t, err, `the wiki has no page "Zeppelin"`)
}

// TestWikipediaArticleURL: titles are encoded as MediaWiki encodes them.
func TestWikipediaArticleURL(t *testing.T) {
	t.Parallel()
	wiki := wikitest.New(t, []wikitest.Page{
		{Title: "München", Extract: "x"}, {Title: "AT&T", Extract: "x"}, {Title: "Python (programming language)", Extract: "x"}, {Title: "C++", Extract: "x"},
	}, nil)
	got, err := enginetest.WikiSearcher(t, wiki.URL).Search(context.Background(), "x", 10)
	require.NoError(t, err)
	var urls []string
	for _, r := range got {
		urls = append(urls, strings.TrimPrefix(r.URL, wiki.URL))
	}
	require.Equal(t, []string{"/wiki/M%C3%BCnchen", "/wiki/AT%26T", "/wiki/Python_(programming_language)", "/wiki/C%2B%2B"}, urls)
	pr := enginetest.WikiSearcher(t, wiki.URL).(sources.PageReader)
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
	_, err := enginetest.WikiSearcher(t, wiki.URL).Search(context.Background(), " ", 5)
	var se *sources.SearchError
	require.ErrorAs(t, err, &se)
	require.ErrorContains(t, err, "wikipedia search: HTTP 200: nosrsearch")
	require.False(t, sources.Unreachable(err))

	_, err = enginetest.WikiSearcher(t, enginetest.ClosedURL(t)).Search(context.Background(), "ferry", 5)
	require.ErrorContains(t, err, "could not be reached")
	require.ErrorContains(t, err, "connection refused")
	require.NotContains(t, err.Error(), "srsearch", "the reason, not the request URL")
	require.True(t, sources.Unreachable(err))

	for _, cfg := range []sources.SearchConfig{
		{Provider: sources.SearchWikipedia, Lang: "en gb"},
		{Provider: sources.SearchWikipedia, URL: "ftp://wiki.example"},
	} {
		_, err := sources.NewSearcher(cfg)
		require.Error(t, err, cfg)
	}
	for _, lang := range []string{"", "de", "simple", "zh-yue"} {
		s, err := sources.NewSearcher(sources.SearchConfig{Provider: "Wikipedia", Lang: lang})
		require.NoError(t, err, lang)
		require.NotNil(t, s, lang)
	}
}
