package extractive

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/engine/sources"
)

// extractiveSession holds the extractive engine's sources for a session's answers, and their index:
// built once per session, since indexing (stemming every unit of a corpus) costs far more than
// answering one question over it.
type extractiveSession struct {
	cfg     engine.AnswerConfig
	in      engine.Input
	docs    []extract.Document
	skipped []sources.Skipped
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
func (e *extractive) OpenAnswers(ctx context.Context, cfg engine.AnswerConfig) (engine.AnswerSession, error) {
	in := engine.Input{Effort: cfg.Effort, JSONSchema: cfg.JSONSchema, Expert: cfg.Expert}
	if _, ok := depths[in.Effort]; !ok {
		return nil, engine.Errorf(engine.CodeEngineError, "unknown effort %q", in.Effort)
	}
	schema, sch, err := in.OutputSchema()
	if err != nil {
		return nil, err
	}
	s := &extractiveSession{cfg: cfg, in: in, schema: schema, sch: sch, found: map[string]finding{}}
	for _, f := range cfg.ContextFiles {
		s.add("context/"+f.Name, f.Data)
	}
	if e.opts.CorpusDir != "" {
		docs, skipped, err := sources.Load(ctx, []sources.Folder{{Label: "corpus", Dir: e.opts.CorpusDir}})
		if err != nil {
			return nil, err
		}
		s.docs, s.skipped = append(s.docs, docs...), append(s.skipped, skipped...)
	}
	s.corpus = e.corpora.corpus(s.docs) // sessions over the same sources share one index
	return s, nil
}

func (s *extractiveSession) add(name string, data []byte) {
	doc, reason := extract.File(name, data)
	if reason != "" {
		s.skipped = append(s.skipped, sources.Skipped{Path: name, Reason: reason})
		return
	}
	s.docs = append(s.docs, doc)
}

func (s *extractiveSession) Close() error { return nil }

// Answer runs the extractive engine's plan, search and report over the session's sources plus
// extra, and fills the output schema; nothing is written and no event is kept.
func (s *extractiveSession) Answer(ctx context.Context, a engine.Assignment) (engine.Result, error) {
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
	r := &extractiveRun{in: in, depth: d, em: engine.Emitter{Sink: engine.Discard{}}, deadline: time.Now().Add(d.Budget), skipped: more.skipped}
	subs, dropped, err := r.plan(ctx)
	if err != nil {
		return engine.Result{}, err
	}
	if subject := nlp.Uniq(nlp.Terms(a.Subject)); len(subject) > 0 {
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
			return engine.Result{}, fmt.Errorf("engine: %w", err)
		}
		f, err := s.research(ctx, r, i, sq, len(extra) == 0)
		if err != nil {
			return engine.Result{}, err
		}
		found = append(found, f)
	}
	var res engine.Result
	if !s.cfg.NoReport {
		res.Report = r.render(subs, found, dropped, false)
	}
	if s.schema == nil {
		return res, nil
	}
	if res.StructuredOutput, err = r.structured(ctx, s.schema, s.sch, found); err != nil {
		return engine.Result{}, err
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
