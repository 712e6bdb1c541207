// Package wikitest is a scripted MediaWiki for tests: it speaks the part of the Action API the
// wikipedia search provider uses (list=search, prop=extracts) over a fixed set of pages, on
// loopback, and records what it was asked.
package wikitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Page is an article of the scripted wiki: its title and its plain-text extract (sections as
// "== Heading ==", as MediaWiki's explaintext gives them).
type Page struct {
	Title, Extract string
}

// Request is one API call the wiki answered.
type Request struct {
	UserAgent string
	Action    string // "search" (list=search) or "extracts" (prop=extracts)
	Search    string // srsearch
	Titles    string // titles
}

// Server is the scripted wiki; URL is its site (RESEARCH_SEARCH_URL), its API at URL/w/api.php.
type Server struct {
	*httptest.Server
	pages     []Page
	redirects map[string]string
	mu        sync.Mutex
	reqs      []Request
}

// New starts a wiki with pages, closed when t ends. redirects maps a title to the page it redirects to.
func New(t testing.TB, pages []Page, redirects map[string]string) *Server {
	t.Helper()
	s := &Server{pages: pages, redirects: redirects}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests lists the API calls answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.URL.Path != "/w/api.php" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if q.Get("action") != "query" || q.Get("format") != "json" || q.Get("formatversion") != "2" {
		writeJSON(w, map[string]any{"error": map[string]any{"code": "badparams", "info": "want action=query, format=json, formatversion=2"}})
		return
	}
	req := Request{UserAgent: r.Header.Get("User-Agent"), Search: q.Get("srsearch"), Titles: q.Get("titles")}
	switch {
	case q.Get("list") == "search":
		req.Action = "search"
		s.record(req)
		if strings.TrimSpace(req.Search) == "" {
			writeJSON(w, map[string]any{"error": map[string]any{"code": "nosrsearch", "info": "The \"srsearch\" parameter must be set."}})
			return
		}
		hits := []any{}
		for i, p := range s.pages {
			if matches(p, req.Search) {
				hits = append(hits, map[string]any{"ns": 0, "title": p.Title, "pageid": i + 1,
					"snippet": `The <span class="searchmatch">` + firstWords(p.Extract) + `</span> &amp; more`})
			}
		}
		writeJSON(w, map[string]any{"batchcomplete": true, "query": map[string]any{"searchinfo": map[string]any{"totalhits": len(hits)}, "search": hits}})
	case q.Get("prop") == "extracts":
		req.Action = "extracts"
		s.record(req)
		if q.Get("explaintext") == "" {
			writeJSON(w, map[string]any{"error": map[string]any{"code": "badparams", "info": "this wiki only serves explaintext extracts"}})
			return
		}
		title := req.Titles
		if to, ok := s.redirects[title]; ok {
			title = to
		}
		for i, p := range s.pages {
			if p.Title == title {
				writeJSON(w, map[string]any{"batchcomplete": true, "query": map[string]any{
					"pages": []any{map[string]any{"pageid": i + 1, "ns": 0, "title": p.Title, "extract": p.Extract}}}})
				return
			}
		}
		writeJSON(w, map[string]any{"batchcomplete": true, "query": map[string]any{"pages": []any{map[string]any{"ns": 0, "title": title, "missing": true}}}})
	default:
		writeJSON(w, map[string]any{"error": map[string]any{"code": "badparams", "info": "unsupported query"}})
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

// matches is CirrusSearch's rule, roughly: every word on the page, or any of them with OR.
func matches(p Page, search string) bool {
	text := strings.ToLower(p.Title + " " + p.Extract)
	words := strings.Fields(strings.ToLower(search))
	orMode := slices.Contains(words, "or")
	hit := 0
	for _, w := range words {
		if w == "or" {
			continue
		}
		if strings.Contains(text, w) {
			hit++
		} else if !orMode {
			return false
		}
	}
	return hit > 0
}

func firstWords(s string) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(len(f), 4)], " ")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}
