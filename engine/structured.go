package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/schema"
)

// compileSchema compiles a caller's JSON Schema through the shared, loader-less compiler.
func compileSchema(doc map[string]any) (*jsonschema.Schema, error) {
	sch, err := schema.Compile(doc)
	if err != nil {
		return nil, errorf(CodeInvalidJSONSchema, "json_schema: %v", err)
	}
	return sch, nil
}

// ValidateStructuredOutput checks output against a caller's schema. It returns an *Error with
// code invalid_json_schema when the schema itself is unusable and structured_output_invalid when
// the output does not validate. The job runner may call it too (it is what both engines use).
func ValidateStructuredOutput(schema map[string]any, output map[string]any) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return err
	}
	return validateAgainst(sch, output)
}

func validateAgainst(sch *jsonschema.Schema, output map[string]any) error {
	v, err := schema.ToJSONValue(output)
	if err != nil {
		return errorf(CodeStructuredOutputInvalid, "structured output is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = validationSummary(ve)
		}
		return errorf(CodeStructuredOutputInvalid, "structured output does not match json_schema: %s", msg)
	}
	return nil
}

// validationSummary lists the leaf errors as "/path: message" lines.
func validationSummary(ve *jsonschema.ValidationError) string {
	var out []string
	var walk func(e *jsonschema.OutputUnit)
	walk = func(e *jsonschema.OutputUnit) {
		if len(e.Errors) == 0 && e.Error != nil {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, loc+": "+e.Error.String())
		}
		for i := range e.Errors {
			walk(&e.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	if len(out) == 0 {
		return ve.Error()
	}
	return strings.Join(uniq(out), "; ")
}

// normalizeJSON turns any JSON-able map into plain encoding/json values (float64 numbers).
func normalizeJSON(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// extractor fills a schema from the index by pattern: the offline engine's structured output.
type extractor struct {
	ix    *index
	k     int   // passages consulted per field
	scope []int // when set, only these passages (one array item per passage)
	// question is searched for string fields whose own name finds nothing ("summary", "answer").
	question string
	notes    []string // what could not be filled, for the timeline
}

func (x *extractor) search(query string, k int) []hit {
	q := terms(query)
	if x.scope == nil {
		return x.ix.search(q, k, nil)
	}
	in := map[int]bool{}
	for _, p := range x.scope {
		in[p] = true
	}
	return x.ix.search(q, k, func(p int) bool { return !in[p] })
}

// fillObject fills the properties of an object schema, in name order (output is deterministic).
// Required properties with no evidence are left out, so validation reports them.
func (x *extractor) fillObject(schema map[string]any, context string) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			ps = map[string]any{}
		}
		query := strings.TrimSpace(strings.Join([]string{context, humanName(name), str(ps["title"]), str(ps["description"])}, " "))
		if v, ok := x.fillValue(name, ps, query, required[name]); ok {
			out[name] = v
		} else if required[name] {
			x.notes = append(x.notes, fmt.Sprintf("no evidence for required field %q", name))
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// humanName turns snake_case and camelCase names into words.
func humanName(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return b.String()
}

// schemaType is the first non-null type a schema allows, inferred when "type" is absent.
func schemaType(s map[string]any) string { return schema.Type(s) }

func (x *extractor) fillValue(name string, s map[string]any, query string, required bool) (any, bool) {
	if c, ok := s["const"]; ok {
		return c, true
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return x.pickEnum(enum, query, required)
	}
	var v any
	var ok bool
	switch schemaType(s) {
	case "string":
		v, ok = x.fillString(name, s, query, required)
	case "integer", "number":
		v, ok = x.fillNumber(name, s, query, schemaType(s) == "integer")
	case "boolean":
		v, ok = x.fillBool(query)
	case "array":
		v, ok = x.fillArray(name, s, query)
	case "object":
		obj := x.fillObject(s, query)
		v, ok = obj, len(obj) > 0 || required
	case "null":
		v, ok = nil, true
	}
	if !ok {
		if d, has := s["default"]; has {
			return d, true
		}
	}
	return v, ok
}

var (
	reDate     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	reDateTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\b`)
	reEmail    = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	reURL      = regexp.MustCompile(`\bhttps?://[^\s<>"')\]]+`)
	reNumber   = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`)
	reSource   = regexp.MustCompile(`(?i)(source|citation|reference|file|path)s?$`)
)

func (x *extractor) fillString(name string, s map[string]any, query string, required bool) (any, bool) {
	hits := x.search(query, x.k)
	var re *regexp.Regexp
	switch str(s["format"]) {
	case "date":
		re = reDate
	case "date-time":
		re = reDateTime
	case "email":
		re = reEmail
	case "uri", "url", "iri":
		re = reURL
	}
	if re != nil {
		for _, h := range hits {
			if m := re.FindString(x.ix.passages[h.P].Text); m != "" {
				return m, true
			}
		}
		// Fall back to any match in the sources: a date field wants a date, wherever it is.
		for p := range x.ix.passages {
			if x.scope == nil || slices.Contains(x.scope, p) {
				if m := re.FindString(x.ix.passages[p].Text); m != "" {
					return m, true
				}
			}
		}
		return nil, false
	}
	if len(hits) == 0 && x.question != "" {
		query = x.question
		hits = x.search(query, x.k)
	}
	if len(hits) == 0 {
		if required {
			return "No evidence found in the provided sources.", true
		}
		return nil, false
	}
	var v string
	if reSource.MatchString(name) {
		v = x.ix.docs[x.ix.passages[hits[0].P].Doc].Path
	} else {
		v = x.ix.bestSentence(hits[0].P, terms(query))
	}
	if n, ok := s["maxLength"].(float64); ok && n >= 1 {
		v = truncate(v, int(n))
		if len([]rune(v)) > int(n) {
			v = string([]rune(v)[:int(n)])
		}
	}
	return v, true
}

// fillNumber picks, from the best passages, the number that fits the schema's bounds and reads most
// like the field: its unit matches the field name (percent, money, years) and words of the name stand
// near it. Years are not taken for fields that are not about years. Ties go to the better passage,
// then to the earlier number, so the choice is deterministic.
func (x *extractor) fillNumber(name string, s map[string]any, query string, integer bool) (any, bool) {
	best, bestScore, found := 0.0, math.Inf(-1), false
	rank := 0
	for _, h := range x.search(query, x.k) {
		text := x.ix.bestSentence(h.P, terms(query)) + "\n" + x.ix.passages[h.P].Text
		for _, loc := range reNumber.FindAllStringIndex(text, -1) {
			m := text[loc[0]:loc[1]]
			f, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
			if err != nil || (integer && f != math.Trunc(f)) || !inBounds(s, f) {
				continue
			}
			score := numberFit(name, text, loc[0], loc[1], m) - float64(rank)*0.001
			rank++
			if score > bestScore {
				best, bestScore, found = f, score, true
			}
		}
	}
	if !found {
		return nil, false
	}
	if integer {
		return int64(best), true
	}
	return best, true
}

var (
	reYearField    = regexp.MustCompile(`(?i)year|date|since|founded`)
	rePercentField = regexp.MustCompile(`(?i)percent|pct|rate|share|ratio|efficiency|growth|margin`)
	reRangeRest    = regexp.MustCompile(`^(?:to|-|–|and)\s*[-+]?[\d,]+(?:\.\d+)?\s*`)
	reMoneyField   = regexp.MustCompile(`(?i)price|cost|usd|eur|dollar|revenue|amount|spend|budget|salary|fee`)
)

// numberFit scores how well the number text[start:end] suits a field called name.
func numberFit(name, text string, start, end int, literal string) float64 {
	after := strings.ToLower(strings.TrimSpace(text[end:min(len(text), end+40)]))
	// "9,000 to 14,000 euros": the unit after a range belongs to both ends.
	after = reRangeRest.ReplaceAllString(after, "")
	before := strings.ToLower(text[max(0, start-40):start])
	score := 0.0
	isYear := len(literal) == 4 && literal >= "1900" && literal <= "2100"
	switch {
	case isYear && reYearField.MatchString(name):
		score += 3
	case isYear:
		score -= 3
	}
	if rePercentField.MatchString(name) && (strings.HasPrefix(after, "%") || strings.HasPrefix(after, "percent") || strings.HasPrefix(after, "per cent")) {
		score += 3
	}
	if reMoneyField.MatchString(name) && (strings.HasSuffix(strings.TrimSpace(before), "$") || strings.HasSuffix(strings.TrimSpace(before), "€") ||
		strings.HasPrefix(after, "usd") || strings.HasPrefix(after, "dollars") || strings.HasPrefix(after, "eur")) {
		score += 3
	}
	// Words of the field name anywhere earlier in the number's sentence.
	lead := strings.ToLower(text[max(strings.LastIndex(text[:start], ". "), strings.LastIndex(text[:start], "\n"), 0):start])
	for _, w := range terms(humanName(name)) {
		if strings.Contains(lead, w) {
			score++
		}
	}
	return score
}

func inBounds(s map[string]any, f float64) bool {
	if v, ok := s["minimum"].(float64); ok && f < v {
		return false
	}
	if v, ok := s["maximum"].(float64); ok && f > v {
		return false
	}
	if v, ok := s["exclusiveMinimum"].(float64); ok && f <= v {
		return false
	}
	if v, ok := s["exclusiveMaximum"].(float64); ok && f >= v {
		return false
	}
	return true
}

var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "false": true, "without": true,
	"cannot": true, "isn't": true, "aren't": true, "doesn't": true, "don't": true, "didn't": true,
	"wasn't": true, "weren't": true, "won't": true, "lacks": true, "neither": true, "nor": true,
}

// fillBool: true when the best evidence for the field states it without negation; false when it
// is negated or when no source mentions it at all.
func (x *extractor) fillBool(query string) (any, bool) {
	hits := x.search(query, 1)
	if len(hits) == 0 {
		return false, true
	}
	for _, w := range words(x.ix.bestSentence(hits[0].P, terms(query))) {
		if negations[w] {
			return false, true
		}
	}
	return true, true
}

// pickEnum chooses the enum value best supported by the evidence for the field: every sentence
// of the field's best passages that contains all of a value's terms adds the query weight it
// covers (idf of the field's terms in it), discounted by the passage's rank. Ties (and no
// evidence, for a required field) go to the first value in schema order.
func (x *extractor) pickEnum(enum []any, query string, required bool) (any, bool) {
	q := map[string]bool{}
	for _, t := range terms(query) {
		q[t] = true
	}
	type sent struct {
		terms  map[string]bool
		weight float64
	}
	var sents []sent
	for rank, h := range x.search(query, max(x.k*2, 6)) {
		for _, s := range sentences(x.ix.passages[h.P].Text) {
			st := map[string]bool{}
			for _, t := range terms(s) {
				st[t] = true
			}
			w := 0.0
			for t := range st {
				if q[t] {
					w += x.ix.idf(t)
				}
			}
			sents = append(sents, sent{st, (1 + w) / float64(rank+1)})
		}
	}
	best, bestScore := -1, 0.0
	for i, e := range enum {
		vt := uniq(terms(fmt.Sprint(e)))
		if len(vt) == 0 {
			continue
		}
		score := 0.0
		for _, s := range sents {
			all := true
			for _, t := range vt {
				all = all && s.terms[t]
			}
			if all {
				score += s.weight
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 {
		return enum[best], true
	}
	if required {
		x.notes = append(x.notes, fmt.Sprintf("no evidence for any value of %q; chose the first", query))
		return enum[0], true
	}
	return nil, false
}

func (x *extractor) fillArray(name string, s map[string]any, query string) (any, bool) {
	items, _ := s["items"].(map[string]any)
	if items == nil {
		items = map[string]any{"type": "string"}
	}
	n := x.k
	if v, ok := s["maxItems"].(float64); ok && int(v) < n {
		n = int(v)
	}
	if v, ok := s["minItems"].(float64); ok && int(v) > n {
		n = int(v)
	}
	hits := x.search(query, max(n*2, n))
	var out []any
	seen := map[string]bool{}
	push := func(v any) {
		key := fmt.Sprint(v)
		if !seen[key] && len(out) < n {
			seen[key] = true
			out = append(out, v)
		}
	}
	switch schemaType(items) {
	case "object":
		// One item per passage, each filled from that passage alone.
		for _, h := range hits {
			sub := &extractor{ix: x.ix, k: 1, scope: []int{h.P}}
			if obj := sub.fillObject(items, query); len(obj) > 0 {
				push(obj)
			}
		}
	case "integer", "number":
		integer := schemaType(items) == "integer"
		for _, h := range hits {
			sub := &extractor{ix: x.ix, k: 1, scope: []int{h.P}}
			if v, ok := sub.fillNumber(name, items, query, integer); ok {
				push(v)
			}
		}
	case "string":
		if enum, isEnum := items["enum"].([]any); isEnum && len(enum) > 0 {
			if v, ok := x.pickEnum(enum, query, false); ok {
				push(v)
			}
			break
		}
		for _, h := range hits {
			if reSource.MatchString(name) {
				push(x.ix.docs[x.ix.passages[h.P].Doc].Path)
				continue
			}
			sub := &extractor{ix: x.ix, k: 1, scope: []int{h.P}}
			if v, ok := sub.fillString(name, items, query, false); ok {
				push(v)
			}
		}
	case "boolean":
		v, _ := x.fillBool(query)
		push(v)
	}
	if out == nil {
		out = []any{}
	}
	return out, true
}
