package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/wikitest"
	"github.com/researchd/researchd/store/storetest"
)

// TestEngineSetting: RESEARCH_ENGINE selects the extractive engine by default, by name and by its
// former name offline (and --help says so); anything else is refused.
func TestEngineSetting(t *testing.T) {
	t.Parallel()
	require.Contains(t, serveHelp, "RESEARCH_ENGINE      extractive (default; offline is an alias)")
	require.Contains(t, serveHelp, "RESEARCH_SEARCH_PROVIDER")
	for _, tt := range []struct{ value, want, wantErr string }{
		{"", extractive.Name, ""},
		{"extractive", extractive.Name, ""},
		{"offline", extractive.Name, ""},
		{"openai", "openai", ""},
		{"magic", "", "want extractive (alias offline) or openai"},
	} {
		cfg, err := loadConfig(func(k string) string {
			if k == "RESEARCH_ENGINE" {
				return tt.value
			}
			return ""
		})
		if tt.wantErr != "" {
			require.ErrorContains(t, err, tt.wantErr)
			continue
		}
		require.NoError(t, err, tt.value)
		require.Equal(t, tt.want, cfg.Engine, tt.value)
		if tt.want == extractive.Name {
			eng, err := newEngine(cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			require.Equal(t, extractive.Name, eng.Name())
		}
	}
}

// TestServeExtractiveSearchesTheWeb: `researchd serve` with the extractive engine (by its alias
// offline) and a SearXNG provider searches the web for a job's question, and fetches the results
// through the SSRF guard, which refuses a result on a loopback address; the job completes and says
// so in its timeline.
func TestServeExtractiveSearchesTheWeb(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "The Halden ferry carries 600 passengers.")
	}))
	t.Cleanup(page.Close)
	var mu sync.Mutex
	var queries []string
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Query().Get("q"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"results": []any{
			map[string]any{"url": page.URL + "/ferry", "title": "Ferry", "content": "600 passengers"},
		}})
	}))
	t.Cleanup(searx.Close)

	c := newCLI(t, storetest.Dialects()[0])
	c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
	c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
	c.env["RESEARCH_ENGINE"] = "offline"
	c.env["RESEARCH_SEARCH_PROVIDER"] = "searxng"
	c.env["RESEARCH_SEARCH_URL"] = searx.URL
	stdout, addr, _ := startServe(t, c)
	key := regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`).FindString(stdout())
	require.NotEmpty(t, key)

	res := call(t, addr, key, "POST", "/api/v2/research", map[string]any{"question": "How many passengers does the Halden ferry carry?", "effort": "low"})
	require.Equal(t, http.StatusAccepted, res.status, string(res.body))
	id := res.field(t, "job_id")
	waitUntil(t, func() bool {
		s := call(t, addr, key, "GET", "/api/v2/research/"+id, nil).field(t, "status")
		return s == "completed" || s == "failed"
	})
	job := call(t, addr, key, "GET", "/api/v2/research/"+id, nil)
	require.Equal(t, "completed", job.field(t, "status"), string(job.body))

	mu.Lock()
	require.Equal(t, []string{"How many passengers does the Halden ferry carry?"}, queries)
	mu.Unlock()
	tl := call(t, addr, key, "GET", "/api/v2/research/"+id+"/timeline", nil)
	require.Equal(t, http.StatusOK, tl.status, string(tl.body))
	var events struct {
		Items []struct{ Kind, Title, Content string } `json:"items"`
	}
	require.NoError(t, json.Unmarshal(tl.body, &events))
	var results []string
	for _, e := range events.Items {
		if e.Kind == "tool_result" && e.Title == "web_search" {
			results = append(results, e.Content)
		}
	}
	require.Len(t, results, 1, string(tl.body))
	require.Contains(t, results[0], "0 page(s) read")
	require.Contains(t, results[0], "not read: "+page.URL+"/ferry")
	require.Contains(t, results[0], "destination not allowed")
	require.Contains(t, string(job.body), "A web page found could not be read: `"+page.URL+"/ferry`", "the report names the page it could not read")
	require.False(t, strings.Contains(string(job.body), "No sources were available"), "a configured search is a source")
}

// TestServeWikipediaByDefault: `researchd serve` with RESEARCH_SEARCH_PROVIDER unset searches
// Wikipedia (here a scripted MediaWiki behind RESEARCH_SEARCH_URL): a job with only a question
// completes with a report citing the article it read, stored under sources/, every quote verified.
// With the wiki unreachable (a closed port) the same job completes at once and says so, once, in its
// timeline and its Limitations.
func TestServeWikipediaByDefault(t *testing.T) {
	t.Parallel()
	wiki := wikitest.New(t, []wikitest.Page{{Title: "Halden ferry",
		Extract: "The Halden ferry is a car ferry.\n\n\n== Service ==\nThe Halden ferry carries 600 passengers and 200 cars."}}, nil)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedURL := "http://" + closed.Addr().String()
	require.NoError(t, closed.Close())
	const question = "How many passengers does the Halden ferry carry?"

	for _, tt := range []struct {
		name, url string
		reachable bool
	}{
		{"scripted wiki", wiki.URL, true},
		{"unreachable", closedURL, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, storetest.Dialects()[0])
			delete(c.env, "RESEARCH_SEARCH_PROVIDER") // the default
			c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
			c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
			c.env["RESEARCH_SEARCH_URL"] = tt.url
			stdout, addr, _ := startServe(t, c)
			key := regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`).FindString(stdout())
			require.NotEmpty(t, key)

			start := time.Now()
			res := call(t, addr, key, "POST", "/api/v2/research", map[string]any{"question": question, "effort": "low"})
			require.Equal(t, http.StatusAccepted, res.status, string(res.body))
			id := res.field(t, "job_id")
			waitUntil(t, func() bool {
				s := call(t, addr, key, "GET", "/api/v2/research/"+id, nil).field(t, "status")
				return s == "completed" || s == "failed"
			})
			var job struct {
				Status    string
				Report    struct{ Markdown string }
				Citations struct{ Total, Verified int }
			}
			got := call(t, addr, key, "GET", "/api/v2/research/"+id, nil)
			require.NoError(t, json.Unmarshal(got.body, &job))
			require.Equal(t, "completed", job.Status, string(got.body))

			tl := call(t, addr, key, "GET", "/api/v2/research/"+id+"/timeline", nil)
			var events struct {
				Items []struct{ Kind, Title, Content string } `json:"items"`
			}
			require.NoError(t, json.Unmarshal(tl.body, &events))
			var results []string
			for _, e := range events.Items {
				if e.Kind == "tool_result" && e.Title == "web_search" {
					results = append(results, e.Content)
				}
			}
			require.Len(t, results, 1, string(tl.body))

			if !tt.reachable {
				require.Less(t, time.Since(start), 30*time.Second, "nothing waits on the network")
				require.Contains(t, results[0], "could not be reached")
				require.Equal(t, 1, strings.Count(job.Report.Markdown, "Web search was not available"), job.Report.Markdown)
				require.Contains(t, job.Report.Markdown, "## Limitations")
				return
			}
			article := wiki.URL + "/wiki/Halden_ferry"
			require.Contains(t, results[0], "1 page(s) read")
			require.Contains(t, job.Report.Markdown, "600 passengers")
			require.Contains(t, job.Report.Markdown, "`"+article+"`")
			require.Positive(t, job.Citations.Total)
			require.Equal(t, job.Citations.Total, job.Citations.Verified)
			for _, r := range wiki.Requests() {
				require.Regexp(t, `^researchd/\S+ \(https://github\.com/researchd/researchd; self-hosted research service\)$`, r.UserAgent)
			}

			idx := call(t, addr, key, "GET", "/api/v2/research/"+id+"/files/sources/index.json", nil)
			require.Equal(t, http.StatusOK, idx.status, string(idx.body))
			var stored []struct {
				Path, Origin, Kind, Title string
				RetrievedAt               time.Time `json:"retrieved_at"`
			}
			require.NoError(t, json.Unmarshal(idx.body, &stored))
			require.Len(t, stored, 1)
			require.Equal(t, article, stored[0].Origin)
			require.Equal(t, "web", stored[0].Kind)
			require.Equal(t, "Halden ferry", stored[0].Title)
			require.WithinDuration(t, time.Now(), stored[0].RetrievedAt, time.Minute)
			page := call(t, addr, key, "GET", "/api/v2/research/"+id+"/files/"+stored[0].Path, nil)
			require.Equal(t, http.StatusOK, page.status)
			require.Contains(t, string(page.body), "## Service\nThe Halden ferry carries 600 passengers")
		})
	}
}
