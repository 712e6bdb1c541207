package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// The one parser for every JSON answer the engine reads (the report, the structured output, its
// basis, expert drafts, tool arguments, tool calls written as text). Local models wrap JSON in
// reasoning (<think>…</think>), code fences and prose, and make small slips; the parser is lenient
// in what it extracts and repairs only what has one reading, then strict: the value is validated
// against its schema and a violation names the field.

var (
	// reThink matches a reasoning block (closed, or cut off at the end of the answer).
	reThink = regexp.MustCompile(`(?is)<(think|thinking|reasoning|reflection)>.*?(</(think|thinking|reasoning|reflection)>|\z)`)
	// reThinkClose finds a closing tag whose opening tag the chat template put in the prompt.
	reThinkClose = regexp.MustCompile(`(?is)^.*</(think|thinking|reasoning)>`)
	reFence      = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```")
)

// stripThinking removes reasoning blocks, so notes and JSON are read from what the model answered.
func stripThinking(s string) string {
	s = reThinkClose.ReplaceAllString(s, "")
	return strings.TrimSpace(reThink.ReplaceAllString(s, ""))
}

// errCutOff: the JSON ends before its brackets close (an answer cut at its length limit).
var errCutOff = errors.New("the JSON is cut off before its end")

// errNoJSON: the answer holds no JSON object at all.
var errNoJSON = errors.New("no JSON object found")

// extractObject finds the JSON object in a model's answer and decodes it: the whole answer, a
// fenced block, or the first complete {...} in the prose, after removing reasoning blocks. Each
// candidate is repaired (repairJSON) before it is decoded.
func extractObject(answer string) (map[string]any, error) {
	v, err := extractValue(answer, '{')
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errNoJSON
	}
	return obj, nil
}

// extractValue is extractObject for a value that opens with open ('{' or '[').
func extractValue(answer string, open byte) (any, error) {
	s := stripThinking(answer)
	var firstErr error
	try := func(c string) (any, bool) {
		c = strings.TrimSpace(c)
		if c == "" || c[0] != open {
			return nil, false
		}
		v, err := decodeLenient(c)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return nil, false
		}
		return v, true
	}
	if v, ok := try(s); ok {
		return v, nil
	}
	for _, m := range reFence.FindAllStringSubmatch(s, -1) {
		if v, ok := try(m[1]); ok {
			return v, nil
		}
	}
	// The first balanced value in the prose. One that does not decode is skipped whole, so a
	// fragment inside a broken object is never taken for the answer.
	for i := 0; i < len(s); i++ {
		if s[i] != open {
			continue
		}
		end := balancedEnd(s, i)
		if end < 0 {
			if firstErr == nil {
				firstErr = errCutOff
			}
			break
		}
		if v, ok := try(s[i:end]); ok {
			return v, nil
		}
		i = end - 1
	}
	if firstErr != nil {
		return nil, fmt.Errorf("the answer's JSON is not valid: %w", firstErr)
	}
	return nil, errNoJSON
}

// balancedEnd returns the index just past the bracket that closes the one at s[start], or -1.
func balancedEnd(s string, start int) int {
	depth, inStr, esc := 0, false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// decodeLenient decodes one JSON value, repairing it first.
func decodeLenient(s string) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(repairJSON(s)))
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errCutOff
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text follows the JSON value")
	}
	return v, nil
}

// repairJSON fixes the slips that have only one reading: a comma before a closing bracket, raw
// line breaks and tabs inside strings, // line comments, and Python's True, False and None. It
// never guesses at missing brackets or quotes.
func repairJSON(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s))
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			case c == '\n':
				b.WriteString(`\n`)
				continue
			case c == '\r':
				continue
			case c == '\t':
				b.WriteString(`\t`)
				continue
			}
			b.WriteByte(c)
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == ',':
			if j := nextNonSpace(s, i+1); j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == 'T' || c == 'F' || c == 'N':
			if w, lit := pythonLiteral(s[i:]); lit != "" {
				b.WriteString(lit)
				i += len(w) - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

func nextNonSpace(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t\r\n", s[i]) >= 0 {
		i++
	}
	return i
}

// pythonLiteral reads True, False or None at the start of s (a whole word) and returns it with its
// JSON spelling.
func pythonLiteral(s string) (word, lit string) {
	for w, l := range map[string]string{"True": "true", "False": "false", "None": "null"} {
		if strings.HasPrefix(s, w) && (len(s) == len(w) || !isWordByte(s[len(w)])) {
			return w, l
		}
	}
	return "", ""
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// coerce brings a decoded value closer to its schema where the reading is unambiguous: a single
// object where an array of them is wanted becomes a one-item array, and a string that is exactly a
// number where a number is wanted becomes that number. It follows properties and items only.
func coerce(schema map[string]any, v any) any {
	if schema == nil {
		return v
	}
	types := schemaTypes(schema)
	switch x := v.(type) {
	case map[string]any:
		if types["array"] && !types["object"] {
			items, _ := schema["items"].(map[string]any)
			return []any{coerce(items, x)}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, fv := range x {
			if ps, ok := props[k].(map[string]any); ok {
				x[k] = coerce(ps, fv)
			}
		}
		return x
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i := range x {
			x[i] = coerce(items, x[i])
		}
		return x
	case string:
		if (types["number"] || types["integer"]) && !types["string"] {
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				return f
			}
		}
	}
	return v
}

func schemaTypes(schema map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := schema["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// parseAnswer reads a JSON object that must match schema (sch, compiled): extracted, repaired,
// coerced, then validated. The error is a *engine.Error (structured_output_invalid) whose message
// names the fields that do not match, so it can go back to the model as is.
func parseAnswer(answer string, schema map[string]any, sch *jsonschema.Schema) (map[string]any, error) {
	obj, err := extractObject(answer)
	if err != nil {
		msg := "the answer is not a JSON object"
		if !errors.Is(err, errNoJSON) {
			msg += ": " + nlp.Truncate(err.Error(), 200)
		}
		return nil, engine.Errorf(engine.CodeStructuredOutputInvalid, "%s", msg)
	}
	obj, _ = coerce(schema, obj).(map[string]any)
	if sch != nil {
		if err := engine.ValidateOutput(sch, obj); err != nil {
			return obj, err
		}
	}
	return obj, nil
}

// decodeInto re-decodes a parsed object into a Go value.
func decodeInto(obj map[string]any, dst any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("engine: re-encode JSON: %w", err)
	}
	return json.Unmarshal(b, dst)
}

// decodeArgs reads a tool call's arguments with the one parser (so a fenced or slightly broken
// object still works); the error goes back to the model as the tool's answer.
func decodeArgs(raw string, dst any) error {
	obj, err := extractObject(raw)
	if err != nil {
		return fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	return decodeInto(obj, dst)
}
