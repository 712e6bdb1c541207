package engine

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/workspace"
)

// In-process answers: campaign workers answer one assignment each, up to 100,000 per campaign, so
// they skip what a research job carries (workspace repository, timeline, commits). An engine that
// can answer cheaply implements Answerer; Answers adapts any other engine.

// SourceFile is a read-only source given in memory (an expert's context file, a campaign's
// records); the extractive engine cites it as Name.
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
	// NoReport skips rendering the Markdown report when only structured output is wanted.
	NoReport bool
}

// Assignment is one piece of work for an answer session.
type Assignment struct {
	// Question is the whole assignment as a model reads it (a campaign's instruction with its
	// record; docs/architecture.md: Campaigns).
	Question string
	// Ask is what an engine without a model plans its search from: the instruction alone, or the
	// record's own question. Empty means Question.
	Ask string
	// Subject names what the answer must be about (a record's identity, "Acme Corp"): a passage
	// that does not mention it cannot answer, however well it matches Ask. Empty: no constraint.
	Subject string
	// Extra are sources for this answer only.
	Extra []SourceFile
}

// AnswerSession answers assignments one at a time or concurrently; Close releases it.
type AnswerSession interface {
	Answer(ctx context.Context, a Assignment) (Result, error)
	Close() error
}

// Answerer opens answer sessions.
type Answerer interface {
	OpenAnswers(ctx context.Context, cfg AnswerConfig) (AnswerSession, error)
}

// Answers returns e's own Answerer when it has one (the extractive engine: one index per session,
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

// extractiveSession holds the extractive engine's sources for a session's answers, and their index:
// built once per session, since indexing (stemming every unit of a corpus) costs far more than
// answering one question over it.
type extractiveSession struct {
	cfg     AnswerConfig
	in      Input
	docs    []document
	skipped []skippedFile
	corpus  *corpus
	schema  map[string]any     // the output schema, normalized; nil without one
	sch     *jsonschema.Schema // compiled once: compiling costs more than filling it
	// found memoizes searches of the session's corpus by sub-question: a campaign asks the same
	// instruction of every record, so most sub-questions repeat, and a search is a pure function of
	// the corpus and the sub-question (answers have no prior report, so nothing is skipped).
	mu    sync.Mutex
	found map[string]finding
}

// maxFound bounds a session's memo of searches.
const maxFound = 1024

func foundKey(sq subQuestion) string {
	return sq.Text + "\x00" + strings.Join(sq.Carry, "\x00") + "\x00" + strings.Join(sq.Subject, "\x00")
}

func (s *extractiveSession) memo(key string) (finding, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.found[key]
	return f, ok
}

func (s *extractiveSession) remember(key string, f finding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.found) < maxFound {
		s.found[key] = f
	}
}

// OpenAnswers loads the context files and the corpus once.
func (e *extractive) OpenAnswers(ctx context.Context, cfg AnswerConfig) (AnswerSession, error) {
	in := Input{Effort: cfg.Effort, JSONSchema: cfg.JSONSchema, Expert: cfg.Expert}
	if _, ok := depths[in.Effort]; !ok {
		return nil, errorf(CodeEngineError, "unknown effort %q", in.Effort)
	}
	schema, sch, err := in.outputSchema()
	if err != nil {
		return nil, err
	}
	s := &extractiveSession{cfg: cfg, in: in, schema: schema, sch: sch, found: map[string]finding{}}
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
	s.corpus = e.corpora.corpus(s.docs) // sessions over the same sources share one index
	return s, nil
}

func (s *extractiveSession) add(name string, data []byte) {
	doc, reason := extract(name, data)
	if reason != "" {
		s.skipped = append(s.skipped, skippedFile{name, reason})
		return
	}
	s.docs = append(s.docs, doc)
}

func (s *extractiveSession) Close() error { return nil }

// Answer runs the extractive engine's plan, search and report over the session's sources plus
// extra, and fills the output schema; nothing is written and no event is kept.
func (s *extractiveSession) Answer(ctx context.Context, a Assignment) (Result, error) {
	extra := a.Extra
	more := &extractiveSession{docs: s.docs, skipped: s.skipped}
	if len(extra) > 0 {
		more.docs, more.skipped = slices.Clone(s.docs), slices.Clone(s.skipped)
		for _, f := range extra {
			more.add(f.Name, f.Data)
		}
	}
	in := s.in
	in.Question = cmp.Or(a.Ask, a.Question)
	d := depths[in.Effort]
	r := &extractiveRun{in: in, depth: d, em: emitter{sink: discard{}}, deadline: time.Now().Add(d.Budget), skipped: more.skipped}
	subs, dropped, err := r.plan(ctx)
	if err != nil {
		return Result{}, err
	}
	if subject := uniq(terms(a.Subject)); len(subject) > 0 {
		for i := range subs {
			subs[i].Subject = subject
		}
	}
	if len(extra) > 0 {
		r.c = newCorpus(more.docs)
	} else {
		// The session's index, shared: each answer gets its own idf cache, so answers may run
		// concurrently.
		r.c = s.corpus.forRun()
	}
	found := make([]finding, 0, len(subs))
	for i, sq := range subs {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("engine: %w", err)
		}
		f, err := s.research(ctx, r, i, sq, len(extra) == 0)
		if err != nil {
			return Result{}, err
		}
		found = append(found, f)
	}
	var res Result
	if !s.cfg.NoReport {
		res.Report = r.render(subs, found, dropped, false)
	}
	if s.schema == nil {
		return res, nil
	}
	if res.StructuredOutput, err = r.structured(ctx, s.schema, s.sch, found); err != nil {
		return Result{}, err
	}
	return res, nil
}

// research answers sq through r, from the session's memo when r searches the session's own
// corpus (shared): a search over extra sources is the answer's alone.
func (s *extractiveSession) research(ctx context.Context, r *extractiveRun, i int, sq subQuestion, shared bool) (finding, error) {
	if !shared {
		return r.research(ctx, i, sq)
	}
	key := foundKey(sq)
	if f, ok := s.memo(key); ok {
		return f, nil
	}
	f, err := r.research(ctx, i, sq)
	if err != nil {
		return finding{}, err
	}
	s.remember(key, f)
	return f, nil
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
func (s *runSession) Answer(ctx context.Context, a Assignment) (Result, error) {
	question, extra := a.Question, a.Extra
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
