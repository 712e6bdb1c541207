package sources_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/sources"
)

const searchKey = "search-key-0123456789"

// The three providers, each against a local server that speaks its protocol: what is sent (path,
// query or body, key header) and what is read back.
func TestSearchers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider string
		key      string
		// handle checks the request and answers like the provider does.
		handle func(t *testing.T, w http.ResponseWriter, r *http.Request)
	}{
		{sources.SearchSearXNG, "", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			require.Equal(t, http.MethodGet, r.Method)
			require.Equal(t, "/searx/search", r.URL.Path)
			require.Equal(t, "heat pump cost", r.URL.Query().Get("q"))
			require.Equal(t, "json", r.URL.Query().Get("format"))
			require.Empty(t, r.Header.Get("Authorization"))
			enginetest.WriteJSON(w, 200, map[string]any{"query": "heat pump cost", "number_of_results": 3, "results": []any{
				map[string]any{"url": "https://a.example/heat", "title": "Heat  pumps", "content": "They cost\nmoney.", "engine": "bing", "score": 1.5},
				map[string]any{"url": "https://a.example/heat", "title": "duplicate", "content": "x"},
				map[string]any{"url": "javascript:alert(1)", "title": "bad", "content": "x"},
				map[string]any{"url": "https://b.example/grants", "title": "Grants", "content": "Up to 50%."},
				map[string]any{"url": "https://c.example/more", "title": "More", "content": "cut by n"},
			}, "answers": []any{}, "infoboxes": []any{}})
		}},
		{sources.SearchBrave, searchKey, func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			require.Equal(t, http.MethodGet, r.Method)
			require.Equal(t, "/res/v1/web/search", r.URL.Path)
			require.Equal(t, "heat pump cost", r.URL.Query().Get("q"))
			require.Equal(t, "2", r.URL.Query().Get("count"))
			require.Equal(t, searchKey, r.Header.Get("X-Subscription-Token"))
			enginetest.WriteJSON(w, 200, map[string]any{"type": "search", "web": map[string]any{"type": "search", "results": []any{
				map[string]any{"title": "Heat <strong>pumps</strong>", "url": "https://a.example/heat", "description": "They <strong>cost</strong>\nmoney."},
				map[string]any{"title": "Grants", "url": "https://b.example/grants", "description": "Up to 50%.", "extra_snippets": []any{"x"}},
			}}})
		}},
		{sources.SearchTavily, searchKey, func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			require.Equal(t, http.MethodPost, r.Method)
			require.Equal(t, "/search", r.URL.Path)
			require.Equal(t, "Bearer "+searchKey, r.Header.Get("Authorization"))
			var body map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			require.Equal(t, "heat pump cost", body["query"])
			require.EqualValues(t, 2, body["max_results"])
			enginetest.WriteJSON(w, 200, map[string]any{"query": "heat pump cost", "response_time": 0.4, "results": []any{
				map[string]any{"title": "Heat pumps", "url": "https://a.example/heat", "content": "They cost money.", "score": 0.9},
				map[string]any{"title": "Grants", "url": "https://b.example/grants", "content": "Up to 50%.", "score": 0.8},
			}})
		}},
	}
	want := []sources.SearchResult{
		{Title: "Heat pumps", URL: "https://a.example/heat", Snippet: "They cost money."},
		{Title: "Grants", URL: "https://b.example/grants", Snippet: "Up to 50%."},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.handle(t, w, r) }))
			t.Cleanup(srv.Close)
			base := map[string]string{sources.SearchSearXNG: srv.URL + "/searx/", sources.SearchBrave: srv.URL + "/res/v1/web/search",
				sources.SearchTavily: srv.URL + "/search"}[tt.provider]
			s, err := sources.NewSearcher(sources.SearchConfig{Provider: tt.provider, URL: base, APIKey: tt.key})
			require.NoError(t, err)
			require.Equal(t, tt.provider, s.Provider())
			got, err := s.Search(context.Background(), "heat pump cost", 2)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

func TestSearcherErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider string
		status   int
		body     string
		contains string
	}{
		{"searxng json format disabled", sources.SearchSearXNG, 403, "Forbidden", "searxng search: HTTP 403: Forbidden"},
		{"brave bad key echoed", sources.SearchBrave, 401, `{"error":{"detail":"bad token ` + searchKey + `"}}`, "HTTP 401: {\"error\":{\"detail\":\"bad token [REDACTED]\"}}"},
		{"tavily rate limited", sources.SearchTavily, 429, `{"detail":{"error":"limit"}}`, "tavily search: HTTP 429"},
		{"not json", sources.SearchTavily, 200, `<html>`, "not the provider's JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			s, err := sources.NewSearcher(sources.SearchConfig{Provider: tt.provider, URL: srv.URL, APIKey: searchKey})
			require.NoError(t, err)
			_, err = s.Search(context.Background(), "q", 5)
			var se *sources.SearchError
			require.ErrorAs(t, err, &se)
			require.Contains(t, err.Error(), tt.contains)
			require.NotContains(t, err.Error(), searchKey)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		u := srv.URL
		srv.Close()
		s, err := sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchSearXNG, URL: u, HTTPClient: &http.Client{Timeout: time.Second}})
		require.NoError(t, err)
		_, err = s.Search(context.Background(), "q", 5)
		require.ErrorContains(t, err, "could not be reached")
	})
}

func TestNewSearcherConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg     sources.SearchConfig
		wantNil bool
		err     string
	}{
		{sources.SearchConfig{}, true, ""},
		{sources.SearchConfig{Provider: "none"}, true, ""},
		{sources.SearchConfig{Provider: "searxng"}, false, "RESEARCH_SEARCH_URL"},
		{sources.SearchConfig{Provider: "searxng", URL: "ftp://x"}, false, "not an http(s) URL"},
		{sources.SearchConfig{Provider: "brave"}, false, "RESEARCH_SEARCH_API_KEY"},
		{sources.SearchConfig{Provider: "tavily", APIKey: "k"}, false, ""},
		{sources.SearchConfig{Provider: "bing"}, false, "unknown provider"},
	}
	for _, tt := range tests {
		s, err := sources.NewSearcher(tt.cfg)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, tt.cfg.Provider)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.wantNil, s == nil, tt.cfg.Provider)
	}
}

func TestSourcesStore(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, nil)
	clock := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	s, err := sources.Open(repo, clock)
	require.NoError(t, err)
	a, err := s.Save(sources.Source{Origin: "https://example.com/a/report#top", Kind: sources.KindWeb, Title: "A", Text: "Alpha text."})
	require.NoError(t, err)
	require.Equal(t, "S1", a.ID)
	require.Equal(t, "sources/S1-example-com-a-report.txt", a.Path)
	require.Equal(t, clock(), a.RetrievedAt)
	again, err := s.Save(sources.Source{Origin: "https://example.com/a/report#top", Kind: sources.KindWeb, Text: "Alpha text."})
	require.NoError(t, err)
	require.Equal(t, a, again)
	f, err := s.Save(sources.Source{Origin: "input_files/notes.md", Kind: sources.KindFile, Text: "Notes."})
	require.NoError(t, err)
	require.Equal(t, "S2", f.ID)

	for _, ref := range []string{"S1", "s1", "sources/S1-example-com-a-report.txt", "https://example.com/a/report#top", "HTTPS://EXAMPLE.com/a/report/"} {
		got, ok := s.Lookup(ref)
		require.True(t, ok, ref)
		require.Equal(t, "S1", got.ID, ref)
	}
	_, ok := s.Lookup("https://example.com/other")
	require.False(t, ok)
	text, err := s.Text(f)
	require.NoError(t, err)
	require.Equal(t, "Notes.", text)

	// A later run (a continuation) reopens the store and keeps numbering.
	s2, err := sources.Open(repo, clock)
	require.NoError(t, err)
	require.Len(t, s2.All(), 2)
	c, err := s2.Save(sources.Source{Origin: "https://example.com/a/report#top", Kind: sources.KindWeb, Text: "Changed since."})
	require.NoError(t, err)
	require.Equal(t, "S3", c.ID)
	got, _ := s2.Lookup("https://example.com/a/report")
	require.Equal(t, "S3", got.ID, "the newest copy of an origin wins")
	index, err := enginetest.ReadWorkingFile(repo, sources.IndexPath)
	require.NoError(t, err)
	require.True(t, strings.Contains(index, `"origin": "input_files/notes.md"`))
}
