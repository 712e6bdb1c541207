package extractive

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
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
	answers := engine.Answers(New(Options{CorpusDir: dir}), t.TempDir())
	cfg := engine.AnswerConfig{Effort: engine.EffortMedium, JSONSchema: map[string]any{"type": "object", "properties": map[string]any{
		"employees": map[string]any{"type": "integer"}, "summary": map[string]any{"type": "string"}}}}
	questions := []string{
		"How many people does the company employ?\n\nRecord:\ncompany: Acme Corp",
		"How many people does the company employ?\n\nRecord:\ncompany: Globex Ltd",
		"How many people does the company employ?\n\nRecord:\ncompany: Initech GmbH",
		"Does Globex Ltd publish a SOC 2 report?",
	}
	fresh := make([]engine.Result, len(questions))
	for i, q := range questions {
		s, err := answers.OpenAnswers(ctx, cfg)
		require.NoError(t, err)
		fresh[i], err = s.Answer(ctx, engine.Assignment{Question: q})
		require.NoError(t, err)
		require.NotEmpty(t, fresh[i].Report)
	}

	require.NotEqual(t, fresh[0], fresh[1], "the records' answers differ: a search keyed too loosely would show")

	shared, err := answers.OpenAnswers(ctx, cfg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]engine.Result, 3*len(questions))
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = shared.Answer(ctx, engine.Assignment{Question: questions[i%len(questions)]}) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		require.Equal(t, fresh[i%len(questions)], got[i], questions[i%len(questions)])
	}

	// A source given for one answer is searched for it, and not for the next.
	extra := []engine.SourceFile{{Name: "hooli.md", Data: []byte("# Hooli\n\nHooli employs 3000 people in Palo Alto.\n")}}
	with, err := shared.Answer(ctx, engine.Assignment{Question: "How many people does Hooli employ?", Extra: extra})
	require.NoError(t, err)
	require.Contains(t, with.Report, "3000")
	without, err := shared.Answer(ctx, engine.Assignment{Question: "How many people does Hooli employ?"})
	require.NoError(t, err)
	require.NotContains(t, without.Report, "3000")
}

// TestAnswerSubject: an assignment about one record is answered only from passages that name it;
// a record the sources say nothing about is not answered with another record's passage.
func TestAnswerSubject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	notes := "# Companies\n\nAcme Corp is a maker of anvils based in Ohio. Acme Corp employs 120 people.\n\n" +
		"Globex Corporation builds reactors. Globex Corporation has a workforce of 300 people.\n\n" +
		"Initech sells software; it was founded in 1999.\n"
	s, err := engine.Answers(New(Options{}), t.TempDir()).OpenAnswers(ctx, engine.AnswerConfig{Effort: engine.EffortMedium,
		ContextFiles: []engine.SourceFile{{Name: "companies.md", Data: []byte(notes)}},
		JSONSchema:   map[string]any{"type": "object", "properties": map[string]any{"summary": map[string]any{"type": "string"}}}})
	require.NoError(t, err)
	defer s.Close()
	ask := "How many people does the company employ?"
	for _, tc := range []struct {
		subject, want string
	}{
		{"Acme Corp", "Acme Corp employs 120 people."},
		{"Globex Corporation", "Globex Corporation has a workforce of 300 people."},
		{"Initech", ""},
		{"Hooli", ""},
	} {
		res, err := s.Answer(ctx, engine.Assignment{Question: ask + "\n\nRecord:\nname: " + tc.subject, Ask: ask, Subject: tc.subject})
		require.NoError(t, err, tc.subject)
		got, _ := res.StructuredOutput["summary"].(string)
		require.Equal(t, tc.want, got, tc.subject)
		if tc.want == "" {
			require.Contains(t, res.Report, "The sources do not answer this", tc.subject)
		} else {
			require.Contains(t, res.Report, "“"+tc.want+"”", tc.subject)
		}
	}
}

// TestAnswerRecordFields: a record's fields are filled from the passages about it ("employees" is
// found by "employs"), and a record the sources do not describe gets none.
func TestAnswerRecordFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	register := "## Zanvor\n\nThe company Zanvor employs 432 people. Zanvor publishes a SOC 2 Type II report.\n\n" +
		"## Ixbel\n\nThe company Ixbel employs 77 people. Ixbel does not publish a SOC 2 report.\n"
	s, err := engine.Answers(New(Options{}), t.TempDir()).OpenAnswers(ctx, engine.AnswerConfig{Effort: engine.EffortMedium,
		ContextFiles: []engine.SourceFile{{Name: "register.md", Data: []byte(register)}},
		JSONSchema:   map[string]any{"type": "object", "properties": map[string]any{"employees": map[string]any{"type": "integer"}}}})
	require.NoError(t, err)
	defer s.Close()
	for subject, want := range map[string]any{"Zanvor": 432.0, "Ixbel": 77.0, "Quinmar": nil} {
		res, err := s.Answer(ctx, engine.Assignment{Question: "How many people does the company employ?", Ask: "How many people does the company employ?", Subject: subject})
		require.NoError(t, err)
		got, _ := json.Marshal(res.StructuredOutput["employees"])
		wantJSON, _ := json.Marshal(want)
		require.JSONEq(t, string(wantJSON), string(got), subject)
	}
}
