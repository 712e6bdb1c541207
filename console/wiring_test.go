package console_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/console"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
)

// TestServedByTheServer: the API server serves the console (GET and HEAD) with its CSP, outside the
// API's authentication: the page loads before anyone signs in.
func TestServedByTheServer(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	for _, method := range []string{"GET", "HEAD"} {
		for _, path := range []string{"/console", "/console/", "/console/js/app.js"} {
			r, err := env.Send(servertest.Req{Method: method, Path: path, Token: "rsk-not-a-key"})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, r.Status, "%s %s", method, path)
			require.Equal(t, console.CSP, r.Header.Get("Content-Security-Policy"), "%s %s", method, path)
		}
	}
}
