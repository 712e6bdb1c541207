package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
)

// TestPublicURLSetting: production refuses to serve without RESEARCH_PUBLIC_URL (the agent card and
// every absolute link would otherwise name the bind address), saying which variable to set;
// development keeps the bind address as the default. A given value must be an absolute http(s) URL.
// What starts advertises the public URL in its agent card.
func TestPublicURLSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, env, publicURL string
		refused              string // the error names this; "": serves
		card                 string // the agent card's endpoint ("<addr>": the bound address)
	}{
		{"production without it", "production", "", "RESEARCH_ENV=production needs RESEARCH_PUBLIC_URL", ""},
		{"production with a bare host", "production", "research.example.com", `RESEARCH_PUBLIC_URL="research.example.com"`, ""},
		{"production with a query", "production", "https://research.example.com/?a=1", "RESEARCH_PUBLIC_URL=", ""},
		{"production with it", "production", "https://research.example.com/", "", "https://research.example.com/api/v2/a2a"},
		{"development without it", "development", "", "", "http://<addr>/api/v2/a2a"},
		{"development with another scheme", "development", "ftp://research.example.com", "RESEARCH_PUBLIC_URL=", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, store.SQLite)
			c.env["RESEARCH_ENV"] = tc.env
			c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
			c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
			c.env["RESEARCH_ALLOW_DEV_ISSUER"] = "true"
			if tc.publicURL != "" {
				c.env["RESEARCH_PUBLIC_URL"] = tc.publicURL
			}
			if tc.refused != "" {
				var out, errOut bytes.Buffer
				err := run(context.Background(), []string{"serve"}, c.getenv, &out, &errOut)
				require.ErrorContains(t, err, tc.refused)
				require.Empty(t, out.String(), "nothing was bootstrapped")
				return
			}
			_, addr, stop := startServe(t, c)
			t.Cleanup(func() { _ = stop() })
			res, err := http.Get("http://" + addr + "/.well-known/agent-card.json")
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			_ = res.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
			want := strings.ReplaceAll(tc.card, "<addr>", addr)
			require.Contains(t, string(b), `"url": "`+want+`"`)
		})
	}
}
