// Package extractive is the engine without a model: it cuts the question into sub-questions, finds
// their answers in the sources with a trained answer model (docs/answer-model.md), writes a report
// that quotes them, and fills structured output from the same evidence. Same sources, same report.
package extractive

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/output"
	"github.com/researchd/researchd/engine/sources"
)

// Options configure the extractive engine.
type Options struct {
	// CorpusDir is an optional local folder searched besides each job's own files.
	CorpusDir string
	// Web, when set, searches the web for every sub-question (RESEARCH_SEARCH_PROVIDER).
	Web sources.WebSearcher
}

// New returns the built-in extractive engine: no model; it answers from the sources by
// quoting them (same sources, same report).
func New(opts Options) engine.Engine {
	return &extractive{opts: opts, corpora: &corpusCache{}}
}

type extractive struct {
	opts    Options
	corpora *corpusCache // indexes of recently read source sets, shared by the engine's runs
}

// Name is the extractive engine's name (RESEARCH_ENGINE=extractive).
const Name = "extractive"

func (*extractive) Name() string { return Name }

// extractiveRun carries one run's state.
type extractiveRun struct {
	in       engine.Input
	depth    depth
	em       engine.Emitter
	web      sources.WebSearcher
	c        *corpus
	skipped  []sources.Skipped
	cites    *citations
	prior    priorReport
	deadline time.Time
	notes    []string     // limitations met during the run, for the report
	basis    engine.Basis // the structured output's basis, once filled
	corpora  *corpusCache
	srcs     *sources.Store // the workspace's source store, opened at its first use (see sources)
}

// sources opens the workspace's source store once per run: only the run writes it while it runs,
// so the web search and storeRead can share one copy of its index.
func (r *extractiveRun) sources() (*sources.Store, error) {
	if r.srcs == nil {
		srcs, err := sources.Open(r.in.Workspace, r.in.Now)
		if err != nil {
			return nil, err
		}
		r.srcs = srcs
	}
	return r.srcs, nil
}

func (e *extractive) Run(ctx context.Context, in engine.Input, sink engine.Sink) (engine.Result, error) {
	if err := in.Validate(); err != nil {
		return engine.Result{}, err
	}
	schema, sch, err := in.OutputSchema()
	if err != nil {
		return engine.Result{}, err
	}
	d := depths[in.Effort]
	r := &extractiveRun{in: in, depth: d, em: engine.Emitter{Sink: sink}, web: e.opts.Web, deadline: time.Now().Add(d.Budget), corpora: e.corpora}
	return r.run(ctx, schema, sch, e.opts.CorpusDir)
}

func (r *extractiveRun) run(ctx context.Context, schema map[string]any, sch *jsonschema.Schema, corpusDir string) (engine.Result, error) {
	in, em := r.in, r.em
	err := em.Event(ctx, engine.KindStatus, "Research started", nlp.Collapse(in.Question), map[string]any{
		"engine": Name, "effort": in.Effort, "continuation": in.Continuation, "web_search": r.web != nil,
	})
	if err != nil {
		return engine.Result{}, err
	}
	if err := engine.RecordExpert(ctx, em, in); err != nil {
		return engine.Result{}, err
	}
	if in.Expert != nil && (in.SystemPrompt != "" || len(in.Skills) > 0 || len(in.Tools) > 0) {
		// Honest about what an engine without a model cannot follow: prose instructions and tools.
		err := em.Event(ctx, engine.KindStatus, "Expert instructions not applied",
			"The extractive engine has no model: it uses the expert's context files and output schema, but cannot follow its system prompt or skills or call its tools.", nil)
		if err != nil {
			return engine.Result{}, err
		}
	}

	subs, dropped, err := r.plan(ctx)
	if err != nil {
		return engine.Result{}, err
	}
	docs, err := r.read(ctx, corpusDir, subs)
	if err != nil {
		return engine.Result{}, err
	}
	if len(docs) == 0 && len(r.skipped) == 0 && r.web == nil {
		return r.noSources(ctx, schema, sch)
	}
	r.c = r.corpora.corpus(docs)

	var found []finding
	draftAt := (len(subs) + 1) / 2
	for i, sq := range subs {
		if err := ctx.Err(); err != nil {
			return engine.Result{}, fmt.Errorf("engine: %w", err)
		}
		f, err := r.research(ctx, i, sq)
		if err != nil {
			return engine.Result{}, err
		}
		found = append(found, f)
		if i+1 == draftAt && len(subs) > 1 {
			if err := r.draft(ctx, subs, found, dropped); err != nil {
				return engine.Result{}, err
			}
		}
	}
	if len(subs) == 1 {
		if err := r.draft(ctx, subs, found, dropped); err != nil {
			return engine.Result{}, err
		}
	}
	report := r.render(subs, found, dropped, false)

	var structured map[string]any
	if schema != nil {
		if structured, err = r.structured(ctx, schema, sch, found); err != nil {
			return engine.Result{}, err
		}
		// The runner verifies the basis's quotes and settles fields left without support.
		if err := engine.WriteBasis(r.in.Workspace, r.basis); err != nil {
			return engine.Result{}, err
		}
	}
	// The extractive engine calls no tools: required tool calls are reported as missed, not hidden.
	required, err := engine.ReportRequired(ctx, em, in.RequiredTools, nil)
	if err != nil {
		return engine.Result{}, err
	}
	srcs, err := r.sources()
	if err != nil {
		return engine.Result{}, err
	}
	if err := storeRead(srcs, r.c, r.cites.order, found); err != nil {
		return engine.Result{}, err
	}
	site := r.siteInput(found)
	res, err := output.Finish(ctx, em, in, report, structured, map[string]any{"path": engine.ReportPath, "sources": len(r.cites.order), "answered": answeredCount(found)}, site)
	res.RequiredTools = required
	return res, err
}

func answeredCount(fs []finding) int {
	n := 0
	for _, f := range fs {
		if f.answered() {
			n++
		}
	}
	return n
}

// plan chooses the sub-questions: the question's own clauses, or, in a continuation, the open
// questions the previous report named. dropped are clauses beyond the effort's budget.
func (r *extractiveRun) plan(ctx context.Context) (subs, dropped []subQuestion, err error) {
	in := r.in
	continuing := in.Continuation && strings.TrimSpace(in.PriorReport) != ""
	title := "Planning sub-questions"
	if continuing {
		r.prior = parsePrior(in.PriorReport)
		title = "Planning follow-up research"
		subs = r.prior.followUps(in.Question)
	} else {
		subs = subQuestions(in.Question, 100)
	}
	if n := researched(subs, r.depth.SubQuestions); len(subs) > n {
		subs, dropped = subs[:n], subs[n:]
	}
	var plan strings.Builder
	planned := make([]string, 0, len(subs))
	for i, s := range subs {
		fmt.Fprintf(&plan, "%d. %s\n", i+1, s.Text)
		planned = append(planned, s.Text)
	}
	for _, s := range dropped {
		fmt.Fprintf(&plan, "- not researched at effort %s: %s\n", in.Effort, s.Text)
	}
	err = r.em.Event(ctx, engine.KindThinking, title, plan.String(), map[string]any{"sub_questions": planned, "not_researched": len(dropped)})
	return subs, dropped, err
}

// maxParts is the most parts of one briefing researched at any effort.
const maxParts = 5

// researched is how many of subs an effort allowing budget sub-questions researches: the parts of
// one briefing ("brief me on X: what it treats, how to take it and what to watch out for") count
// as the one question the briefing is, up to maxParts of them.
func researched(subs []subQuestion, budget int) int {
	parts := 0
	for _, s := range subs {
		if s.Part {
			parts++
		}
	}
	if parts > 1 {
		return min(parts, maxParts) + min(len(subs)-parts, budget-1)
	}
	return min(budget, len(subs))
}

// read loads the local sources (job files, context folders, corpus) and, with a web searcher,
// the pages found for each sub-question within the effort's query and time budget.
func (r *extractiveRun) read(ctx context.Context, corpusDir string, subs []subQuestion) ([]extract.Document, error) {
	em := r.em
	dirs := sources.Folders(r.in, corpusDir)
	labels := make([]string, len(dirs))
	for i, d := range dirs {
		labels[i] = d.Label
	}
	if err := em.Event(ctx, engine.KindToolCall, "read_sources", strings.Join(labels, ", "), map[string]any{"tool": "read_sources", "folders": labels}); err != nil {
		return nil, err
	}
	docs, skipped, err := sources.Load(ctx, dirs)
	if err != nil {
		return nil, err
	}
	r.skipped = skipped
	paths := make([]string, len(docs))
	for i, d := range docs {
		paths[i] = d.Path
	}
	err = em.Event(ctx, engine.KindToolResult, "read_sources", fmt.Sprintf("%d readable files, %d skipped", len(docs), len(skipped)),
		map[string]any{"tool": "read_sources", "files": paths, "skipped": len(skipped)})
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		if err := em.Event(ctx, engine.KindStatus, "Skipped file", s.Path+": "+s.Reason, map[string]any{"path": s.Path, "reason": s.Reason}); err != nil {
			return nil, err
		}
	}
	web, err := r.searchWeb(ctx, subs)
	if err != nil {
		return nil, err
	}
	return append(docs, web...), nil
}

// noteRespelt tells the report's reader which words of the question were read as the sources
// write them: a name one letter off may be another person.
func (r *extractiveRun) noteRespelt(f finding) {
	if len(f.Respelt) == 0 {
		return
	}
	them := "it"
	if len(f.Respelt) > 1 {
		them = "them"
	}
	note := "Read " + strings.Join(f.Respelt, ", ") + ", as the sources write " + them + "."
	if !slices.Contains(r.notes, note) {
		r.notes = append(r.notes, note)
	}
}

// research answers one sub-question and records the search in the timeline.
func (r *extractiveRun) research(ctx context.Context, i int, sq subQuestion) (finding, error) {
	opts := findOptions{Candidates: r.depth.Candidates, Items: r.depth.Items, Hop: r.depth.Hop, Sources: r.depth.Sources, Answers: r.depth.Answers, Support: r.depth.Support, Skip: r.skip}
	find := func() finding {
		f := r.c.find(sq, opts)
		r.noteRespelt(f)
		return f
	}
	em := r.em
	if em.Discards() {
		// An in-process answer (a campaign record): nobody reads the timeline, so its payloads (the
		// hits, the finding rendered) are not built; the search itself is the same.
		return find(), nil
	}
	err := em.Event(ctx, engine.KindToolCall, "search", sq.Text, map[string]any{"tool": "search", "query": sq.Text, "terms": analyze(sq.Text).Terms})
	if err != nil {
		return finding{}, err
	}
	f := find()
	var lines []string
	var hits []map[string]any
	for _, u := range append(append([]int{}, f.Answer...), f.Support...) {
		un := r.c.units[u]
		lines = append(lines, strings.ReplaceAll(engine.CiteRange(r.c.docs[un.Doc].Path, un.Start, un.End), "`", ""))
		hits = append(hits, map[string]any{"path": r.c.docs[un.Doc].Path, "start_line": un.Start, "end_line": un.End, "kind": un.Kind})
	}
	if f.Compare != nil {
		t := r.c.tables[f.Compare.Table]
		lines = append([]string{"table comparison in " + r.c.docs[t.Doc].Path}, lines...)
	}
	result := strings.Join(lines, "\n")
	if !f.answered() {
		result = "not answered: " + f.Missing
	}
	data := map[string]any{"tool": "search", "query": sq.Text, "answered": f.answered(), "hits": hits, "best_score": roundScore(f.Best)}
	if err := em.Event(ctx, engine.KindToolResult, "search", result, data); err != nil {
		return finding{}, err
	}
	md := r.renderFinding(f)
	if err := em.Event(ctx, engine.KindText, "Finding: "+sq.Text, md, map[string]any{"section": i + 1}); err != nil {
		return finding{}, err
	}
	return f, nil
}

func roundScore(v float64) float64 { return float64(int(v*1e4+0.5)) / 1e4 }

// skip leaves out units already quoted (in the prior report, for a continuation).
func (r *extractiveRun) skip(u int) bool {
	if r.prior.text == "" {
		return false
	}
	un := r.c.units[u]
	return strings.Contains(r.prior.text, un.Text) || strings.Contains(r.prior.text, nlp.EscapeMarkdown(un.Text))
}

// draft writes and checkpoints the report so far.
func (r *extractiveRun) draft(ctx context.Context, subs []subQuestion, found []finding, dropped []subQuestion) error {
	draft := r.render(subs, found, dropped, true)
	if err := r.in.Workspace.WriteFile(engine.ReportPath, []byte(draft)); err != nil {
		return fmt.Errorf("engine: write draft: %w", err)
	}
	if err := r.em.Event(ctx, engine.KindPreview, "Draft report", nlp.Truncate(draft, 800), nil); err != nil {
		return err
	}
	msg := fmt.Sprintf("Draft report (%d of %d sub-questions)", len(found), len(subs))
	_, err := r.em.Checkpoint(ctx, msg, "progress")
	return err
}

// noSources ends a run that had nothing to read: no job files, context files, corpus or web
// search. It says so and is not charged (Result.NoSources).
func (r *extractiveRun) noSources(ctx context.Context, schema map[string]any, sch *jsonschema.Schema) (engine.Result, error) {
	msg := "No sources were available to this run: the job has no attached files, no expert context files, the server has no document corpus (RESEARCH_CORPUS_DIR) and web search is off (RESEARCH_SEARCH_PROVIDER=none; left unset, runs search Wikipedia). The extractive engine only answers from sources, so nothing was researched, and this run is not charged."
	if err := r.em.Event(ctx, engine.KindStatus, "No sources", msg, map[string]any{"charged": false}); err != nil {
		return engine.Result{}, err
	}
	var report string
	if r.in.Continuation && strings.TrimSpace(r.in.PriorReport) != "" {
		report = strings.TrimRight(r.in.PriorReport, "\n") + "\n\n" + r.continuationHeading() + msg + "\n"
	} else {
		report = fmt.Sprintf("# %s\n\n## Answer\n\n%s\n", nlp.EscapeMarkdown(output.Title(r.in.Question)), msg)
	}
	var structured map[string]any
	if schema != nil {
		// Nothing can be extracted: every field is null where the schema allows it, never invented.
		var err error
		if structured, err = unsupportedOutput(schema, sch); err != nil {
			return engine.Result{}, err
		}
		if err := engine.WriteBasis(r.in.Workspace, engine.Basis{}); err != nil {
			return engine.Result{}, err
		}
	}
	res, err := output.Finish(ctx, r.em, r.in, report, structured, map[string]any{"path": engine.ReportPath, "sources": 0}, output.Site{})
	res.NoSources = true
	return res, err
}

// structured fills the caller's schema from the evidence and validates it.
func (r *extractiveRun) structured(ctx context.Context, schema map[string]any, sch *jsonschema.Schema, found []finding) (map[string]any, error) {
	em := r.em
	if err := em.Event(ctx, engine.KindToolCall, "extract_structured_output", "Filling json_schema from the evidence", map[string]any{"tool": "extract_structured_output"}); err != nil {
		return nil, err
	}
	x := newExtractor(r.c, r.in.Question, found, r.depth.Sources)
	out, err := engine.NormalizeJSON(x.fillObject(schema, "", true))
	if err != nil {
		return nil, engine.Errorf(engine.CodeStructuredOutputInvalid, "structured output is not JSON: %v", err)
	}
	b, _ := json.Marshal(out)
	if err := em.Event(ctx, engine.KindToolResult, "extract_structured_output", string(b), map[string]any{"tool": "extract_structured_output", "notes": x.notes, "basis": x.basis}); err != nil {
		return nil, err
	}
	r.basis = x.basis
	if err := engine.ValidateOutput(sch, out); err != nil {
		if e2 := em.Event(ctx, engine.KindStatus, "Structured output invalid", err.Error(), nil); e2 != nil {
			return nil, e2
		}
		return nil, err
	}
	return out, nil
}

// unsupportedOutput is the structured output of a run without sources: null for every field that
// allows it. A required field that does not fails the run, named.
func unsupportedOutput(schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	props, _ := schema["properties"].(map[string]any)
	required := engine.RequiredFields(schema)
	out := map[string]any{}
	var missing []string
	for _, name := range sortedKeys(props) {
		switch {
		case engine.AllowsNull(schema, props[name]):
			out[name] = nil
		case required[name]:
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, engine.Errorf(engine.CodeStructuredOutputInvalid,
			"required field %s of json_schema cannot be filled: the run has no sources, and the schema does not allow null", engine.QuotedNames(missing))
	}
	if err := engine.ValidateOutput(sch, out); err != nil {
		return nil, err
	}
	return out, nil
}
