package main

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/eval"
	"github.com/researchd/researchd/qadata"
	"github.com/researchd/researchd/store"
)

// TestEvalHarness runs the evaluation harness of `make eval` (package eval, cmd/evalqa) against
// a real `researchd serve` on three tiny hand-made items and one structured case, so that its
// wiring (upload once, one job per question, poll, parse, score, summarise) is tested without the
// public data. It checks the plumbing, not the engine's accuracy.
func TestEvalHarness(t *testing.T) {
	t.Parallel()
	c := newCLI(t, store.SQLite)
	for k, v := range map[string]string{"RESEARCH_ADDR": "127.0.0.1:0", "RESEARCH_LOG_LEVEL": "info", "RESEARCH_RATE_LIMITS": "off",
		"RESEARCH_SEARCH_PROVIDER": "none", "RESEARCH_ACCOUNT_MAX_RUNS": "0"} {
		c.env[k] = v
	}
	stdout, addr, _ := startServe(t, c)
	key := regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`).FindString(stdout())
	require.NotEmpty(t, key)

	castle := qadata.Doc{Name: "castle.txt", Text: "The Gravensteen is a castle in Ghent.\nThe Gravensteen was built in 1180 by Count Philip of Alsace.\n"}
	alpha := qadata.Doc{Name: "Alpha.txt", Sentences: []string{"Alpha is a band from Bergen.", " Alpha was formed in 1990 by Ola Nordmann."}}
	beta := qadata.Doc{Name: "Beta.txt", Sentences: []string{"Ola Nordmann is a Norwegian singer.", " He was born in 1961."}}
	for _, d := range []*qadata.Doc{&alpha, &beta} {
		for _, s := range d.Sentences {
			d.Text += s
		}
		d.Text += "\n"
	}
	tasks := []eval.Task{
		{Set: eval.SetSQuAD, Item: qadata.Item{ID: "a", Question: "When was the Gravensteen built?", Answers: []string{"1180"}, Docs: []qadata.Doc{castle}}},
		{Set: eval.SetSwapped, Item: qadata.Item{ID: "b", Question: "Who sang the national anthem at the 1994 Winter Olympics?", Docs: []qadata.Doc{castle}}},
		{Set: eval.SetHotpot, Item: qadata.Item{ID: "c", Question: "When was the founder of the band Alpha born?", Answers: []string{"1961"},
			Docs: []qadata.Doc{alpha, beta}, Support: []qadata.Fact{{Doc: "Alpha.txt", Sentence: 1}, {Doc: "Beta.txt", Sentence: 1}}}},
		{Set: eval.SetStructured, Item: qadata.Item{ID: "d", Question: "Who built the Gravensteen?", Docs: []qadata.Doc{castle}},
			Schema: map[string]any{"type": "object", "properties": map[string]any{"builder": map[string]any{"type": []any{"string", "null"}}}},
			Fields: map[string]eval.FieldExpect{"builder": {Value: "Philip", Rule: "contains"}}},
	}
	client := &eval.Client{Base: "http://" + addr, Key: key, HTTP: &http.Client{Timeout: time.Minute}, Poll: 20 * time.Millisecond}
	var progress bytes.Buffer
	results, wall, err := eval.Run(context.Background(), client, tasks, eval.Options{Efforts: []string{"low"}, Concurrency: 2, Progress: &progress})
	require.NoError(t, err)
	require.Len(t, results, len(tasks))
	require.Contains(t, progress.String(), "effort low: 4/4 jobs")
	for _, r := range results {
		require.Equal(t, "low", r.Effort)
		require.Equal(t, "completed", r.Status, "%s: %s", r.ID, r.Error)
		require.NotEmpty(t, r.Answer, "%s: the report has an answer section", r.ID)
		require.Equal(t, r.Quotes, r.QuotesVerified, "%s: every quote is in the attachment it cites", r.ID)
		t.Logf("%s: first sentence %q, abstained %v, quotes %d", r.ID, r.FirstSentence, r.Abstained, r.Quotes)
	}
	require.Equal(t, 1, results[3].Fields)

	sections := eval.Summarise(tasks, results, []string{"low"}, wall)
	titles := map[string]bool{}
	for _, s := range sections {
		titles[s.Title] = true
	}
	require.Len(t, sections, 4, "SQuAD, HotpotQA, hand-written and all jobs: %v", titles)
	var out bytes.Buffer
	eval.Print(&out, sections, []string{"low"})
	require.Contains(t, out.String(), "supporting-sentence F1")
	require.Contains(t, out.String(), "baseline (word overlap)")

	// A document goes up once: uploading it again returns the first attachment.
	first, err := client.Upload(context.Background(), castle.Name, castle.Text)
	require.NoError(t, err)
	again, err := client.Upload(context.Background(), castle.Name, castle.Text)
	require.NoError(t, err)
	require.Equal(t, first, again)
}
