package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

var keyLine = regexp.MustCompile(`^rsk-[A-Za-z0-9_-]{43}$`)

// cli runs researchd commands against one data folder and database.
type cli struct {
	dataDir, dbURL string
	env            map[string]string
}

func newCLI(t *testing.T, d store.Dialect) *cli {
	dir := t.TempDir()
	c := &cli{dataDir: dir, dbURL: storetest.URL(t, d)}
	// No web search unless a test asks for it: tests reach no network (the default is wikipedia).
	c.env = map[string]string{"RESEARCH_DATA_DIR": dir, "DATABASE_URL": c.dbURL, "RESEARCH_LOG_LEVEL": "warn", "RESEARCH_SEARCH_PROVIDER": "none"}
	return c
}

func (c *cli) getenv(k string) string { return c.env[k] }

func (c *cli) run(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(ctx, args, c.getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

func (c *cli) store(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), c.dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestCLI runs the operator commands in order, as an operator would, on each database.
func TestCLI(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newCLI(t, d)
			const user = "x@example.com"

			_, stderr, err := c.run(ctx, "migrate")
			require.NoError(t, err)
			require.Contains(t, stderr, "migrations applied")

			// keys create prints the key alone on stdout; everything else goes to stderr.
			stdout, stderr, err := c.run(ctx, "keys", "create", "--user", user, "--tier", "pro", "--credits", "5", "--label", "ci")
			require.NoError(t, err, stderr)
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			require.Len(t, lines, 1, "stdout: %q", stdout)
			require.Regexp(t, keyLine, lines[0])
			secret := lines[0]
			require.NotContains(t, stderr, secret)

			st := c.store(t)
			acct, err := st.AccountByEmail(ctx, user)
			require.NoError(t, err)
			require.Equal(t, store.TierPro, acct.Tier)
			require.False(t, acct.IsAdmin)
			balance, err := st.Balance(ctx, acct.ID)
			require.NoError(t, err)
			require.Equal(t, int64(50), balance, "5 credits at 10 cents each")
			keys, err := st.APIKeysByPrefix(ctx, secret[:8])
			require.NoError(t, err)
			require.Len(t, keys, 1)
			require.Equal(t, "ci", *keys[0].Label)
			require.ElementsMatch(t, auth.AllScopes, keys[0].ScopeList())
			require.True(t, auth.HashMatches(secret, keys[0].Hash))

			// A second key for the same account: no second account, credits add up.
			stdout, _, err = c.run(ctx, "keys", "create", "--user", user, "--tier", "pro", "--scopes", "research,billing")
			require.NoError(t, err)
			require.Regexp(t, keyLine, strings.TrimSpace(stdout))
			second, err := st.APIKeysByPrefix(ctx, strings.TrimSpace(stdout)[:8])
			require.NoError(t, err)
			require.Equal(t, []string{"research", "billing"}, second[0].ScopeList())
			require.Equal(t, acct.ID, second[0].AccountID)

			// token prints a JWT that the development issuer in the data folder verifies.
			stdout, _, err = c.run(ctx, "token", "--user", user, "--scopes", "research")
			require.NoError(t, err)
			tok := strings.TrimSpace(stdout)
			require.Len(t, strings.Split(tok, "."), 3, "a JWT: %q", tok)
			dev, err := auth.LoadDevIssuer(c.dataDir)
			require.NoError(t, err)
			claims, err := dev.Verify(ctx, tok)
			require.NoError(t, err)
			require.Equal(t, user, claims.Email)
			require.Equal(t, []string{"research"}, claims.Scopes)

			// credits grant writes one deposit.
			_, stderr, err = c.run(ctx, "credits", "grant", "--user", user, "--amount", "3")
			require.NoError(t, err, stderr)
			balance, err = st.Balance(ctx, acct.ID)
			require.NoError(t, err)
			require.Equal(t, int64(80), balance)
			page, err := st.ListLedger(ctx, acct.ID, "", store.PageRequest{Limit: 10})
			require.NoError(t, err)
			require.Len(t, page.Items, 2)
			newest := page.Items[0]
			require.Equal(t, store.TxDeposit, newest.Type)
			require.Equal(t, int64(30), newest.AmountCents)
			require.Equal(t, int64(80), newest.BalanceAfterCents)
		})
	}
}

// TestCLIRefusesBadInput: every bad invocation is an error and prints nothing on stdout (so a
// script capturing a key never captures garbage), and changes nothing.
func TestCLIRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newCLI(t, d)
			_, _, err := c.run(ctx, "keys", "create", "--user", "known@example.com")
			require.NoError(t, err)

			tests := []struct {
				name string
				args []string
				want string
			}{
				{"unknown command", []string{"frobnicate"}, "unknown command"},
				{"keys without create", []string{"keys"}, "usage"},
				{"keys with another subcommand", []string{"keys", "delete"}, "usage"},
				{"unknown flag", []string{"keys", "create", "--user", "a@example.com", "--bogus"}, "bogus"},
				{"missing user", []string{"keys", "create", "--tier", "pro"}, "--user"},
				{"unknown tier", []string{"keys", "create", "--user", "a@example.com", "--tier", "gold"}, "tier"},
				{"negative credits", []string{"keys", "create", "--user", "a@example.com", "--credits", "-1"}, "credits"},
				{"credits not a number", []string{"keys", "create", "--user", "a@example.com", "--credits", "lots"}, "credits"},
				{"unknown scope", []string{"keys", "create", "--user", "a@example.com", "--scopes", "research,wizardry"}, "wizardry"},
				{"token without user", []string{"token"}, "--user"},
				{"token user not an email", []string{"token", "--user", "bob"}, "--user"},
				{"token unknown scope", []string{"token", "--user", "a@example.com", "--scopes", "root"}, "root"},
				{"token bad ttl", []string{"token", "--user", "a@example.com", "--ttl", "forever"}, "ttl"},
				{"credits without grant", []string{"credits"}, "usage"},
				{"grant to an unknown user", []string{"credits", "grant", "--user", "nobody@example.com", "--amount", "3"}, "no account"},
				{"grant without amount", []string{"credits", "grant", "--user", "known@example.com"}, "amount"},
				{"grant of a negative amount", []string{"credits", "grant", "--user", "known@example.com", "--amount", "-3"}, "amount"},
				{"grant unknown flag", []string{"credits", "grant", "--user", "known@example.com", "--amount", "3", "--force"}, "force"},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					stdout, stderr, err := c.run(ctx, tc.args...)
					require.Error(t, err)
					require.Contains(t, err.Error()+stderr, tc.want)
					require.Empty(t, stdout)
				})
			}

			st := c.store(t)
			n, err := st.CountAccounts(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "refused commands create no accounts")
			acct, err := st.AccountByEmail(ctx, "known@example.com")
			require.NoError(t, err)
			page, err := st.ListLedger(ctx, acct.ID, "", store.PageRequest{Limit: 10})
			require.NoError(t, err)
			require.Empty(t, page.Items, "refused grants write nothing")
		})
	}
}

func TestBadConfigurationIsAnError(t *testing.T) {
	t.Parallel()
	tests := map[string]map[string]string{
		"unknown environment":         {"RESEARCH_ENV": "staging"},
		"unknown engine":              {"RESEARCH_ENGINE": "magic"},
		"body limit":                  {"RESEARCH_MAX_BODY_BYTES": "-5"},
		"issuer without JWKS":         {"RESEARCH_OAUTH_ISSUER": "https://issuer.example"},
		"issuer without audience":     {"RESEARCH_OAUTH_ISSUER": "https://issuer.example", "RESEARCH_OAUTH_JWKS_URL": "https://issuer.example/jwks"},
		"audience without issuer":     {"RESEARCH_OAUTH_AUDIENCE": "researchd"},
		"allow dev issuer not a bool": {"RESEARCH_ALLOW_DEV_ISSUER": "sure"},
		"bad database URL":            {"DATABASE_URL": "mysql://localhost/db"},
		"bad authoring rate":          {"RESEARCH_AUTHORING_RATE": "lots"},
		"bad workflow authoring":      {"RESEARCH_WORKFLOW_AUTHORING": "maybe"},
		"bad MCP server":              {"RESEARCH_MCP_SERVERS": "sec=ftp://mcp.example"},
		"unknown search provider":     {"RESEARCH_SEARCH_PROVIDER": "bing"},
		"searxng without a URL":       {"RESEARCH_SEARCH_PROVIDER": "searxng"},
		"brave without a key":         {"RESEARCH_SEARCH_PROVIDER": "brave"},
	}
	for name, env := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env["RESEARCH_DATA_DIR"] = t.TempDir()
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, &out, &errOut)
			require.Error(t, err)
			require.Empty(t, out.String())
		})
	}
}

// TestServe starts the server twice on one database: the first start on an empty database creates
// the development account and prints its key once, the second does not; cancelling the context
// shuts the server down cleanly.
func TestServe(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, d)
			c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
			c.env["RESEARCH_LOG_LEVEL"] = "info"

			// First start: one key, and it works.
			stdout, addr, stop := startServe(t, c)
			keys := regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`).FindAllString(stdout(), -1)
			require.Len(t, uniq(keys), 1, "the development key is printed: %s", stdout())
			res, err := http.Get("http://" + addr + "/healthz")
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			req, err := http.NewRequest("GET", "http://"+addr+"/api/v2/keys", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+keys[0])
			res, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.NoError(t, stop(), "graceful shutdown returns nil")
			_, err = http.Get("http://" + addr + "/healthz")
			require.Error(t, err, "nothing listens after shutdown")

			st := c.store(t)
			acct, err := st.AccountByEmail(context.Background(), "dev@localhost")
			require.NoError(t, err)
			require.Equal(t, store.TierEnterprise, acct.Tier)
			require.True(t, acct.IsAdmin)

			// Second start on the same database: no new account, no key printed.
			stdout, _, stop = startServe(t, c)
			require.NoError(t, stop())
			require.NotContains(t, stdout(), "rsk-")
			n, err := st.CountAccounts(context.Background())
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		})
	}
}

// startServe runs `researchd serve` until the returned stop is called; it waits for the "listening"
// log line and returns the bound address and the output so far.
func startServe(t *testing.T, c *cli) (stdout func() string, addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, c.getenv, out, errOut) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })

	for addr == "" {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("serve exited early: %v\nstderr: %s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		for _, line := range strings.Split(errOut.String(), "\n") {
			var entry struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "researchd listening" {
				addr = entry.Addr
			}
		}
	}
	require.False(t, strings.HasSuffix(addr, ":0"), "the log names the bound port, not the configured :0")
	return out.String, addr, stop
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// TestKeysCreateWritesAllOrNothing: a key that cannot be created leaves no account and no credits
// behind, so running the command again does not grant twice.
func TestKeysCreateWritesAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newCLI(t, d)
			const user = "label@example.com"
			_, _, err := c.run(ctx, "migrate")
			require.NoError(t, err)
			_, _, err = c.run(ctx, "keys", "create", "--user", user, "--credits", "5", "--label", strings.Repeat("x", 101))
			require.ErrorContains(t, err, "--label")
			_, err = c.store(t).AccountByEmail(ctx, user)
			require.ErrorIs(t, err, store.ErrNotFound)

			stdout, stderr, err := c.run(ctx, "keys", "create", "--user", user, "--credits", "5", "--label", strings.Repeat("x", 100))
			require.NoError(t, err, stderr)
			require.Regexp(t, keyLine, strings.TrimSpace(stdout))
			acct, err := c.store(t).AccountByEmail(ctx, user)
			require.NoError(t, err)
			balance, err := c.store(t).Balance(ctx, acct.ID)
			require.NoError(t, err)
			require.EqualValues(t, 50, balance)
		})
	}
}
