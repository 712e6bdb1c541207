package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// session makes the model calls of one run (or one draft): each request is fitted to the model's
// context window, asked in the most constrained answer format the server accepts, and retried
// while the server is busy, inside the run's time. What it learns about the server goes to the
// engine's memory for later runs.
type session struct {
	e    *openaiEngine
	em   engine.Emitter
	caps capabilities
	// used counts tokens (prompt + completion) as the server reports them, else as estimated.
	used                     int64
	promptUsed, completeUsed int64
	answered                 int // calls the server answered
}

// chatMsg is one message, kept in the engine's own form so it can be measured and shortened.
type chatMsg struct {
	Role    string // system, user, assistant or tool
	Content string
	Calls   []toolCall // an assistant's native tool calls
	CallID  string     // a tool message's call
	// Short is a shortened form of a tool result, used when the window is tight ("" for other
	// messages and for results already shortened).
	Short string
}

type toolCall struct{ ID, Name, Args string }

// jsonFormat asks for a JSON object matching Schema.
type jsonFormat struct {
	Name   string
	Schema map[string]any
}

// chatReq is one model call.
type chatReq struct {
	// Build returns the messages for a prompt of at most budget tokens (shortening what it must),
	// or errContextTooSmall.
	Build  func(budget int) ([]chatMsg, error)
	Tools  []toolSpec // offered natively; nil: none
	Format *jsonFormat
	Want   int64 // completion tokens wanted
	Least  int64 // completion tokens worth asking at least (the prompt is shortened to leave them)
	What   string
}

// reply is the model's answer.
type reply struct {
	Content, Refusal, Finish string
	Calls                    []toolCall
}

// estimateTokens errs on the safe side: about three bytes a token (English runs near four).
func estimateTokens(s string) int { return len(s)/3 + 1 }

func estimateMsgs(msgs []chatMsg) int {
	n := 0
	for _, m := range msgs {
		n += estimateTokens(m.Content) + 6 // role and framing
		for _, c := range m.Calls {
			n += estimateTokens(c.Name+c.Args) + 8
		}
	}
	return n
}

// safetyTokens keep a margin between the estimate and the window.
const safetyTokens = 64

// chat makes one model call: it fits the request to the window, steps down the answer format or
// the window when the server refuses them, and retries while the server is busy.
func (s *session) chat(ctx context.Context, req chatReq) (reply, error) {
	for tries := 0; ; tries++ {
		native := len(req.Tools) > 0
		toolTok := 0
		var toolParams []openai.ChatCompletionToolUnionParam
		if native {
			toolParams = toolUnion(req.Tools)
			b, _ := json.Marshal(toolParams)
			toolTok = estimateTokens(string(b))
		}
		instr := ""
		if req.Format != nil && s.caps.Format != formatSchema {
			instr = schemaInstruction(req.Format.Schema)
		}
		window := s.caps.Context
		reserve := int(min(req.Want, max(req.Least, int64(window/4))))
		budget := window - reserve - toolTok - estimateTokens(instr) - safetyTokens
		msgs, err := req.Build(budget)
		if err != nil {
			if errors.Is(err, errContextTooSmall) {
				return reply{}, engine.Errorf(engine.CodeProviderError, "%s does not fit the model's context window of %d tokens (%s): set a larger context on the model server (and RESEARCH_MODEL_CONTEXT)",
					req.What, window, s.caps.ContextFrom)
			}
			return reply{}, err
		}
		if instr != "" {
			msgs = appendToLast(msgs, instr)
		}
		prompt := estimateMsgs(msgs) + toolTok
		maxTok := min(req.Want, int64(window-prompt-safetyTokens))
		if maxTok < min(req.Want, 64) {
			maxTok = min(req.Want, 64)
		}
		params := openai.ChatCompletionNewParams{Model: s.e.opts.Model, Messages: toParams(msgs), MaxCompletionTokens: openai.Int(maxTok), Tools: toolParams}
		if s.caps.Server == "ollama" || s.caps.Server == "llama.cpp" {
			params.MaxTokens = openai.Int(maxTok) // their OpenAI layers read max_tokens
		}
		if req.Format != nil {
			params.ResponseFormat = responseFormat(req.Format, s.caps.Format)
		}
		resp, err := s.send(ctx, params, req.What)
		if err == nil {
			return s.accept(resp, prompt, req.What)
		}
		var se *statusError
		if !errors.As(err, &se) || tries >= 8 {
			return reply{}, err
		}
		switch {
		case isContextError(se):
			if err := s.shrink(ctx, se, window, prompt, req.What); err != nil {
				return reply{}, err
			}
		case native && se.Status >= 400 && se.Status < 500 && reToolsRefused.MatchString(se.Message):
			return reply{}, &toolsRefused{err: err}
		case req.Format != nil && s.caps.Format < formatPrompt && se.Status >= 400 && se.Status < 500 && reFormatRefused.MatchString(se.Message):
			s.caps.Format++
			f := s.caps.Format
			s.e.learn(func(c *capabilities) { c.Format = max(c.Format, f) })
			if err := s.em.Event(ctx, engine.KindStatus, "Answer format changed", fmt.Sprintf("The model server refused the answer format (%s); JSON is now asked %s.",
				se.Message, map[int]string{formatObject: "with response_format json_object and the schema in the prompt", formatPrompt: "with the schema in the prompt"}[f]),
				map[string]any{"json_format": formatNames[f]}); err != nil {
				return reply{}, err
			}
		default:
			return reply{}, err
		}
	}
}

// shrink lowers the window after a context-length refusal: to the limit the server named, else
// by a third of what was sent, and remembers it.
func (s *session) shrink(ctx context.Context, se *statusError, window, prompt int, what string) error {
	next := contextLimit(se.Message)
	if next <= 0 || next >= window {
		next = min(window, prompt) * 2 / 3
	}
	if next < minContext {
		return engine.Errorf(engine.CodeProviderError, "%s does not fit the model's context window: the server refused %d tokens (%s)", what, prompt, se.Message)
	}
	s.caps.Context, s.caps.ContextFrom = next, "learned from the server's context-length refusal"
	s.e.learn(func(c *capabilities) {
		if c.Context > next {
			c.Context, c.ContextFrom = next, s.caps.ContextFrom
		}
	})
	return s.em.Event(ctx, engine.KindStatus, "Context window exceeded",
		fmt.Sprintf("The model server refused %s as too long for its context (%s); it is sent again within %d tokens, older tool results shortened and fewer passages.", what, se.Message, next),
		map[string]any{"context_tokens": next})
}

// accept accounts for an answer's tokens and reads its first choice.
func (s *session) accept(resp *openai.ChatCompletion, prompt int, what string) (reply, error) {
	if len(resp.Choices) == 0 {
		return reply{}, engine.Errorf(engine.CodeProviderError, "the model server returned no choices (%s)", what)
	}
	m := resp.Choices[0].Message
	pt, ct := resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	if resp.Usage.TotalTokens == 0 { // not reported (some servers, streamed answers)
		pt, ct = int64(prompt), int64(estimateTokens(m.Content))
	}
	s.used += pt + ct
	s.promptUsed += pt
	s.completeUsed += ct
	rep := reply{Content: m.Content, Refusal: m.Refusal, Finish: resp.Choices[0].FinishReason}
	for _, tc := range m.ToolCalls {
		rep.Calls = append(rep.Calls, toolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return rep, nil
}

// toolsRefused: the server refused the tools parameter.
type toolsRefused struct{ err error }

func (e *toolsRefused) Error() string { return "the model server refused tools: " + e.err.Error() }
func (e *toolsRefused) Unwrap() error { return e.err }

func isContextError(se *statusError) bool {
	return (se.Status == 400 || se.Status == 413 || se.Status == 422 || se.Status == 500) && reContextError.MatchString(se.Message)
}

// maxAttemptsNoDeadline bounds the retries of a call whose context has no deadline.
const maxAttemptsNoDeadline = 8

// gaveUp: the server stayed busy until the time left could not cover another wait.
type gaveUp struct {
	err      error
	attempts int
	elapsed  time.Duration
	deadline bool // the wait would have passed the deadline
}

func (e *gaveUp) Error() string {
	return fmt.Sprintf("%v (%d attempts over %s)", e.err, e.attempts, e.elapsed.Round(time.Second))
}
func (e *gaveUp) Unwrap() error { return e.err }

// send makes the HTTP call, retrying a busy or briefly unreachable server with backoff (or as long
// as its Retry-After says) while the context's deadline leaves time for the wait.
func (s *session) send(ctx context.Context, params openai.ChatCompletionNewParams, what string) (*openai.ChatCompletion, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		resp, err := s.e.client.Chat.Completions.New(ctx, params)
		if err == nil {
			s.answered++
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, ok := s.retryWait(err, attempt)
		if !ok {
			return nil, &providerCallError{err}
		}
		// A wait is worth it only if time is left after it for the answer.
		dl, hasDL := ctx.Deadline()
		margin := min(10*time.Second, max(50*time.Millisecond, time.Until(dl)/10))
		if (hasDL && time.Now().Add(wait+margin).After(dl)) || (!hasDL && attempt >= maxAttemptsNoDeadline) {
			return nil, &providerCallError{&gaveUp{err: err, attempts: attempt, elapsed: time.Since(start), deadline: hasDL}}
		}
		s.e.log.Warn("model server busy, retrying", "model", s.e.opts.Model, "call", what, "attempt", attempt, "wait", wait, "err", err)
		if err := s.em.Event(ctx, engine.KindStatus, "Model server busy",
			fmt.Sprintf("%s: %s; attempt %d, retrying in %s.", what, nlp.Truncate(err.Error(), 200), attempt+1, wait.Round(10*time.Millisecond)),
			map[string]any{"attempt": attempt, "wait_ms": wait.Milliseconds()}); err != nil {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryWait says whether err is worth another attempt, and after how long (exponential backoff
// from Options.RetryBase, at least what Retry-After asks): rate limits, overload and gateway
// errors, a refused or reset connection (a server restarting), an answer that broke off.
func (s *session) retryWait(err error, attempt int) (time.Duration, bool) {
	var se *statusError
	var sb *streamBroken
	switch {
	case errors.As(err, &se):
		if isContextError(se) {
			return 0, false
		}
		switch se.Status {
		case 408, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529:
		default:
			return 0, false
		}
	case errors.As(err, &sb):
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// A server that answered before and now refuses or drops the connection is restarting; one
		// that never answered is not there (a wrong URL), and waiting will not bring it.
		if s.answered == 0 {
			return 0, false
		}
	default:
		return 0, false
	}
	base := s.e.opts.RetryBase
	if base <= 0 {
		base = time.Second
	}
	d := min(base<<min(attempt-1, 10), 30*time.Second)
	d = d/2 + rand.N(d/2+1) // jitter, so concurrent runs do not retry in step
	// The server's Retry-After is a floor: a server that asks for less than the backoff (or for
	// nothing) is not hammered.
	if se != nil {
		d = max(d, se.RetryAfter)
	}
	return d, true
}

// schemaInstruction tells a model without schema-constrained decoding what to answer.
func schemaInstruction(schema map[string]any) string {
	b, _ := json.Marshal(schema)
	return "\n\nAnswer with one JSON object only (no prose, no code fence) that matches this JSON Schema:\n" + string(b)
}

func appendToLast(msgs []chatMsg, text string) []chatMsg {
	out := append([]chatMsg(nil), msgs...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == "user" {
			out[i].Content += text
			return out
		}
	}
	return append(out, chatMsg{Role: "user", Content: text})
}

func responseFormat(f *jsonFormat, level int) openai.ChatCompletionNewParamsResponseFormatUnion {
	switch level {
	case formatSchema:
		return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
			JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: f.Name, Schema: f.Schema, Strict: openai.Bool(false)},
		}}
	case formatObject:
		return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}}
	}
	return openai.ChatCompletionNewParamsResponseFormatUnion{}
}

// toParams converts messages to the SDK's form.
func toParams(msgs []chatMsg) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "system":
			out = append(out, openai.SystemMessage(m.Content))
		case "assistant":
			if len(m.Calls) == 0 {
				out = append(out, openai.AssistantMessage(m.Content))
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, c := range m.Calls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
				}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case "tool":
			out = append(out, openai.ToolMessage(m.Content, m.CallID))
		default:
			out = append(out, openai.UserMessage(m.Content))
		}
	}
	return out
}
