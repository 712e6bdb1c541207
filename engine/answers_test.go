package engine

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnswerSessionSharesItsIndex: one extractive session answering many assignments, repeated and
// concurrently (its corpus indexed once, its searches remembered), answers each exactly as a fresh
// session would; extra sources are searched for their answer only.
func TestAnswerSessionSharesItsIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"acme.md":    "# Acme Corp\n\nAcme Corp employs 120 people. Acme Corp publishes a SOC 2 Type II report on its trust center.\n",
		"globex.md":  "# Globex Ltd\n\nGlobex Ltd employs 80 people. Globex Ltd does not publish a SOC 2 report.\n",
		"initech.md": "# Initech GmbH\n\nInitech GmbH employs 45 people and sells heat pumps in Essen.\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	answers := Answers(NewExtractive(ExtractiveOptions{CorpusDir: dir}), t.TempDir())
	cfg := AnswerConfig{Effort: EffortMedium, JSONSchema: map[string]any{"type": "object", "properties": map[string]any{
		"employees": map[string]any{"type": "integer"}, "summary": map[string]any{"type": "string"}}}}
	questions := []string{
		"How many people does the company employ?\n\nRecord:\ncompany: Acme Corp",
		"How many people does the company employ?\n\nRecord:\ncompany: Globex Ltd",
		"How many people does the company employ?\n\nRecord:\ncompany: Initech GmbH",
		"Does Globex Ltd publish a SOC 2 report?",
	}
	fresh := make([]Result, len(questions))
	for i, q := range questions {
		s, err := answers.OpenAnswers(ctx, cfg)
		require.NoError(t, err)
		fresh[i], err = s.Answer(ctx, q, nil)
		require.NoError(t, err)
		require.NotEmpty(t, fresh[i].Report)
	}

	require.NotEqual(t, fresh[0], fresh[1], "the records' answers differ: a search keyed too loosely would show")

	shared, err := answers.OpenAnswers(ctx, cfg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]Result, 3*len(questions))
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = shared.Answer(ctx, questions[i%len(questions)], nil) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		require.Equal(t, fresh[i%len(questions)], got[i], questions[i%len(questions)])
	}

	// A source given for one answer is searched for it, and not for the next.
	extra := []SourceFile{{Name: "hooli.md", Data: []byte("# Hooli\n\nHooli employs 3000 people in Palo Alto.\n")}}
	with, err := shared.Answer(ctx, "How many people does Hooli employ?", extra)
	require.NoError(t, err)
	require.Contains(t, with.Report, "3000")
	without, err := shared.Answer(ctx, "How many people does Hooli employ?", nil)
	require.NoError(t, err)
	require.NotContains(t, without.Report, "3000")
}
