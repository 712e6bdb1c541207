package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// webFixture is the web a run sees: a scripted SearXNG instance and a news site reached through the
// SSRF guard (its public name resolves to a public address that the test dialer routes to a
// loopback server), plus a loopback address the guard must refuse.
type webFixture struct {
	searcher sources.Searcher
	fetch    *http.Client
	page     string // the article's public URL
	internal string // a loopback URL a search result points at
}

const articleHTML = `<html><head><title>Field trial results</title></head><body>
<nav><a href="/">Home</a> | <a href="/energy">Energy</a></nav>
<main><h1>Field trial results</h1>
<p>In the 2024 field trial, the heat pumps reached a seasonal COP of 3.4 across
forty homes.</p>
<p>Installation cost 11,200 euros on average, before grants.</p></main>
<footer>Copyright 2025 News Example</footer></body></html>`

func newWebFixture(t *testing.T) *webFixture {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/energy/field-trial" {
			_, _ = io.WriteString(w, "internal admin page")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, articleHTML)
	}))
	t.Cleanup(origin.Close)
	u, err := url.Parse(origin.URL)
	require.NoError(t, err)
	f := &webFixture{page: "http://news.example:" + u.Port() + "/energy/field-trial", internal: origin.URL + "/admin"}
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": []any{
			map[string]any{"url": f.page, "title": "Field trial results", "content": "heat pumps reached a seasonal COP"},
			map[string]any{"url": f.internal, "title": "Admin", "content": "internal"},
		}})
	}))
	t.Cleanup(searx.Close)
	f.searcher, err = sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchSearXNG, URL: searx.URL})
	require.NoError(t, err)
	res := &testResolver{names: map[string][]netip.Addr{"news.example": {publicAddr}}}
	f.fetch = netguard.NewClient(netguard.Policy{AllowHTTP: true}, 5*time.Second, netguard.WithResolver(res), netguard.WithDialer(&testDialer{origin: u.Host}))
	return f
}

// chatReply is one scripted model answer; it sees the request body.
type chatReply func(body map[string]any) map[string]any

// chatScript is an OpenAI-compatible chat-completions endpoint answering from a script.
type chatScript struct {
	mu      sync.Mutex
	replies []chatReply
	bodies  []map[string]any
}

func (m *chatScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	reply := m.replies[min(len(m.bodies), len(m.replies)-1)]
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	msg := reply(body)
	msg["role"] = "assistant"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func (m *chatScript) requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.bodies...)
}

func callTools(calls ...[2]string) chatReply {
	return func(map[string]any) map[string]any {
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i+1), "type": "function", "function": map[string]any{"name": c[0], "arguments": c[1]}})
		}
		return map[string]any{"content": nil, "tool_calls": tcs}
	}
}

func say(content any) chatReply {
	return func(map[string]any) map[string]any {
		if s, ok := content.(string); ok {
			return map[string]any{"content": s}
		}
		b, _ := json.Marshal(content)
		return map[string]any{"content": string(b)}
	}
}

func cite(source, quote string) map[string]any {
	return map[string]any{"source": source, "quote": quote}
}

// TestResearchOpenAICitationsEndToEnd runs the openai engine through the API against a scripted
// model, a scripted SearXNG and a news site behind the SSRF guard. The model searches, fetches the
// article (its fetch of an internal address is refused), and writes a report with one true quote
// and one invented quote (a changed number) which it keeps after the repair retry; its structured
// output basis also invents a quote. Verification catches both: the report shows the invented
// quote removed and marked, the job detail counts citations {total 4, verified 2}, the unsupported
// field is null with confidence low, and the webhook carries the same.
func TestResearchOpenAICitationsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			web := newWebFixture(t)
			report := map[string]any{"title": "Heat pump field trial", "sections": []any{}, "open_questions": []any{"Maintenance costs."},
				"summary": []any{
					map[string]any{"text": "The trial's heat pumps reached a seasonal COP of 3.4.", "citations": []any{cite("S1", "the heat pumps reached a seasonal COP of 3.4 across forty homes.")}},
					map[string]any{"text": "Installation cost about 9,800 euros.", "citations": []any{cite("S1", "Installation cost 9,800 euros on average, before grants.")}},
				}}
			model := &chatScript{replies: []chatReply{
				callTools([2]string{"web_search", `{"query":"heat pump field trial COP"}`}),
				callTools([2]string{"fetch_url", `{"url":"` + web.page + `"}`}, [2]string{"fetch_url", `{"url":"` + web.internal + `"}`}),
				say("The article gives a COP of 3.4 and installation costs."),
				say(report), say(report), // the model keeps its invented quote after the repair request
				say(map[string]any{"cop": 3.4, "installer": "Nordvarme"}),
				say(map[string]any{
					"cop":       map[string]any{"citations": []any{cite("S1", "reached a seasonal COP of 3.4")}, "confidence": "high"},
					"installer": map[string]any{"citations": []any{cite("S1", "Nordvarme installed every unit.")}, "confidence": "high"},
				}),
			}}
			modelSrv := httptest.NewServer(model)
			t.Cleanup(modelSrv.Close)
			eng, err := llm.New(llm.Options{BaseURL: modelSrv.URL + "/v1", APIKey: "test-key", Model: "test-model",
				FetchClient: web.fetch, Searcher: web.searcher})
			require.NoError(t, err)
			e := newExpertResearchEnv(t, d, eng, nil)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			rc := newReceiver(t, 0)
			schema := map[string]any{"type": "object", "required": []any{"cop"}, "properties": map[string]any{
				"cop": map[string]any{"type": "number"}, "installer": map[string]any{"type": []any{"string", "null"}}}}
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "What seasonal COP did the heat pump field trial reach?", "effort": "low",
				"json_schema": schema, "webhook_url": rc.URL + "/hook"})
			done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)

			// The report: the true quote stands, the invented one is gone and marked.
			md := done.Report.Markdown
			require.Contains(t, md, "> the heat pumps reached a seasonal COP of 3.4 across forty homes.\n>\n> — Field trial results, <"+web.page+"> [1]")
			require.NotContains(t, md, "9,800 euros on average")
			require.Contains(t, md, "> ⚠ Unverified quote removed: it could not be verified against `"+web.page+"` (the quote's words are in the source but its numbers are not). [1]")
			require.Equal(t, gen.CitationCounts{Total: 4, Verified: 2}, done.Citations.MustGet())

			// Structured output: the unsupported field is null, with confidence low and no citation.
			require.Equal(t, map[string]any{"cop": 3.4, "installer": nil}, done.StructuredOutput.MustGet())
			basis := done.StructuredOutputBasis.MustGet()
			require.Equal(t, "high", string(basis["cop"].Confidence))
			require.Equal(t, []gen.BasisCitation{{Source: web.page, Quote: "reached a seasonal COP of 3.4"}}, basis["cop"].Citations)
			require.Equal(t, "low", string(basis["installer"].Confidence))
			require.Empty(t, basis["installer"].Citations)

			// The model was told which quote failed, and saw the guard refuse the internal address.
			reqs := model.requests()
			retry, _ := json.Marshal(reqs[4]["messages"])
			require.Contains(t, string(retry), "is not in S1")
			require.Contains(t, string(retry), "Installation cost 9,800 euros")
			events := e.timeline(t, owner.Key, job.JobId.String())
			var fetches []gen.TimelineEvent
			for _, ev := range events {
				if ev.Kind == gen.TimelineEventKindToolResult && ev.Title == "fetch_url" {
					fetches = append(fetches, ev)
				}
			}
			require.Len(t, fetches, 2)
			var fetched []string
			for _, f := range fetches {
				fetched = append(fetched, f.Content)
			}
			require.Contains(t, strings.Join(fetched, "\n"), "seasonal COP of 3.4")
			require.Contains(t, strings.Join(fetched, "\n"), "destination not allowed")
			ev := eventTitled(events, "Unverified citations removed")
			require.NotNil(t, ev)
			require.Contains(t, ev.Content, "2 of 4 quoted citations were found in their stored sources.")
			require.Contains(t, ev.Content, "Installation cost 9,800 euros on average")
			require.Contains(t, ev.Content, "Nordvarme installed every unit.")
			require.Contains(t, ev.Content, `Structured output field "installer" has no verified citation`)

			// The stored copy every citation points to is a workspace file.
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/sources/index.json", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var index []sources.StoredSource
			require.NoError(t, json.Unmarshal(r.Body, &index))
			require.Len(t, index, 1)
			require.Equal(t, web.page, index[0].Origin)
			require.Equal(t, "Field trial results", index[0].Title)

			// The webhook carries the counts and the basis.
			require.Eventually(t, func() bool { return len(rc.deliveries()) > 0 }, 30*time.Second, 20*time.Millisecond)
			var wb map[string]any
			require.NoError(t, json.Unmarshal(rc.deliveries()[0].body, &wb))
			require.Equal(t, map[string]any{"total": 4.0, "verified": 2.0}, wb["citations"])
			require.Equal(t, "low", wb["structured_output_basis"].(map[string]any)["installer"].(map[string]any)["confidence"])
			require.Equal(t, md, wb["report"].(map[string]any)["markdown"])
		})
	}
}

// A required field that no verified quote supports fails the job, and the error names the field.
func TestResearchOpenAIUnsupportedRequiredFieldFails(t *testing.T) {
	t.Parallel()
	d := storetest.Dialects()[0]
	web := newWebFixture(t)
	model := &chatScript{replies: []chatReply{
		callTools([2]string{"fetch_url", `{"url":"` + web.page + `"}`}),
		say("Notes."),
		say(map[string]any{"title": "Trial", "summary": []any{}, "sections": []any{}, "open_questions": []any{}}),
		say(map[string]any{"cop": 4.1}),
		say(map[string]any{"cop": map[string]any{"citations": []any{cite("S1", "a seasonal COP of 4.1")}, "confidence": "high"}}),
	}}
	modelSrv := httptest.NewServer(model)
	t.Cleanup(modelSrv.Close)
	eng, err := llm.New(llm.Options{BaseURL: modelSrv.URL + "/v1", APIKey: "test-key", Model: "test-model", FetchClient: web.fetch})
	require.NoError(t, err)
	e := newExpertResearchEnv(t, d, eng, nil)
	owner := e.NewAccount(t, store.TierPro, false, 100)
	job := e.mustCreate(t, owner.Key, map[string]any{"question": "What COP did the trial reach?", "effort": "low",
		"json_schema": map[string]any{"type": "object", "required": []any{"cop"}, "properties": map[string]any{"cop": map[string]any{"type": "number"}}}})
	done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
	require.Equal(t, gen.JobStatusFailed, done.Status)
	jerr := done.Error.MustGet()
	require.Equal(t, engine.CodeStructuredOutputInvalid, jerr.Code)
	require.Contains(t, jerr.Message, `required field "cop"`)
	require.False(t, done.Citations.IsSpecified() && !done.Citations.IsNull(), "no counts for a failed run")
	ev := eventTitled(e.timeline(t, owner.Key, job.JobId.String()), "Structured output unsupported")
	require.NotNil(t, ev)
	require.True(t, strings.Contains(ev.Content, `"cop"`))
}

// Every engine's report is verified: the extractive engine's quotes of the job's own files are all
// found in them (hard-wrapped lines, a table), so every citation it writes counts as verified.
func TestResearchOfflineCitationsVerified(t *testing.T) {
	t.Parallel()
	e := newResearchEnv(t, storetest.Dialects()[0])
	owner := e.NewAccount(t, store.TierPro, false, 100)
	var ids []string
	for _, p := range []part{
		{filename: "trial.txt", data: []byte("The 2024 field trial of heat pumps in forty homes measured a seasonal\nCOP of 3.4 on average. Installation cost 11,200 euros per home before\ngrants were paid.\n")},
		{filename: "regions.csv", data: []byte("region,homes,cop\nnorth,18,3.1\nsouth,22,3.6\n")},
	} {
		body, ct := multipartBody(t, p)
		r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		var att struct {
			AttachmentID string `json:"attachment_id"`
		}
		r.JSON(t, &att)
		ids = append(ids, att.AttachmentID)
	}
	job := e.mustCreate(t, owner.Key, map[string]any{"question": "What seasonal COP did the heat pump field trial measure, and what did installation cost?",
		"effort": "medium", "attachment_ids": ids})
	done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
	require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
	c := done.Citations.MustGet()
	require.Positive(t, c.Total, done.Report.Markdown)
	require.Equal(t, c.Total, c.Verified, done.Report.Markdown)
	require.NotContains(t, done.Report.Markdown, "Unverified")
	require.NotNil(t, eventTitled(e.timeline(t, owner.Key, job.JobId.String()), "Citations verified"))
}

// An expert's context files live outside the job's workspace: the extractive engine stores what it
// cites from them under sources/, so those citations verify too.
func TestResearchContextFileCitationsStored(t *testing.T) {
	t.Parallel()
	e := newExpertResearchEnv(t, storetest.Dialects()[0], extractive.New(extractive.Options{}), nil)
	owner := e.NewAccount(t, store.TierPro, false, 100)
	_, slug := e.createExpert(t, owner.Key, map[string]any{"name": "Fjord Ferry Analyst", "system_prompt": "You analyse ferry fleets.",
		"context_files": []map[string]any{{"name": "fjord-notes.md", "content": fjordNotes}}})
	job := e.mustCreate(t, owner.Key, map[string]any{"question": "How many ferries in the Vestland fjord fleet were converted to battery power?",
		"expert_id": slug, "effort": "low"})
	done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
	require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
	require.Contains(t, done.Report.Markdown, "context/fjord-notes.md")
	c := done.Citations.MustGet()
	require.Positive(t, c.Total, done.Report.Markdown)
	require.Equal(t, c.Total, c.Verified, done.Report.Markdown)
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/sources/index.json", Token: owner.Key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), `"origin": "context/fjord-notes.md"`)
}
