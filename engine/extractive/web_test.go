package extractive_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/sources"
)

const ferryPage = `<html><head><title>Halden ferry enters service</title></head><body>
<nav><a href="/">Home</a> | <a href="/transport">Transport</a></nav>
<main><h1>Halden ferry enters service</h1>
<p>The new Halden ferry carries 600 passengers and 200 cars, and crosses
the fjord in 25 minutes.</p>
<p>It was built at the Vestvik yard and replaces two older boats.</p></main>
<aside class="newsletter">Subscribe to our newsletter for ferry news.</aside>
<footer>Copyright 2026 Fjord Times</footer></body></html>`

const bakeryPage = `<html><head><title>Bakery of the year</title></head><body><main>
<p>The harbour bakery won the regional prize for its rye bread.</p></main></body></html>`

// webOrigin serves the pages search results point at; /missing answers 404.
func webOrigin(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ferry":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, ferryPage)
		case "/bakery":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, bakeryPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// countingSearx is a scripted SearXNG that records the queries it is sent.
type countingSearx struct {
	mu      sync.Mutex
	queries []string
}

func (c *countingSearx) server(t *testing.T, status int, results ...map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "json", r.URL.Query().Get("format"))
		c.mu.Lock()
		c.queries = append(c.queries, r.URL.Query().Get("q"))
		c.mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "engine overloaded", status)
			return
		}
		enginetest.WriteJSON(w, http.StatusOK, map[string]any{"query": r.URL.Query().Get("q"), "results": results})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (c *countingSearx) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.queries...)
}

// TestExtractiveWebSearch: with a search provider, the extractive engine searches the web for its
// sub-questions (as many as the effort allows), reads each result's page without its chrome, stores
// every page it read under sources/, and quotes the page that answers, cited by URL; every
// citation verifies against the stored copy. A result that cannot be fetched is named, not read.
func TestExtractiveWebSearch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		effort  string
		queries int
		note    bool // the report says web search stopped at the effort's query budget
	}{
		{engine.EffortLow, 1, true},
		{engine.EffortMedium, 2, false},
	} {
		t.Run(tt.effort, func(t *testing.T) {
			t.Parallel()
			origin := webOrigin(t)
			searx := &countingSearx{}
			srv := searx.server(t, http.StatusOK,
				map[string]any{"url": origin.URL + "/ferry", "title": "Ferry", "content": "600 passengers"},
				map[string]any{"url": origin.URL + "/missing", "title": "Gone", "content": "ferry"},
				map[string]any{"url": origin.URL + "/bakery", "title": "Bakery", "content": "bread"})
			s, err := sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchSearXNG, URL: srv.URL})
			require.NoError(t, err)
			repo := enginetest.Workspace(t, nil)
			sink := &enginetest.Sink{Repo: repo}
			eng := extractive.New(extractive.Options{Web: sources.NewWebSearcher(s, origin.Client(), enginetest.Clock)})
			q := "How many passengers does the Halden ferry carry, and where was the Halden ferry built?"
			res, err := eng.Run(context.Background(), engine.Input{Question: q, Effort: tt.effort, Workspace: repo, Now: enginetest.Clock}, sink)
			require.NoError(t, err)
			require.False(t, res.NoSources)

			require.Len(t, searx.sent(), tt.queries)
			require.Contains(t, searx.sent()[0], "passengers")
			answer := section(res.Report, "Answer")
			require.Contains(t, answer, "“The new Halden ferry carries 600 passengers and 200 cars, and crosses the fjord in 25 minutes.” [1]")
			require.Contains(t, section(res.Report, "Sources"),
				"1. `"+origin.URL+"/ferry`, line 3, “Halden ferry enters service”, retrieved 2026-05-14 (text extracted from HTML)")
			require.NotContains(t, res.Report, "bakery", "an off-topic page is read, not quoted")
			if tt.note {
				require.Contains(t, res.Report, "Web search ran for the first 1 sub-question(s) only (effort low).")
			} else {
				require.Contains(t, answer, "Vestvik yard")
			}

			// Every page read is stored, chrome left out; the page that failed is named in the timeline.
			srcs, err := sources.Open(repo, nil)
			require.NoError(t, err)
			var origins []string
			for _, st := range srcs.All() {
				origins = append(origins, st.Origin)
				require.Equal(t, sources.KindWeb, st.Kind)
				require.Equal(t, enginetest.Clock(), st.RetrievedAt)
			}
			require.Equal(t, []string{origin.URL + "/ferry", origin.URL + "/bakery"}, origins)
			ferry, ok := srcs.Lookup(origin.URL + "/ferry")
			require.True(t, ok)
			require.Equal(t, "Halden ferry enters service", ferry.Title)
			text, err := srcs.Text(ferry)
			require.NoError(t, err)
			require.Contains(t, text, "carries 600 passengers")
			for _, chrome := range []string{"newsletter", "Copyright", "Transport"} {
				require.NotContains(t, text, chrome)
			}
			var results []string
			for _, e := range sink.OfKind(engine.KindToolResult) {
				if e.Title == "web_search" {
					results = append(results, e.Content)
				}
			}
			require.Len(t, results, tt.queries)
			require.Contains(t, results[0], "not read: "+origin.URL+"/missing (HTTP 404)")
			require.Contains(t, section(res.Report, "Limitations"), "A web page found could not be read: `"+origin.URL+"/missing` (HTTP 404).")

			// The runner's verification finds every quote in the stored pages.
			v, err := citations.VerifyWorkspace(repo, nil)
			require.NoError(t, err)
			require.Positive(t, v.Total)
			require.Equal(t, v.Total, v.Verified, "%+v", v.Failed)
		})
	}
}

// TestExtractiveWebSearchFails: a provider that fails costs the run its web evidence only. With no
// other source the run is not a no-sources run (a search was configured and tried): it reports the
// failure and that the question is unanswered.
func TestExtractiveWebSearchFails(t *testing.T) {
	t.Parallel()
	searx := &countingSearx{}
	srv := searx.server(t, http.StatusServiceUnavailable)
	s, err := sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchSearXNG, URL: srv.URL})
	require.NoError(t, err)
	repo := enginetest.Workspace(t, map[string][]byte{"ferry.txt": []byte("The Halden ferry was built at the Vestvik yard.\n")})
	eng := extractive.New(extractive.Options{Web: sources.NewWebSearcher(s, http.DefaultClient, enginetest.Clock)})
	res, err := eng.Run(context.Background(), engine.Input{Question: "Where was the Halden ferry built?", Effort: engine.EffortLow, Workspace: repo}, &enginetest.Sink{Repo: repo})
	require.NoError(t, err)
	require.Len(t, searx.sent(), 1)
	require.False(t, res.NoSources)
	require.Contains(t, section(res.Report, "Answer"), "Vestvik yard")
	require.True(t, strings.Contains(res.Report, "A web search failed: searxng search: HTTP 503"), res.Report)
}

// TestExtractiveStoresWhatItRead: every document the run read closely is stored under sources/,
// the cited ones first; one it read but did not quote is stored too (sources/ is what the run read).
func TestExtractiveStoresWhatItRead(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{
		"ferry.txt":     []byte("The new Halden ferry carries 600 passengers and 200 cars.\n"),
		"timetable.txt": []byte("Passengers on the Halden ferry can read the timetable online.\n"),
		"bakery.txt":    []byte("The bakery sells rye bread.\n"),
	})
	r := runOffline(t, engine.Input{Question: "How many passengers does the Halden ferry carry?", Effort: engine.EffortLow, Workspace: repo}, "")
	require.Contains(t, section(r.res.Report, "Answer"), "600 passengers")
	require.NotContains(t, r.res.Report, "timetable")
	srcs, err := sources.Open(repo, nil)
	require.NoError(t, err)
	var origins []string
	for _, st := range srcs.All() {
		origins = append(origins, st.Origin)
		require.Equal(t, sources.KindFile, st.Kind)
	}
	require.Equal(t, []string{"input_files/ferry.txt", "input_files/timetable.txt"}, origins)
}
