package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestHelpHasNoSideEffects: --help on every command prints that command's help and exits 0, before
// the configuration is read, the database opened or the port bound.
func TestHelpHasNoSideEffects(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = busy.Close() })
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "researchd migrate"},
		{[]string{"-h"}, "researchd migrate"},
		{[]string{"help"}, "researchd migrate"},
		{[]string{"serve", "--help"}, "Usage: researchd [serve]"},
		{[]string{"serve", "-h"}, "RESEARCH_ADDR"},
		{[]string{"migrate", "--help"}, "Usage: researchd migrate"},
		{[]string{"keys", "--help"}, "--update-account"},
		{[]string{"keys", "create", "--help"}, "--update-account"},
		{[]string{"keys", "create", "--user", "a@example.com", "-h"}, "keys create"},
		{[]string{"token", "--help"}, "--ttl DURATION"},
		{[]string{"credits", "grant", "--help"}, "--amount N"},
		{[]string{"--version"}, "researchd "},
		{[]string{"version"}, "researchd "},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			dataDir := filepath.Join(t.TempDir(), "data")
			env := map[string]string{
				"RESEARCH_DATA_DIR": dataDir,
				"RESEARCH_ADDR":     busy.Addr().String(),
				"RESEARCH_ENV":      "staging", // invalid: help must not read the configuration
			}
			var out, errOut syncBuffer
			err := run(context.Background(), tc.args, func(k string) string { return env[k] }, &out, &errOut)
			require.NoError(t, err)
			require.Contains(t, out.String(), tc.want)
			require.Empty(t, errOut.String())
			require.NoDirExists(t, dataDir, "help creates no data folder or database")
		})
	}
}

// TestFailedStartPrintsNoKey: a start that fails (bad configuration found late, busy port, unwritable
// data folder) creates no development account and prints no key, and its error names the setting.
func TestFailedStartPrintsNoKey(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = busy.Close() })
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			// A regular file where a folder is wanted fails even for root, unlike chmod.
			file := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(file, nil, 0o600))
			tests := []struct {
				name string
				env  map[string]string
				want string
			}{
				{"openai without a model", map[string]string{"RESEARCH_ENGINE": "openai"}, "RESEARCH_MODEL"},
				{"port in use", map[string]string{"RESEARCH_ADDR": busy.Addr().String()}, "RESEARCH_ADDR=" + busy.Addr().String()},
				{"unwritable data folder", map[string]string{"RESEARCH_DATA_DIR": filepath.Join(file, "data")}, filepath.Join(file, "data")},
			}
			c := newCLI(t, d)
			for _, tc := range tests {
				env := map[string]string{"RESEARCH_ADDR": "127.0.0.1:0"}
				for k, v := range c.env {
					env[k] = v
				}
				for k, v := range tc.env {
					env[k] = v
				}
				var out, errOut syncBuffer
				err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, &out, &errOut)
				require.ErrorContains(t, err, tc.want, tc.name)
				require.NotContains(t, out.String(), "rsk-", tc.name)
			}
			st := c.store(t)
			require.NoError(t, st.Migrate(context.Background()))
			n, err := st.CountAccounts(context.Background())
			require.NoError(t, err)
			require.Zero(t, n, "no development account after failed starts")
		})
	}
}

func TestOpenAIEngineNamesItsEndpoint(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logEngine(newLogger(&buf, "info", logFormatAuto), config{Engine: "openai", Model: "gpt-x"})
	require.Contains(t, buf.String(), openAIDefaultEndpoint)
	require.Contains(t, buf.String(), "OPENAI_BASE_URL")
	buf = syncBuffer{}
	logEngine(newLogger(&buf, "info", logFormatAuto), config{Engine: "openai", Model: "m", OpenAIBaseURL: "http://127.0.0.1:11434/v1"})
	require.Contains(t, buf.String(), "http://127.0.0.1:11434/v1")
}

// TestKeysCreateKeepsAnExistingAccount: a new key for an existing account does not change its tier
// or admin flag unless --update-account says so.
func TestKeysCreateKeepsAnExistingAccount(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newCLI(t, d)
			const user = "pro@example.com"
			_, stderr, err := c.run(ctx, "keys", "create", "--user", user, "--tier", "pro", "--admin")
			require.NoError(t, err, stderr)
			check := func(tier string, admin bool) {
				t.Helper()
				acct, err := c.store(t).AccountByEmail(ctx, user)
				require.NoError(t, err)
				require.Equal(t, tier, acct.Tier)
				require.Equal(t, admin, acct.IsAdmin)
			}

			// No --tier or --admin: the account keeps what it has.
			stdout, stderr, err := c.run(ctx, "keys", "create", "--user", user)
			require.NoError(t, err, stderr)
			require.Regexp(t, keyLine, strings.TrimSpace(stdout))
			check(store.TierPro, true)

			// A change is refused, with a message naming the way to make it, and nothing is written.
			for _, args := range [][]string{{"--tier", "free"}, {"--admin=false"}} {
				stdout, _, err = c.run(ctx, append([]string{"keys", "create", "--user", user, "--credits", "5"}, args...)...)
				require.ErrorContains(t, err, "--update-account")
				require.Empty(t, stdout)
				check(store.TierPro, true)
			}
			balance, err := c.store(t).Balance(ctx, mustAccount(t, c, user).ID)
			require.NoError(t, err)
			require.Zero(t, balance, "a refused key deposits nothing")

			// The same value is no change.
			_, stderr, err = c.run(ctx, "keys", "create", "--user", user, "--tier", "pro")
			require.NoError(t, err, stderr)

			_, stderr, err = c.run(ctx, "keys", "create", "--user", user, "--tier", "free", "--admin=false", "--update-account")
			require.NoError(t, err, stderr)
			check(store.TierFree, false)
		})
	}
}

func mustAccount(t *testing.T, c *cli, email string) store.Account {
	t.Helper()
	acct, err := c.store(t).AccountByEmail(context.Background(), email)
	require.NoError(t, err)
	return acct
}

func TestUserMustBeAnEmail(t *testing.T) {
	t.Parallel()
	c := newCLI(t, store.SQLite)
	for _, args := range [][]string{
		{"keys", "create", "--user", "bob"},
		{"keys", "create", "--user", "Bob <bob@example.com>"},
		{"keys", "create", "--user", "bob@"},
		{"token", "--user", "@example.com"},
		{"credits", "grant", "--user", "bob", "--amount", "3"},
	} {
		stdout, _, err := c.run(context.Background(), args...)
		require.ErrorContains(t, err, "not an email address", args)
		require.Empty(t, stdout)
	}
	n, err := c.store(t).CountAccounts(context.Background())
	if err == nil {
		require.Zero(t, n)
	}
}

// TestFlagsHaveTwoDashes: help, usage and flag errors spell every flag --flag, as the commands are
// written; the flag package's single-dash spelling never shows.
func TestFlagsHaveTwoDashes(t *testing.T) {
	t.Parallel()
	singleDash := regexp.MustCompile(`(^|[\s"\[])-[A-Za-z]`)
	for _, args := range [][]string{{"--help"}, {"keys", "--help"}, {"token", "--help"}, {"credits", "grant", "--help"}} {
		var out, errOut syncBuffer
		require.NoError(t, run(context.Background(), args, func(string) string { return "" }, &out, &errOut))
		require.NotRegexp(t, singleDash, out.String(), args)
		require.Contains(t, out.String(), "--", args)
	}
	c := newCLI(t, store.SQLite)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"keys", "create", "--nope"}, "keys create: flag provided but not defined: --nope (see researchd keys --help)"},
		{[]string{"keys", "create", "-credits", "many"}, `keys create: invalid value "many" for flag --credits`},
		{[]string{"token", "--user"}, "token: flag needs an argument: --user (see researchd token --help)"},
		{[]string{"credits", "grant", "--admin"}, "credits grant: flag provided but not defined: --admin"},
	}
	for _, tt := range tests {
		stdout, stderr, err := c.run(context.Background(), tt.args...)
		require.ErrorContains(t, err, tt.want, tt.args)
		require.NotRegexp(t, singleDash, err.Error(), tt.args)
		require.Empty(t, stdout, tt.args)
		require.Empty(t, stderr, "the error is said once, by the caller: %v", tt.args)
	}
}

// TestVersion: researchd --version and researchd version print one line and exit 0, without reading
// the configuration.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		var out, errOut syncBuffer
		err := run(context.Background(), args, func(k string) string { return map[string]string{"RESEARCH_ENV": "staging"}[k] }, &out, &errOut)
		require.NoError(t, err, args)
		require.Regexp(t, `^researchd \S+\n$`, out.String(), args)
		require.Empty(t, errOut.String())
	}
	require.Contains(t, usage, "researchd version")
	require.Regexp(t, `^researchd/\S+ \(https://github\.com/researchd/researchd; self-hosted research service\)$`, userAgent())
}
