package enginetest

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/engine/wikitest"
)

// WikiUserAgent is the User-Agent the wiki searcher sends.
const WikiUserAgent = "researchd/test (https://github.com/researchd/researchd; self-hosted research service)"

// WikiPages is the scripted wiki's content.
var WikiPages = []wikitest.Page{
	{Title: "Halden ferry", Extract: "The Halden ferry is a car ferry on the Halden fjord.\n\n\n== Service ==\nThe Halden ferry carries 600 passengers and 200 cars, and crosses the fjord in 25 minutes.\n\n\n== History ==\nIt was built at the Vestvik yard in 2025."},
	{Title: "Vestvik yard", Extract: "Vestvik yard is a shipyard that built the Halden ferry."},
	{Title: "AC/DC", Extract: "AC/DC is a rock band."},
}

// Wiki starts the scripted wiki with WikiPages ("Halden Ferry" redirects to "Halden ferry").
func Wiki(t *testing.T) *wikitest.Server {
	t.Helper()
	return wikitest.New(t, WikiPages, map[string]string{"Halden Ferry": "Halden ferry"})
}

// WikiSearcher is the wikipedia search provider over the wiki at url.
func WikiSearcher(t *testing.T, url string) sources.Searcher {
	t.Helper()
	s, err := sources.NewSearcher(sources.SearchConfig{Provider: sources.SearchWikipedia, URL: url, UserAgent: WikiUserAgent})
	require.NoError(t, err)
	require.Equal(t, sources.SearchWikipedia, s.Provider())
	return s
}

// ClosedURL is a loopback address nothing listens on.
func ClosedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// RoundTripFunc is an http.RoundTripper.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
