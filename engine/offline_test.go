package engine_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/workspace"
)

const question = "What are the costs and benefits of heat pumps, and how does solar power affect running costs?"

var (
	reSection  = regexp.MustCompile(`(?m)^## \d+\. `)
	reQuote    = regexp.MustCompile(`(?m)^> — `)
	reSource   = regexp.MustCompile("(?m)^(\\d+)\\. `([^`]+)`, lines? (\\d+)(?:–(\\d+))?")
	reInline   = regexp.MustCompile(`\[(\d+)\]`)
	effortList = []string{engine.EffortLow, engine.EffortMedium, engine.EffortHigh, engine.EffortBuild}
)

type runResult struct {
	res  engine.Result
	sink *recordingSink
	repo *workspace.Repo
}

func runOffline(t testing.TB, in engine.Input, corpus string) runResult {
	t.Helper()
	if in.Workspace == nil {
		in.Workspace = newWorkspace(t, testInputs(t))
	}
	sink := &recordingSink{repo: in.Workspace}
	res, err := engine.NewOffline(engine.OfflineOptions{CorpusDir: corpus}).Run(context.Background(), in, sink)
	require.NoError(t, err)
	return runResult{res, sink, in.Workspace}
}

func TestOfflineReportByEffort(t *testing.T) {
	t.Parallel()
	var prevSections, prevQuotes int
	for _, effort := range effortList {
		t.Run(effort, func(t *testing.T) {
			r := runOffline(t, engine.Input{Question: question, Effort: effort}, corpusDir)
			report := r.res.Report

			// The report in the workspace is the one returned, at the final commit.
			head, err := r.repo.ReadFile("", engine.ReportPath)
			require.NoError(t, err)
			require.Equal(t, report, string(head))

			require.True(t, strings.HasPrefix(report, "# "+question+"\n"), report)
			require.Contains(t, report, "\n## Summary\n")
			require.Contains(t, report, "\n## Sources\n")
			sections := len(reSection.FindAllString(report, -1))
			quotes := len(reQuote.FindAllString(report, -1))
			require.GreaterOrEqual(t, sections, 2)
			require.GreaterOrEqual(t, sections, prevSections)
			require.GreaterOrEqual(t, quotes, prevQuotes)
			prevSections, prevQuotes = sections, quotes

			// Every inline citation has an entry in Sources, pointing at real lines of a real file.
			sources := map[string]bool{}
			for _, m := range reSource.FindAllStringSubmatch(report, -1) {
				sources[m[1]] = true
				require.True(t, strings.HasPrefix(m[2], "input_files/") || strings.HasPrefix(m[2], "corpus/"), m[2])
				requireLinesExist(t, r.repo, m[2], m[3], m[4])
			}
			require.NotEmpty(t, sources)
			for _, m := range reInline.FindAllStringSubmatch(report, -1) {
				require.True(t, sources[m[1]], "citation [%s] has no source", m[1])
			}
			if effort == engine.EffortHigh || effort == engine.EffortBuild {
				require.Contains(t, report, "9,000 to 14,000 euros")
			}

			// Checkpoints: a progress draft mid-run, a final at the end.
			cps := r.sink.checkpoints
			require.GreaterOrEqual(t, len(cps), 2)
			require.Equal(t, workspace.CheckpointProgress, cps[0].Type)
			require.Equal(t, workspace.CheckpointFinal, cps[len(cps)-1].Type)
			draft, err := r.repo.ReadFile(cps[0].SHA, engine.ReportPath)
			require.NoError(t, err)
			require.Contains(t, string(draft), "**Draft:**")
			revs, err := r.repo.Revisions()
			require.NoError(t, err)
			require.Len(t, revs, len(cps))

			kinds := r.sink.kinds()
			for _, k := range []string{engine.KindStatus, engine.KindThinking, engine.KindToolCall, engine.KindToolResult, engine.KindText, engine.KindFinalAnswer, engine.KindPreview} {
				require.Positive(t, kinds[k], k)
			}
			finals := r.sink.ofKind(engine.KindFinalAnswer)
			require.Len(t, finals, 1)
			require.Equal(t, report, finals[0].Content)
			// A search per section.
			var searches int
			for _, e := range r.sink.ofKind(engine.KindToolCall) {
				if e.Title == "search" {
					searches++
				}
			}
			require.Equal(t, sections, searches)

			// The binary file is skipped with a timeline note.
			var skipped []string
			for _, e := range r.sink.ofKind(engine.KindStatus) {
				if e.Title == "Skipped file" {
					skipped = append(skipped, e.Data["path"].(string))
				}
			}
			require.Equal(t, []string{"corpus/energy/logo.gif"}, skipped)

			site, err := r.repo.ReadFile("", "site/index.html")
			if effort != engine.EffortBuild {
				require.ErrorIs(t, err, workspace.ErrNotFound)
				return
			}
			require.NoError(t, err)
			require.Contains(t, string(site), "<h1")
			require.Contains(t, string(site), "<blockquote>")
			require.Contains(t, string(site), `<link rel="stylesheet" href="style.css">`)
			require.NotContains(t, string(site), "do not index") // the source page's script
			_, err = r.repo.ReadFile("", "site/style.css")
			require.NoError(t, err)
			require.Contains(t, report, "## Key terms")
			require.Contains(t, report, "## Limitations")
		})
	}
}

// requireLinesExist checks a citation's line range against the cited file.
func requireLinesExist(t *testing.T, repo *workspace.Repo, cited, start, end string) {
	t.Helper()
	var data []byte
	var err error
	if rest, ok := strings.CutPrefix(cited, "corpus/"); ok {
		data, err = os.ReadFile(filepath.Join(corpusDir, rest))
	} else {
		data, err = repo.ReadFile("", cited)
	}
	require.NoError(t, err)
	var s, e int
	fmt.Sscan(start, &s)
	e = s
	if end != "" {
		fmt.Sscan(end, &e)
	}
	lines := strings.Split(string(data), "\n")
	require.True(t, s >= 1 && s <= e && e <= len(lines), "%s lines %d–%d of %d", cited, s, e, len(lines))
	if filepath.Ext(cited) != ".html" {
		require.NotEmpty(t, strings.TrimSpace(lines[s-1]), "%s line %d is blank", cited, s)
	}
}

func TestOfflineDeterministic(t *testing.T) {
	t.Parallel()
	schema := energySchema()
	in := engine.Input{Question: question, Effort: engine.EffortBuild, JSONSchema: schema}
	a := runOffline(t, in, corpusDir)
	b := runOffline(t, in, corpusDir)
	require.Equal(t, a.res, b.res)
	require.Equal(t, a.sink.events, b.sink.events)
	for _, p := range []string{engine.ReportPath, "site/index.html", engine.StructuredOutputPath} {
		x, err := a.repo.ReadFile("", p)
		require.NoError(t, err)
		y, err := b.repo.ReadFile("", p)
		require.NoError(t, err)
		require.Equal(t, x, y, p)
	}
}

func TestOfflineNoSources(t *testing.T) {
	t.Parallel()
	repo := newWorkspace(t, nil)
	r := runOffline(t, engine.Input{Question: question, Effort: engine.EffortMedium, Workspace: repo}, "")
	require.Contains(t, r.res.Report, "No evidence was found: no readable source files were provided")
	require.Contains(t, r.res.Report, "No passage in the sources addresses this sub-question.")
	require.Contains(t, r.res.Report, "No sources were cited.")
	require.NotContains(t, r.res.Report, "[1]")
	require.Equal(t, workspace.CheckpointFinal, r.sink.checkpoints[len(r.sink.checkpoints)-1].Type)
}

func TestOfflineNoMatchingEvidence(t *testing.T) {
	t.Parallel()
	repo := newWorkspace(t, map[string][]byte{"cats.txt": []byte("Cats sleep for most of the day.\n")})
	r := runOffline(t, engine.Input{Question: "What drives interest rates?", Effort: engine.EffortLow, Workspace: repo}, "")
	require.Contains(t, r.res.Report, "No evidence was found: none of the 1 readable source files")
}

func TestOfflineInputsOnlyAndContextDirs(t *testing.T) {
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

func energySchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"install_cost_eur", "summary", "contact", "climate"},
		"properties": map[string]any{
			"install_cost_eur":        map[string]any{"type": "number", "description": "installation cost of a heat pump"},
			"summary":                 map[string]any{"type": "string", "maxLength": 200},
			"suitable_for_old_houses": map[string]any{"type": "boolean", "description": "heat pumps suitable for poorly insulated houses"},
			"climate":                 map[string]any{"enum": []any{"cold", "mild"}, "description": "climate where performance SCOP is highest"},
			"contact":                 map[string]any{"type": "string", "format": "email"},
			"survey_date":             map[string]any{"type": "string", "format": "date"},
			"grant_eur":               map[string]any{"type": "integer", "description": "government grants", "minimum": 1000},
			"sources":                 map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "heat pump", "maxItems": 2},
			"facts": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{
				"type":       "object",
				"required":   []any{"statement"},
				"properties": map[string]any{"statement": map[string]any{"type": "string"}, "percent": map[string]any{"type": "number"}},
			}, "description": "percent"},
			"version": map[string]any{"const": "v1"},
		},
	}
}

func TestOfflineStructuredOutput(t *testing.T) {
	t.Parallel()
	r := runOffline(t, engine.Input{Question: question, Effort: engine.EffortMedium, JSONSchema: energySchema()}, corpusDir)
	out := r.res.StructuredOutput
	require.Equal(t, float64(9000), out["install_cost_eur"])
	require.Equal(t, "research@example.org", out["contact"])
	require.Equal(t, "2024-03-15", out["survey_date"])
	require.Equal(t, false, out["suitable_for_old_houses"]) // "not suitable"
	require.Equal(t, float64(7500), out["grant_eur"])
	require.Equal(t, "mild", out["climate"])
	require.Equal(t, "v1", out["version"])
	require.NotEmpty(t, out["summary"])
	require.LessOrEqual(t, len([]rune(out["summary"].(string))), 200)
	sources := out["sources"].([]any)
	require.NotEmpty(t, sources)
	require.LessOrEqual(t, len(sources), 2)
	facts := out["facts"].([]any)
	require.NotEmpty(t, facts)
	require.NotEmpty(t, facts[0].(map[string]any)["statement"])
	require.NoError(t, engine.ValidateStructuredOutput(energySchema(), out))

	saved, err := r.repo.ReadFile("", engine.StructuredOutputPath)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(saved, &got))
	require.Equal(t, out, got)
}

func TestOfflineStructuredOutputErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema map[string]any
		code   string
	}{
		{"required number not found", map[string]any{
			"type": "object", "required": []any{"population"},
			"properties": map[string]any{"population": map[string]any{"type": "integer", "minimum": 1e12}},
		}, engine.CodeStructuredOutputInvalid},
		{"pattern not met", map[string]any{
			"type": "object", "required": []any{"code"},
			"properties": map[string]any{"code": map[string]any{"type": "string", "pattern": "^[A-Z]{3}-\\d{9}$"}},
		}, engine.CodeStructuredOutputInvalid},
		{"additional properties forbidden by a false subschema", map[string]any{
			"type": "object", "properties": map[string]any{"summary": false},
		}, engine.CodeStructuredOutputInvalid},
		{"schema is not a schema", map[string]any{"type": 5}, engine.CodeInvalidJSONSchema},
		{"not an object schema", map[string]any{"type": "array"}, engine.CodeInvalidJSONSchema},
		{"external ref refused", map[string]any{"$ref": "file:///etc/passwd"}, engine.CodeInvalidJSONSchema},
		{"remote ref refused", map[string]any{"$ref": "https://example.com/schema.json"}, engine.CodeInvalidJSONSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := newWorkspace(t, testInputs(t))
			sink := &recordingSink{repo: repo}
			_, err := engine.NewOffline(engine.OfflineOptions{CorpusDir: corpusDir}).Run(context.Background(),
				engine.Input{Question: question, Effort: engine.EffortLow, JSONSchema: tt.schema, Workspace: repo}, sink)
			var ee *engine.Error
			require.ErrorAs(t, err, &ee)
			require.Equal(t, tt.code, ee.Code, ee.Message)
			require.NotContains(t, ee.Message, "root:") // no passwd content
			for _, c := range sink.checkpoints {
				require.NotEqual(t, workspace.CheckpointFinal, c.Type)
			}
		})
	}
}

func TestOfflineContinuation(t *testing.T) {
	t.Parallel()
	first := runOffline(t, engine.Input{Question: question, Effort: engine.EffortLow}, corpusDir)
	in := engine.Input{Question: question, Effort: engine.EffortLow, Workspace: first.repo, Continuation: true, PriorReport: first.res.Report}
	second := runOffline(t, in, corpusDir)
	rep := second.res.Report
	require.True(t, strings.HasPrefix(rep, strings.TrimRight(first.res.Report, "\n")), "the prior report is kept")
	cont := rep[len(strings.TrimRight(first.res.Report, "\n")):]
	require.Contains(t, cont, "\n## Continuation\n")
	require.Contains(t, cont, "### Continuation sources")

	// Numbering continues, and nothing cited before is cited again.
	prior := map[string]bool{}
	maxPrior := 0
	for _, m := range reSource.FindAllStringSubmatch(first.res.Report, -1) {
		prior[m[2]+":"+m[3]+"-"+m[4]] = true
		var n int
		fmt.Sscan(m[1], &n)
		maxPrior = max(maxPrior, n)
	}
	newSources := reSource.FindAllStringSubmatch(cont, -1)
	require.NotEmpty(t, newSources)
	for i, m := range newSources {
		require.Equal(t, fmt.Sprint(maxPrior+i+1), m[1])
		require.False(t, prior[m[2]+":"+m[3]+"-"+m[4]], "re-cited %v", m[0])
	}
	cps := second.sink.checkpoints
	require.Equal(t, workspace.CheckpointProgress, cps[0].Type)
	require.Equal(t, workspace.CheckpointContinuation, cps[len(cps)-1].Type)
	revs, err := second.repo.Revisions()
	require.NoError(t, err)
	require.Len(t, revs, len(first.sink.checkpoints)+len(cps))

	// A second continuation is numbered.
	in.PriorReport = rep
	third := runOffline(t, in, corpusDir)
	require.Contains(t, third.res.Report, "\n## Continuation 2\n")
}

func TestOfflineContinuationWithoutPriorReport(t *testing.T) {
	t.Parallel()
	r := runOffline(t, engine.Input{Question: question, Effort: engine.EffortLow, Continuation: true}, corpusDir)
	require.Contains(t, r.res.Report, "## Summary")
	require.Equal(t, workspace.CheckpointContinuation, r.sink.checkpoints[len(r.sink.checkpoints)-1].Type)
}

func TestOfflineBadInput(t *testing.T) {
	t.Parallel()
	repo := newWorkspace(t, nil)
	for _, in := range []engine.Input{
		{Question: "q", Effort: "extreme", Workspace: repo},
		{Question: "q", Effort: engine.EffortLow},
	} {
		_, err := engine.NewOffline(engine.OfflineOptions{}).Run(context.Background(), in, &recordingSink{repo: repo})
		var ee *engine.Error
		require.ErrorAs(t, err, &ee)
		require.Equal(t, engine.CodeEngineError, ee.Code)
	}
}

func TestOfflineCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	repo := newWorkspace(t, testInputs(t))
	_, err := engine.NewOffline(engine.OfflineOptions{CorpusDir: corpusDir}).Run(ctx,
		engine.Input{Question: question, Effort: engine.EffortLow, Workspace: repo}, &recordingSink{repo: repo})
	require.ErrorIs(t, err, context.Canceled)
}

// failingSink refuses checkpoints: the run must fail rather than report success.
type failingSink struct{ recordingSink }

func (*failingSink) Checkpoint(context.Context, string, string) (string, error) {
	return "", errors.New("disk full")
}

func TestOfflineCheckpointFailure(t *testing.T) {
	t.Parallel()
	repo := newWorkspace(t, testInputs(t))
	_, err := engine.NewOffline(engine.OfflineOptions{}).Run(context.Background(),
		engine.Input{Question: question, Effort: engine.EffortLow, Workspace: repo}, &failingSink{})
	require.ErrorContains(t, err, "disk full")
}

func TestOfflineExtractsDocuments(t *testing.T) {
	t.Parallel()
	inputs := map[string][]byte{
		"paper.pdf":   minimalPDF("Geothermal wells reach 150 degrees at depth."),
		"memo.docx":   minimalDOCX("Geothermal drilling costs fell by a third.", "Second paragraph about permits."),
		"page.html":   []byte(`<html><head><script>geothermal = "hidden script"</script></head><body><h2>Geothermal</h2><p>Geothermal plants run <b>all year</b>.</p></body></html>`),
		"broken.pdf":  []byte("%PDF-1.4 this is not really a pdf"),
		"image.png":   {0x89, 'P', 'N', 'G', 0, 0, 0, 0},
		"notes":       []byte("geothermal notes without an extension\n"),
		"latin1.txt":  {'g', 'e', 'o', 't', 'h', 'e', 'r', 'm', 'a', 'l', ' ', 0xe9, '\n'},
		"empty.txt":   {},
		"nested/a.md": []byte("Geothermal heat is steady.\n"),
	}
	repo := newWorkspace(t, inputs)
	r := runOffline(t, engine.Input{Question: "What about geothermal?", Effort: engine.EffortBuild, Workspace: repo}, "")
	rep := r.res.Report
	require.Contains(t, rep, "150 degrees")
	require.Contains(t, rep, "(text extracted from PDF)")
	require.Contains(t, rep, "drilling costs fell by a third")
	require.Contains(t, rep, "(text extracted from DOCX)")
	require.Contains(t, rep, "Geothermal plants run all year")
	require.Contains(t, rep, "(text extracted from HTML)")
	require.NotContains(t, rep, "hidden script")
	require.Contains(t, rep, "`input_files/notes`")
	require.Contains(t, rep, "`input_files/nested/a.md`, line 1")
	skipped := map[string]string{}
	for _, e := range r.sink.ofKind(engine.KindStatus) {
		if e.Title == "Skipped file" {
			skipped[e.Data["path"].(string)] = e.Data["reason"].(string)
		}
	}
	require.Contains(t, skipped["input_files/broken.pdf"], "unreadable PDF")
	require.Contains(t, skipped["input_files/image.png"], "binary file")
	require.Equal(t, "no text", skipped["input_files/empty.txt"])
	require.Len(t, skipped, 3)
}

// minimalPDF builds a one-page PDF showing text in Helvetica.
func minimalPDF(text string) []byte {
	content := fmt.Sprintf("BT /F1 12 Tf 72 712 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// minimalDOCX builds a Word document with one paragraph per argument.
func minimalDOCX(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t>%s</w:t></w:r></w:p>`, p)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("word/document.xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>%s</w:body></w:document>`, body.String())
	_ = zw.Close()
	return b.Bytes()
}

// BenchmarkOffline measures whole offline runs on the test corpus (5 files, 12 passages),
// checkpoints committed to a real git workspace like a job does:
//
//	go test ./engine/ -run '^$' -bench BenchmarkOffline -benchtime 200x
func BenchmarkOffline(b *testing.B) {
	for _, effort := range []string{engine.EffortLow, engine.EffortHigh} {
		b.Run(effort, func(b *testing.B) {
			inputs := testInputs(b)
			eng := engine.NewOffline(engine.OfflineOptions{CorpusDir: corpusDir})
			b.ReportAllocs()
			for b.Loop() {
				repo := newWorkspace(b, inputs)
				_, err := eng.Run(context.Background(), engine.Input{Question: question, Effort: effort, Workspace: repo}, &recordingSink{repo: repo})
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
	repo := newWorkspace(b, testInputs(b))
	eng := engine.NewOffline(engine.OfflineOptions{CorpusDir: corpusDir})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Run(context.Background(), engine.Input{Question: question, Effort: engine.EffortLow, Workspace: repo}, nullSink{}); err != nil {
			b.Fatal(err)
		}
	}
}
