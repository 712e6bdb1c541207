package batch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/jobs"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 400)
	for _, tc := range []struct {
		name, md, headline, excerpt string
	}{
		{"summary section wins",
			"# Heat pumps\n\n_Extractive report · effort low_\n\n## Summary\n\nThe EU market was worth **EUR 14 billion** in 2024 [1]. Sales fell.\nMore detail [2].\n\n## Sources\n\n1. x\n",
			"The EU market was worth EUR 14 billion in 2024.", "The EU market was worth EUR 14 billion in 2024. Sales fell. More detail."},
		{"first prose paragraph otherwise",
			"# Title\n\n> a quote\n\nPlain answer with a [link](https://example.com) and `code`!\n\nSecond paragraph.\n",
			"Plain answer with a link and code!", "Plain answer with a link and code!"},
		{"list items", "## Answer\n\n- **Paris** is the capital.\n- It is large.\n", "Paris is the capital.", "Paris is the capital. It is large."},
		{"code fences skipped", "```\nnot this\n```\n\nThis one.\n", "This one.", "This one."},
		{"nothing", "# Only a title\n", "", ""},
	} {
		h, e := Summarize(tc.md)
		require.Equal(t, tc.headline, h, tc.name)
		require.Equal(t, tc.excerpt, e, tc.name)
	}
	h, e := Summarize("## Summary\n\n" + long)
	require.LessOrEqual(t, len([]rune(h)), HeadlineMax)
	require.LessOrEqual(t, len([]rune(e)), ExcerptMax)
	require.True(t, strings.HasSuffix(e, "…"))
}

func TestRowErrorCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ status, job, want string }{
		{jobs.Cancelled, "", CodeCancelled},
		{jobs.Failed, "insufficient_credits", CodeQuotaExhausted},
		{jobs.Failed, "timed_out", CodeTimedOut},
		{jobs.Failed, "structured_output_invalid", CodeSchemaUnsatisfied},
		{jobs.Failed, "invalid_json_schema", CodeSchemaUnsatisfied},
		{jobs.Failed, "internal_error", CodeDispatchError},
		{jobs.Failed, "expert_unavailable", CodeDispatchError},
		{jobs.Failed, "forbidden", CodeForbidden},
		{jobs.Failed, "engine_error", CodeEngineError},
		{jobs.Failed, "provider_error", CodeEngineError},
		{jobs.Blocked, "", CodeEngineError},
	} {
		require.Equal(t, tc.want, rowErrorCode(tc.status, tc.job), "%s/%s", tc.status, tc.job)
	}
}
