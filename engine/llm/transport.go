package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/researchd/researchd/engine/nlp"
)

// The engine reads the model server's HTTP answers itself (a middleware under the SDK) because
// OpenAI-compatible servers differ from OpenAI in ways the SDK does not expect: error bodies that
// are a bare string or plain text, a streamed (SSE) answer to a request that did not ask for one,
// an HTML error page with status 200. Each becomes either a normal chat completion or one of the
// errors below, which say what the server did.

// maxAnswerBytes bounds what is read of one answer (a runaway server cannot exhaust memory).
const maxAnswerBytes = 32 << 20

// statusError is an HTTP error status from the model server.
type statusError struct {
	Status     int
	Message    string        // the server's own message, when it gave one
	RetryAfter time.Duration // from Retry-After or Retry-After-Ms; 0: not said
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("HTTP %d", e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// answerError is a 2xx answer that is not a chat completion.
type answerError struct{ what string }

func (e *answerError) Error() string { return e.what }

// readAnswers is the middleware: error statuses become *statusError, a streamed answer is
// assembled into one chat completion, and anything else that is not JSON is an *answerError.
func readAnswers(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	_ = res.Body.Close()
	if err != nil {
		return nil, &streamBroken{err: err}
	}
	if res.StatusCode >= 400 {
		return nil, &statusError{Status: res.StatusCode, Message: errorMessage(body), RetryAfter: retryAfter(res.Header, time.Now())}
	}
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	trimmed := bytes.TrimSpace(body)
	switch {
	case mt == "text/event-stream" || bytes.HasPrefix(trimmed, []byte("data:")):
		if body, err = assembleStream(body); err != nil {
			return nil, err
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		// Some servers report a failure with status 200: an error object and no choices.
		var probe struct {
			Choices json.RawMessage `json:"choices"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(trimmed, &probe) == nil && probe.Choices == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
			return nil, &statusError{Status: res.StatusCode, Message: errorMessage(trimmed)}
		}
	default:
		return nil, &answerError{what: fmt.Sprintf("the model server answered HTTP %d with %s instead of a chat completion: %q",
			res.StatusCode, firstNonEmpty(mt, "no content type"), nlp.Truncate(nlp.Collapse(string(trimmed)), 120))}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.Header = res.Header.Clone()
	res.Header.Set("Content-Type", "application/json")
	res.Header.Del("Content-Encoding")
	return res, nil
}

// errorMessage finds the message in an error body: {"error": {"message"}} (OpenAI, vLLM,
// llama.cpp), {"error": "..."} (Ollama's own API), {"message"} or {"detail"}, else the text itself.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	msg := ""
	if err := json.Unmarshal(body, &v); err == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
			// llama.cpp says how large its context is beside the message: keep it for parsing.
			var n struct {
				NCtx int `json:"n_ctx"`
			}
			if json.Unmarshal(v.Error, &n) == nil && n.NCtx > 0 {
				msg += fmt.Sprintf(" (n_ctx %d)", n.NCtx)
			}
		case json.Unmarshal(v.Error, &s) == nil:
			msg = s
		case v.Message != "":
			msg = v.Message
		case v.Detail != nil:
			b, _ := json.Marshal(v.Detail)
			msg = string(b)
		}
	} else {
		msg = string(body)
	}
	return nlp.Truncate(nlp.Collapse(msg), 400)
}

// retryAfter reads Retry-After-Ms, or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// streamBroken: the connection failed while the answer was being read.
type streamBroken struct{ err error }

func (e *streamBroken) Error() string { return "the answer broke off: " + e.err.Error() }
func (e *streamBroken) Unwrap() error { return e.err }

// streamChunk is one event of a streamed chat completion.
type streamChunk struct {
	ID      string `json:"id"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type streamedCall struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Fn   struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// assembleStream turns a streamed answer (server-sent events of chat.completion.chunk) into the
// chat completion it adds up to. An error event is a *statusError (status 502: the server failed
// mid-answer); a stream without a single chunk is an *answerError.
func assembleStream(body []byte) ([]byte, error) {
	var content, refusal strings.Builder
	var calls []*streamedCall
	var id, model, finish string
	var created int64
	var usage json.RawMessage
	chunks := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxAnswerBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // event:, id:, comments and blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var ch streamChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, &answerError{what: "the model server streamed an event that is not JSON: " + nlp.Truncate(data, 120)}
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			return nil, &statusError{Status: http.StatusBadGateway, Message: "the streamed answer ended with an error: " + errorMessage([]byte(`{"error":`+string(ch.Error)+`}`))}
		}
		chunks++
		id, model, created = firstNonEmpty(ch.ID, id), firstNonEmpty(ch.Model, model), max(created, ch.Created)
		if len(ch.Usage) > 0 && string(ch.Usage) != "null" {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			content.WriteString(c.Delta.Content)
			refusal.WriteString(c.Delta.Refusal)
			finish = firstNonEmpty(c.FinishReason, finish)
			for _, tc := range c.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, &streamedCall{Type: "function"})
				}
				call := calls[tc.Index]
				call.ID = firstNonEmpty(call.ID, tc.ID)
				call.Fn.Name += tc.Function.Name
				call.Fn.Arguments += tc.Function.Arguments
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &streamBroken{err: err}
	}
	if chunks == 0 {
		return nil, &answerError{what: "the model server streamed an answer without any chunk"}
	}
	msg := map[string]any{"role": "assistant", "content": content.String()}
	if refusal.Len() > 0 {
		msg["refusal"] = refusal.String()
	}
	if len(calls) > 0 {
		for i, c := range calls {
			c.ID = firstNonEmpty(c.ID, fmt.Sprintf("call_%d", i+1))
		}
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id": firstNonEmpty(id, "chatcmpl-stream"), "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": firstNonEmpty(finish, "stop")}},
	}
	if usage != nil {
		out["usage"] = usage
	}
	return json.Marshal(out)
}

// errContextTooSmall: the request cannot be made to fit the model's context window.
var errContextTooSmall = errors.New("the model's context window is too small")
