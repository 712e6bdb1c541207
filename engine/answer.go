package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/researchd/researchd/workspace"
)

// In-process answers: campaign workers answer one assignment each, up to 100,000 per campaign, so
// they skip what a research job carries (workspace repository, timeline, commits). An engine that
// can answer cheaply implements Answerer; Answers adapts any other engine.

// SourceFile is a read-only source given in memory (an expert's context file, a campaign's
// records); the offline engine cites it as Name.
type SourceFile struct {
	Name string
	Data []byte
}

// AnswerConfig is what every answer of one session shares.
type AnswerConfig struct {
	Effort     string         // low|medium|high|build (already clamped)
	JSONSchema map[string]any // nil = no structured output
	// ContextFiles are read-only sources for every answer (cited as context/<name>).
	ContextFiles []SourceFile
	Expert       *ExpertInfo
	SystemPrompt string
	Skills       []Skill
	// NoReport: the caller keeps only the structured output, so an engine may skip writing the
	// report (the offline engine does; engines with a model ignore it).
	NoReport bool
}

// AnswerSession answers assignments one at a time or concurrently; Close releases it.
type AnswerSession interface {
	// Answer researches one assignment; extra are sources for this answer only.
	Answer(ctx context.Context, question string, extra []SourceFile) (Result, error)
	Close() error
}

// Answerer opens answer sessions.
type Answerer interface {
	OpenAnswers(ctx context.Context, cfg AnswerConfig) (AnswerSession, error)
}

// Answers returns e's own Answerer when it has one (the offline engine: one index per session,
// nothing written), else an adapter that runs each answer as a full engine run in a throwaway
// workspace under tmpDir (for engines that call a model, whose answers take seconds anyway).
func Answers(e Engine, tmpDir string) Answerer {
	if a, ok := e.(Answerer); ok {
		return a
	}
	return runAnswerer{engine: e, dir: tmpDir}
}

// discard is a Sink for runs nobody watches.
type discard struct{}

func (discard) Event(context.Context, Event) error { return nil }
func (discard) Checkpoint(context.Context, string, string) (string, error) {
	return "", nil
}

// offlineSession holds the offline engine's index over a session's sources.
type offlineSession struct {
	cfg     AnswerConfig
	in      Input
	docs    []document
	skipped []skippedFile
	ix      *index
}

// OpenAnswers loads the context files and the corpus once and indexes them.
func (e *offline) OpenAnswers(ctx context.Context, cfg AnswerConfig) (AnswerSession, error) {
	in := Input{Effort: cfg.Effort, JSONSchema: cfg.JSONSchema, Expert: cfg.Expert}
	if _, ok := depths[in.Effort]; !ok {
		return nil, errorf(CodeEngineError, "unknown effort %q", in.Effort)
	}
	if _, _, err := in.outputSchema(); err != nil {
		return nil, err
	}
	s := &offlineSession{cfg: cfg, in: in}
	for _, f := range cfg.ContextFiles {
		s.add("context/"+f.Name, f.Data)
	}
	if e.opts.CorpusDir != "" {
		docs, skipped, err := loadSources(ctx, []sourceDir{{Label: "corpus", Dir: e.opts.CorpusDir}})
		if err != nil {
			return nil, err
		}
		s.docs, s.skipped = append(s.docs, docs...), append(s.skipped, skipped...)
	}
	s.ix = newIndex(s.docs)
	return s, nil
}

func (s *offlineSession) add(name string, data []byte) {
	doc, reason := extract(name, data)
	if reason != "" {
		s.skipped = append(s.skipped, skippedFile{name, reason})
		return
	}
	s.docs = append(s.docs, doc)
}

func (s *offlineSession) Close() error { return nil }

// Answer runs the offline engine's plan, search and report over the session's index (a fresh
// index when extra sources are given) and fills the output schema; nothing is written.
func (s *offlineSession) Answer(ctx context.Context, question string, extra []SourceFile) (Result, error) {
	ix, skipped := s.ix, s.skipped
	if len(extra) > 0 {
		more := &offlineSession{docs: slices.Clone(s.docs), skipped: slices.Clone(s.skipped)}
		for _, f := range extra {
			more.add(f.Name, f.Data)
		}
		ix, skipped = newIndex(more.docs), more.skipped
	}
	in := s.in
	in.Question = question
	r := &offlineRun{in: in, depth: depths[in.Effort], em: emitter{sink: discard{}}, ix: ix, skipped: skipped,
		cites: &citations{num: map[int]int{}}}
	subs := subQuestions(question, r.depth.SubQuestions)
	sections, err := r.sections(ctx, subs)
	if err != nil {
		return Result{}, err
	}
	schema, sch, err := in.outputSchema()
	if err != nil {
		return Result{}, err
	}
	var res Result
	if schema == nil || !s.cfg.NoReport {
		res.Report = r.render(subs, sections, priorReport{}, false, false)
	}
	if schema == nil {
		return res, nil
	}
	if res.StructuredOutput, err = r.structured(ctx, schema, sch); err != nil {
		return Result{}, err
	}
	return res, nil
}

// sections searches each sub-question as a run does, without its events and draft checkpoint.
func (r *offlineRun) sections(ctx context.Context, subs []subQuestion) ([]section, error) {
	var out []section
	used := map[int]bool{}
	for _, sq := range subs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		hits := r.ix.search(sq.Terms, r.depth.Passages*3, r.ix.requireAny(sq.Must, nil))
		if sq.Numbers {
			hits = r.ix.boostFigures(hits)
		}
		hits = diversify(hits, used, r.depth.Passages)
		for _, h := range hits {
			used[h.P] = true
		}
		out = append(out, section{Sub: sq, Hits: hits})
	}
	return out, nil
}

// runAnswerer answers with full engine runs in throwaway workspaces.
type runAnswerer struct {
	engine Engine
	dir    string
}

type runSession struct {
	engine  Engine
	cfg     AnswerConfig
	dir     string // the session's folder: its context files and the answers' workspaces
	context string
}

func (a runAnswerer) OpenAnswers(_ context.Context, cfg AnswerConfig) (AnswerSession, error) {
	if err := os.MkdirAll(a.dir, 0o750); err != nil {
		return nil, fmt.Errorf("engine: answers folder: %w", err)
	}
	dir, err := os.MkdirTemp(a.dir, "answers-")
	if err != nil {
		return nil, fmt.Errorf("engine: answers folder: %w", err)
	}
	s := &runSession{engine: a.engine, cfg: cfg, dir: dir}
	if len(cfg.ContextFiles) > 0 {
		s.context = filepath.Join(dir, "context")
		if err := writeSources(s.context, cfg.ContextFiles); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	return s, nil
}

func (s *runSession) Close() error { return os.RemoveAll(s.dir) }

// Answer runs the engine once in a fresh workspace (extra sources become its input files) and
// removes the workspace afterwards.
func (s *runSession) Answer(ctx context.Context, question string, extra []SourceFile) (Result, error) {
	dir, err := os.MkdirTemp(s.dir, "run-")
	if err != nil {
		return Result{}, fmt.Errorf("engine: answer workspace: %w", err)
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Init(dir)
	if err != nil {
		return Result{}, fmt.Errorf("engine: answer workspace: %w", err)
	}
	for _, f := range extra {
		if err := ws.WriteFile(InputDir+"/"+filepath.Base(f.Name), f.Data); err != nil {
			return Result{}, fmt.Errorf("engine: answer input: %w", err)
		}
	}
	in := Input{Question: question, Effort: s.cfg.Effort, JSONSchema: s.cfg.JSONSchema, Workspace: ws,
		Expert: s.cfg.Expert, SystemPrompt: s.cfg.SystemPrompt, Skills: s.cfg.Skills}
	if s.context != "" {
		in.ContextDirs = []string{s.context}
	}
	return s.engine.Run(ctx, in, discard{})
}

func writeSources(dir string, files []SourceFile) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("engine: sources folder: %w", err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Name)), f.Data, 0o440); err != nil {
			return fmt.Errorf("engine: write source %s: %w", f.Name, err)
		}
	}
	return nil
}
