package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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

// Discard is a Sink for runs nobody watches.
type Discard struct{}

func (Discard) Event(context.Context, Event) error { return nil }
func (Discard) Checkpoint(context.Context, string, string) (string, error) {
	return "", nil
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
	return s.engine.Run(ctx, in, Discard{})
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
