package llm

import (
	"context"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// jsonAsk is one request for a JSON object: the report, the structured output, its basis, a draft.
type jsonAsk struct {
	// Build makes the messages within budget tokens, tail (the request and any retry) last.
	Build  func(budget int, tail []chatMsg) ([]chatMsg, error)
	Prompt string
	Format jsonFormat
	// Sch validates the answer (nil: any object); Check finds further problems (nil: none).
	Sch   *jsonschema.Schema
	Check func(obj map[string]any) []string
	// Fix words the retry request from the problems.
	Fix func(problems []string) string
	// RetryUnreadable: whether an answer without a JSON object is sent back too (else only an
	// object with problems is).
	RetryUnreadable bool
	Want            int64
	What            string
	// Answered is told each answer (for the timeline).
	Answered func(attempt int, raw string, obj map[string]any, problems []string) error
}

// askJSON asks for a JSON object, reads it with the one parser (jsonparse.go), validates and
// checks it, and sends a faulty answer back once with its problems. It returns the last object
// read (nil when none was) and the problems it still has.
func (s *session) askJSON(ctx context.Context, a jsonAsk) (map[string]any, []string, error) {
	tail := []chatMsg{{Role: "user", Content: a.Prompt}}
	var obj map[string]any
	var problems []string
	for attempt := 1; attempt <= 2; attempt++ {
		t := tail
		rep, err := s.chat(ctx, chatReq{Build: func(b int) ([]chatMsg, error) { return a.Build(b, t) }, Format: &a.Format,
			Want: a.Want, Least: min(a.Want, 1024), What: a.What})
		if err != nil {
			return nil, nil, err
		}
		if rep.Refusal != "" {
			return nil, nil, engine.Errorf(engine.CodeProviderError, "the model refused: %s", nlp.Truncate(rep.Refusal, 300))
		}
		var perr error
		obj, perr = parseAnswer(rep.Content, a.Format.Schema, a.Sch)
		problems = nil
		switch {
		case perr != nil:
			problems = []string{problemText(perr)}
			if rep.Finish == "length" {
				problems = append(problems, "the answer was cut off at its length limit: answer more briefly")
			}
		case a.Check != nil:
			problems = a.Check(obj)
		}
		if a.Answered != nil {
			if err := a.Answered(attempt, rep.Content, obj, problems); err != nil {
				return nil, nil, err
			}
		}
		if len(problems) == 0 || (obj == nil && !a.RetryUnreadable) {
			break
		}
		answer := strings.TrimSpace(stripThinking(rep.Content))
		tail = append(tail, chatMsg{Role: "assistant", Content: cutText(answer, 6000)}, chatMsg{Role: "user", Content: a.Fix(problems)})
	}
	return obj, problems, nil
}

// errorNaming is the failure of an answer that still has problems: each problem names its field.
func errorNaming(code, what string, problems []string) error {
	if len(problems) == 0 {
		return errors.New(what)
	}
	return engine.Errorf(code, "%s: %s", what, nlp.Truncate(strings.Join(problems, "; "), 600))
}
