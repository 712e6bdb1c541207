package extractive_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/sources"
)

// TestExtractiveWikipedia: with only a question and the wikipedia provider, the extractive engine
// answers from the article it read, stored under sources/ with its title, URL and retrieval time,
// and every quote verifies against the stored copy.
func TestExtractiveWikipedia(t *testing.T) {
	t.Parallel()
	wiki := enginetest.Wiki(t)
	repo := enginetest.Workspace(t, nil)
	sink := &enginetest.Sink{Repo: repo}
	// The article is read through the wiki's API, never fetched: the fetch client refuses everything.
	refuse := &http.Client{Transport: enginetest.RoundTripFunc(func(*http.Request) (*http.Response, error) { panic("fetched a page the provider reads") })}
	eng := extractive.New(extractive.Options{Web: sources.NewWebSearcher(enginetest.WikiSearcher(t, wiki.URL), refuse, enginetest.Clock)})
	res, err := eng.Run(context.Background(), engine.Input{Question: "How many passengers does the Halden ferry carry?", Effort: engine.EffortLow, Workspace: repo, Now: enginetest.Clock}, sink)
	require.NoError(t, err)
	require.False(t, res.NoSources)
	article := wiki.URL + "/wiki/Halden_ferry"
	require.Contains(t, section(res.Report, "Answer"), "600 passengers")
	require.Contains(t, section(res.Report, "Sources"), "`"+article+"`")

	srcs, err := sources.Open(repo, nil)
	require.NoError(t, err)
	st, ok := srcs.Lookup(article)
	require.True(t, ok, "%+v", srcs.All())
	require.Equal(t, sources.KindWeb, st.Kind)
	require.Equal(t, "Halden ferry", st.Title)
	require.Equal(t, enginetest.Clock(), st.RetrievedAt)
	v, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Positive(t, v.Total)
	require.Equal(t, v.Total, v.Verified, "%+v", v.Failed)
}

// TestExtractiveSearchUnreachable: a provider that cannot be reached is tried once, said once (in
// the timeline and the report's Limitations), and the run goes on with its other sources at once.
func TestExtractiveSearchUnreachable(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{"ferry.txt": []byte("The Halden ferry was built at the Vestvik yard.\n")})
	sink := &enginetest.Sink{Repo: repo}
	eng := extractive.New(extractive.Options{Web: sources.NewWebSearcher(enginetest.WikiSearcher(t, enginetest.ClosedURL(t)), http.DefaultClient, enginetest.Clock)})
	start := time.Now()
	// Effort medium searches for two sub-questions: the second is not tried.
	res, err := eng.Run(context.Background(), engine.Input{Question: "Where was the Halden ferry built, and how many passengers does it carry?",
		Effort: engine.EffortMedium, Workspace: repo}, sink)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 2*time.Second)
	require.Contains(t, section(res.Report, "Answer"), "Vestvik yard")
	var calls, results []string
	for _, e := range sink.OfKind(engine.KindToolCall) {
		if e.Title == "web_search" {
			calls = append(calls, e.Content)
		}
	}
	for _, e := range sink.OfKind(engine.KindToolResult) {
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
