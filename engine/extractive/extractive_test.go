package extractive_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/workspace"
)

var (
	reSource   = regexp.MustCompile("(?m)^(\\d+)\\. `([^`]+)`, lines? ([\\d–, ]+)")
	reInline   = regexp.MustCompile(`\\[(\\d+)\\]`)
	effortList = []string{engine.EffortLow, engine.EffortMedium, engine.EffortHigh, engine.EffortBuild}
)

type runResult struct {
	res  engine.Result
	sink *enginetest.Sink
	repo *workspace.Repo
}

func runOffline(t testing.TB, in engine.Input, corpus string) runResult {
	t.Helper()
	if in.Workspace == nil {
		in.Workspace = enginetest.Workspace(t, enginetest.Inputs(t))
	}
	sink := &enginetest.Sink{Repo: in.Workspace}
	res, err := extractive.New(extractive.Options{CorpusDir: corpus}).Run(context.Background(), in, sink)
	require.NoError(t, err)
	return runResult{res, sink, in.Workspace}
}

// section is the body of a "## name" section of a report.
func section(report, name string) string {
	i := strings.Index(report, "\n## "+name+"\n")
	if i < 0 {
		return ""
	}
	rest := report[i+len("\n## "+name+"\n"):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

func TestExtractiveReportByEffort(t *testing.T) {
	t.Parallel()
	var prevSubs int
	for _, effort := range effortList {
		t.Run(effort, func(t *testing.T) {
			r := runOffline(t, engine.Input{Question: enginetest.Question, Effort: effort}, corpusDir)
			report := r.res.Report

			// The report in the workspace is the one returned, at the final commit.
			head, err := r.repo.ReadFile("", engine.ReportPath)
			require.NoError(t, err)
			require.Equal(t, report, string(head))
			require.True(t, strings.HasPrefix(report, "# "+enginetest.Question+"\n"), report)
			require.NotEmpty(t, section(report, "Answer"))
			require.Contains(t, report, "\n## Sources\n")
			require.NotContains(t, report, "## Key terms") // padding is gone
			require.NotContains(t, report, "What figures are reported")

			// The question has three parts; low researches two and names the third as open.
			var plan engine.Event
			for _, e := range r.sink.OfKind(engine.KindThinking) {
				plan = e
			}
			subs := len(plan.Data["sub_questions"].([]string))
			require.GreaterOrEqual(t, subs, prevSubs)
			prevSubs = subs
			if effort == engine.EffortLow {
				require.Equal(t, 2, subs)
				require.Contains(t, section(report, "Open questions"), "How does solar power affect running costs? — not researched at effort low.")
			} else {
				require.Equal(t, 3, subs)
			}
			// Every sub-question is answered from its own terms or said to be unanswered.
			require.Contains(t, section(report, "Answer"), "**What do heat pumps cost?** “")
			require.Contains(t, section(report, "Answer"), "**What are their benefits?** The sources do not answer this. The closest passage (in `input_files/notes.md`) does not state “benefits”.")

			// Every inline citation has an entry in Sources, pointing at real lines of a real file.
			sources := map[string]bool{}
			for _, m := range reSource.FindAllStringSubmatch(report, -1) {
				sources[m[1]] = true
				require.True(t, strings.HasPrefix(m[2], "input_files/") || strings.HasPrefix(m[2], "corpus/"), m[2])
				requireLinesExist(t, r.repo, m[2], m[3])
			}
			require.NotEmpty(t, sources)
			for _, m := range reInline.FindAllStringSubmatch(report, -1) {
				require.True(t, sources[m[1]], "citation [%s] has no source", m[1])
			}

			// Checkpoints: a progress draft mid-run, a final at the end.
			cps := r.sink.Checkpoints
			require.GreaterOrEqual(t, len(cps), 2)
			require.Equal(t, workspace.CheckpointProgress, cps[0].Type)
			require.Equal(t, workspace.CheckpointFinal, cps[len(cps)-1].Type)
			draft, err := r.repo.ReadFile(cps[0].SHA, engine.ReportPath)
			require.NoError(t, err)
			require.Contains(t, string(draft), "**Draft:**")
			finals := r.sink.OfKind(engine.KindFinalAnswer)
			require.Len(t, finals, 1)
			require.Equal(t, report, finals[0].Content)
			var searches int
			for _, e := range r.sink.OfKind(engine.KindToolCall) {
				if e.Title == "search" {
					searches++
				}
			}
			require.Equal(t, subs, searches, "a search per sub-question")

			// The binary file is skipped with a timeline note and named in the limitations.
			var skipped []string
			for _, e := range r.sink.OfKind(engine.KindStatus) {
				if e.Title == "Skipped file" {
					skipped = append(skipped, e.Data["path"].(string))
				}
			}
			require.Equal(t, []string{"corpus/energy/logo.gif"}, skipped)
			require.Contains(t, section(report, "Limitations"), "`corpus/energy/logo.gif`")

			_, err = r.repo.ReadFile("", "site/index.html")
			if effort != engine.EffortBuild {
				require.ErrorIs(t, err, workspace.ErrNotFound)
				return
			}
			require.NoError(t, err)
			for _, p := range []string{"site/sources.html", "site/style.css"} {
				_, err := r.repo.ReadFile("", p)
				require.NoError(t, err, p)
			}
		})
	}
}

// requireLinesExist checks a citation's lines against the cited file.
func requireLinesExist(t *testing.T, repo *workspace.Repo, cited, lines string) {
	t.Helper()
	var data []byte
	var err error
	if rest, ok := strings.CutPrefix(cited, "corpus/"); ok {
		data, err = os.ReadFile(filepath.Join(corpusDir, rest))
	} else {
		data, err = repo.ReadFile("", cited)
	}
	require.NoError(t, err)
	text, ok := extract.Text(cited, data)
	require.True(t, ok)
	all := strings.Split(text, "\n")
	for _, n := range parseLines(lines) {
		require.True(t, n >= 1 && n <= len(all), "%s line %d of %d", cited, n, len(all))
		require.NotEmpty(t, strings.TrimSpace(all[n-1]), "%s line %d is blank", cited, n)
	}
}

func TestExtractiveDeterministic(t *testing.T) {
	t.Parallel()
	schema := energySchema()
	in := engine.Input{Question: enginetest.Question, Effort: engine.EffortBuild, JSONSchema: schema}
	a := runOffline(t, in, corpusDir)
	b := runOffline(t, in, corpusDir)
	require.Equal(t, a.res, b.res)
	require.Equal(t, a.sink.Events, b.sink.Events)
	for _, p := range []string{engine.ReportPath, "site/index.html", "site/sources.html", engine.StructuredOutputPath} {
		x, err := a.repo.ReadFile("", p)
		require.NoError(t, err)
		y, err := b.repo.ReadFile("", p)
		require.NoError(t, err)
		require.Equal(t, x, y, p)
	}
}

// TestExtractiveNoSources: nothing to read at all (no files, corpus or web search): the run says
// so, quotes nothing and asks not to be charged; structured output is refused, not invented.
func TestExtractiveNoSources(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, nil)
	r := runOffline(t, engine.Input{Question: enginetest.Question, Effort: engine.EffortMedium, Workspace: repo}, "")
	require.True(t, r.res.NoSources)
	require.Contains(t, section(r.res.Report, "Answer"), "No sources were available to this run")
	require.Contains(t, r.res.Report, "this run is not charged")
	require.NotContains(t, r.res.Report, "[1]")
	require.Equal(t, workspace.CheckpointFinal, r.sink.Checkpoints[len(r.sink.Checkpoints)-1].Type)

	// A corpus makes sources exist: charged as usual.
	r = runOffline(t, engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: enginetest.Workspace(t, nil)}, corpusDir)
	require.False(t, r.res.NoSources)

	_, err := extractive.New(extractive.Options{}).Run(context.Background(),
		engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: enginetest.Workspace(t, nil), JSONSchema: energySchema()}, &enginetest.Sink{Repo: repo})
	var ee *engine.Error
	require.ErrorAs(t, err, &ee)
	require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code)
}

// TestExtractiveRelevanceFloor: sources that share a word or a year with the question do not
// answer it: the report says so, names what is missing, and quotes nothing.
func TestExtractiveRelevanceFloor(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{
		"cats.txt":   []byte("Cats sleep for most of the day.\n"),
		"rates.txt":  []byte("In 2023 the council raised parking rates in the city centre by 10 percent.\n"),
		"report.txt": []byte("The 2023 annual report covers the bakery's sales.\n"),
	})
	r := runOffline(t, engine.Input{Question: "What drives interest rates in 2023?", Effort: engine.EffortHigh, Workspace: repo}, "")
	answer := section(r.res.Report, "Answer")
	require.True(t, strings.HasPrefix(answer, "The sources do not answer this."), answer)
	require.Contains(t, answer, "“interest”")
	require.NotContains(t, r.res.Report, "> ")
	require.Contains(t, section(r.res.Report, "Sources"), "No sources were quoted.")
	require.Contains(t, section(r.res.Report, "Open questions"), "What drives interest rates in 2023?")
}

// TestExtractiveSaysHowItReadTheQuestion: a word the sources write otherwise is answered as they
// write it, and the report says so: a name one letter off may be someone else.
func TestExtractiveSaysHowItReadTheQuestion(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{
		"city.md": []byte("# New York City\n\nNew York City has about 8.3 million residents. The Hudson River separates Manhattan from New Jersey.\n"),
	})
	r := runOffline(t, engine.Input{Question: "How many residents does NYC have?", Effort: engine.EffortLow, Workspace: repo}, "")
	require.Contains(t, section(r.res.Report, "Answer"), "8.3 million")
	require.Contains(t, section(r.res.Report, "Limitations"), "Read “NYC” as “New York City”, as the sources write it.")
	r = runOffline(t, engine.Input{Question: "Which river separates Manhattan from New Jersey?", Effort: engine.EffortLow, Workspace: repo}, "")
	require.Empty(t, section(r.res.Report, "Limitations"), "nothing was read otherwise")
}

func TestExtractiveInputsOnlyAndContextDirs(t *testing.T) {
	t.Parallel()
	ctxA, ctxB := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ctxA, "expert.md"), []byte("Expert guidance: heat pumps need low flow temperatures.\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ctxB, "more.txt"), []byte("Heat pumps in flats need shared ground loops.\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ctxA, ".hidden.txt"), []byte("heat pumps secret\n"), 0o600))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(ctxA, "link.txt")))
	r := runOffline(t, engine.Input{Question: "What do heat pumps need?", Effort: engine.EffortHigh, ContextDirs: []string{ctxA, ctxB}}, "")
	require.Contains(t, r.res.Report, "`context/expert.md`, line 1")
	require.Contains(t, r.res.Report, "`context2/more.txt`, line 1")
	require.NotContains(t, r.res.Report, ".hidden")
	require.NotContains(t, r.res.Report, ctxA) // server paths never leak into a report
	require.Contains(t, r.res.Report, "`context/link.txt`: not a regular file")
}

// TestExtractiveContinuation: a continuation researches the open questions the report named and
// adds only new, cited findings, numbered after the report's; nothing is quoted twice.
func TestExtractiveContinuation(t *testing.T) {
	t.Parallel()
	first := runOffline(t, engine.Input{Question: enginetest.Question, Effort: engine.EffortLow}, corpusDir)
	require.Contains(t, section(first.res.Report, "Open questions"), "How does solar power affect running costs?")
	in := engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: first.repo, Continuation: true, PriorReport: first.res.Report}
	second := runOffline(t, in, corpusDir)
	rep := second.res.Report
	require.True(t, strings.HasPrefix(rep, strings.TrimRight(first.res.Report, "\n")), "the prior report is kept")
	cont := rep[len(strings.TrimRight(first.res.Report, "\n")):]
	require.Contains(t, cont, "\n## Continuation\n")
	require.Contains(t, cont, "### How does solar power affect running costs?\n")
	require.Contains(t, cont, "### What are their benefits?\n\nStill not answered.")
	require.NotContains(t, cont, "### What are the costs of heat pumps?", "answered questions are not researched again")
	require.Contains(t, cont, "### Continuation sources")

	// Numbering continues; no passage quoted before is quoted again.
	maxPrior := 0
	for _, m := range reSource.FindAllStringSubmatch(first.res.Report, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		maxPrior = max(maxPrior, n)
	}
	newSources := reSource.FindAllStringSubmatch(cont, -1)
	require.NotEmpty(t, newSources)
	for i, m := range newSources {
		require.Equal(t, fmt.Sprint(maxPrior+i+1), m[1])
	}
	for _, line := range strings.Split(cont, "\n") {
		if strings.HasPrefix(line, "> ") && !strings.HasPrefix(line, "> —") {
			require.NotContains(t, first.res.Report, line, "quoted again")
		}
	}
	cps := second.sink.Checkpoints
	require.Equal(t, workspace.CheckpointContinuation, cps[len(cps)-1].Type)

	// The continuation's own open questions are what the next one researches; it is numbered.
	in.PriorReport = rep
	third := runOffline(t, in, corpusDir)
	cont3 := third.res.Report[len(strings.TrimRight(rep, "\n")):]
	require.Contains(t, cont3, "\n## Continuation 2\n")
	require.Contains(t, cont3, "### What are their benefits?")
	require.NotContains(t, cont3, "### How does solar power affect running costs?")
}

func TestExtractiveContinuationWithoutPriorReport(t *testing.T) {
	t.Parallel()
	r := runOffline(t, engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Continuation: true}, corpusDir)
	require.Contains(t, r.res.Report, "## Answer")
	require.Equal(t, workspace.CheckpointContinuation, r.sink.Checkpoints[len(r.sink.Checkpoints)-1].Type)
}

func TestExtractiveBadInput(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, nil)
	for _, in := range []engine.Input{
		{Question: "q", Effort: "extreme", Workspace: repo},
		{Question: "q", Effort: engine.EffortLow},
	} {
		_, err := extractive.New(extractive.Options{}).Run(context.Background(), in, &enginetest.Sink{Repo: repo})
		var ee *engine.Error
		require.ErrorAs(t, err, &ee)
		require.Equal(t, engine.CodeEngineError, ee.Code)
	}
}

func TestExtractiveCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	repo := enginetest.Workspace(t, enginetest.Inputs(t))
	_, err := extractive.New(extractive.Options{CorpusDir: corpusDir}).Run(ctx,
		engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: repo}, &enginetest.Sink{Repo: repo})
	require.ErrorIs(t, err, context.Canceled)
}

// failingSink refuses checkpoints: the run must fail rather than report success.
type failingSink struct{ enginetest.Sink }

func (*failingSink) Checkpoint(context.Context, string, string) (string, error) {
	return "", errors.New("disk full")
}

func TestExtractiveCheckpointFailure(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, enginetest.Inputs(t))
	_, err := extractive.New(extractive.Options{}).Run(context.Background(),
		engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: repo}, &failingSink{})
	require.ErrorContains(t, err, "disk full")
}

// BenchmarkOffline measures whole extractive runs on the test corpus (5 files, 12 passages),
// checkpoints committed to a real git workspace like a job does:
//
//	go test ./engine/ -run '^$' -bench BenchmarkOffline -benchtime 200x
func BenchmarkOffline(b *testing.B) {
	for _, effort := range []string{engine.EffortLow, engine.EffortHigh} {
		b.Run(effort, func(b *testing.B) {
			inputs := enginetest.Inputs(b)
			eng := extractive.New(extractive.Options{CorpusDir: corpusDir})
			b.ReportAllocs()
			for b.Loop() {
				repo := enginetest.Workspace(b, inputs)
				_, err := eng.Run(context.Background(), engine.Input{Question: enginetest.Question, Effort: effort, Workspace: repo}, &enginetest.Sink{Repo: repo})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// nullSink discards events and does not commit: the engine's own cost without git.
type nullSink struct{}

func (nullSink) Event(context.Context, engine.Event) error { return nil }
func (nullSink) Checkpoint(context.Context, string, string) (string, error) {
	return "0000000000000000000000000000000000000000", nil
}

func BenchmarkOfflineEngineOnly(b *testing.B) {
	repo := enginetest.Workspace(b, enginetest.Inputs(b))
	eng := extractive.New(extractive.Options{CorpusDir: corpusDir})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Run(context.Background(), engine.Input{Question: enginetest.Question, Effort: engine.EffortLow, Workspace: repo}, nullSink{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExtractiveBuildSite: effort build writes a static site: the report, a sources page with
// every quote the report cites, and the numeric tables of the sources read drawn as inline SVG;
// nothing is loaded from elsewhere.
func TestExtractiveBuildSite(t *testing.T) {
	t.Parallel()
	q := "Which country had the highest arabica export price in 2021, and which metro line had the lowest ridership in 2021?"
	r := runOffline(t, engine.Input{Question: q, Effort: engine.EffortBuild, Workspace: enginetest.Workspace(t, nil)}, filepath.Join(evalDir, "docs"))
	require.Contains(t, section(r.res.Report, "Answer"), "Kenya had the highest value for 2021 (231.8), ahead of Colombia (198.4)")
	require.Contains(t, section(r.res.Report, "Answer"), "Purple had the lowest value for 2021 (8.3)")

	index, err := r.repo.ReadFile("", "site/index.html")
	require.NoError(t, err)
	sources, err := r.repo.ReadFile("", "site/sources.html")
	require.NoError(t, err)
	for _, page := range [][]byte{index, sources} {
		require.Contains(t, string(page), `<link rel="stylesheet" href="style.css">`)
		require.NotRegexp(t, `(?i)<script|src="http|href="http|@import|url\(`, string(page), "no external resources")
	}
	require.Equal(t, 2, strings.Count(string(index), "<svg "), "one chart per numeric table read")
	require.Contains(t, string(index), "<polyline", "years as columns: one line per row")
	require.Contains(t, string(index), "<title>Kenya, 2021: 231.8</title>")
	require.Contains(t, string(index), `href="sources.html"`)

	// The sources page quotes what the report cites, under each source, with the same numbers.
	require.Contains(t, string(sources), "<code>corpus/arabica-export-prices.md</code>")
	require.Contains(t, string(sources), "| Kenya    | 210.3 | 231.8 | 297.4 | 244.0 |")
	require.Contains(t, string(sources), `id="q1"`)
}

// TestExtractiveQuotesOnce: when two parts of a question are answered by the same passage, it is
// quoted once and cited again.
func TestExtractiveQuotesOnce(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{"ferry.txt": []byte("The new ferry carries 600 passengers and 200 cars on the Halden route.\nIt was built in Vestvik.\n")})
	r := runOffline(t, engine.Input{Question: "How many passengers does the new ferry carry, and how many cars does the new ferry carry?", Effort: engine.EffortHigh, Workspace: repo}, "")
	answer := section(r.res.Report, "Answer")
	require.Equal(t, 1, strings.Count(r.res.Report, "The new ferry carries 600 passengers"), r.res.Report)
	require.Contains(t, answer, "Stated above [1].")
}

const corpusDir = "testdata/corpus"
