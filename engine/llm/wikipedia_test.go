package llm_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/llm"
)

// TestOpenAIReadsWikipedia: the openai engine's fetch_url reads an article of the configured wiki
// through its API (never fetching the page itself), stores it, and its quote verifies.
func TestOpenAIReadsWikipedia(t *testing.T) {
	t.Parallel()
	wiki := enginetest.Wiki(t)
	article := wiki.URL + "/wiki/Halden_ferry"
	repo := enginetest.Workspace(t, nil)
	cs := newChatServer(t,
		toolCalls("", call{"web_search", `{"query":"Halden ferry passengers"}`}, call{"fetch_url", `{"url":"` + article + `"}`}),
		answer("The ferry carries 600 passengers."),
		reportFrom(t, repo, "Halden ferry",
			claimSpec{"It carries 600 passengers.", article, "The Halden ferry carries 600 passengers and 200 cars, and crosses the fjord in 25 minutes."}),
	)
	refuse := &http.Client{Transport: enginetest.RoundTripFunc(func(*http.Request) (*http.Response, error) { panic("fetched a page the provider reads") })}
	e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", FetchClient: refuse, Searcher: enginetest.WikiSearcher(t, wiki.URL)})
	require.NoError(t, err)
	res, sink, err := runAgent(t, e, engine.Input{Workspace: repo, Now: enginetest.Clock})
	require.NoError(t, err)
	results := sink.OfKind(engine.KindToolResult)
	require.Contains(t, results[0].Content, article)
	require.Contains(t, results[1].Content, "] Halden ferry\nURL: "+article)
	require.Contains(t, res.Report, "<"+article+">")
	v, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Equal(t, 1, v.Total)
	require.Equal(t, 1, v.Verified, "%+v", v.Failed)
}
