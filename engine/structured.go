package engine

import (
	"encoding/json"
	"errors"
	"regexp"
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

var (
	reDate     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	reDateTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\b`)
	reEmail    = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	reURL      = regexp.MustCompile(`\bhttps?://[^\s<>"')\]]+`)
	reNumber   = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`)
	reSource   = regexp.MustCompile(`(?i)(source|citation|reference|file|path)s?$`)
)

var (
	reYearField    = regexp.MustCompile(`(?i)year|date|since|founded`)
	rePercentField = regexp.MustCompile(`(?i)percent|pct|rate|share|ratio|efficiency|growth|margin`)
	reRangeRest    = regexp.MustCompile(`^(?:to|-|–|and)\s*[-+]?[\d,]+(?:\.\d+)?\s*`)
	reMoneyField   = regexp.MustCompile(`(?i)price|cost|usd|eur|dollar|revenue|amount|spend|budget|salary|fee`)
)

// numberFit scores how well the number text[start:end] suits a field called name.
func numberFit(name, text string, start, end int, literal string) float64 {
	return numberFitTerms(name, terms(humanName(name)), text, start, end, literal)
}

// numberFitTerms scores a number for a field (its name and its words: name, title, description):
// its unit matches the field (percent, money, years), words of the field follow it ("1,140
// employees", "95 percent of the lithium") or come earlier in its sentence.
func numberFitTerms(name string, field []string, text string, start, end int, literal string) float64 {
	after := strings.ToLower(strings.TrimSpace(text[end:min(len(text), end+40)]))
	// "9,000 to 14,000 euros": the unit after a range belongs to both ends.
	after = reRangeRest.ReplaceAllString(after, "")
	before := strings.TrimSpace(strings.ToLower(text[max(0, start-40):start]))
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
	if reMoneyField.MatchString(name) && (strings.HasSuffix(before, "$") || strings.HasSuffix(before, "€") || strings.HasSuffix(before, "£") ||
		reCurrencyBefore.MatchString(before) || reCurrencyAfter.MatchString(after)) {
		score += 3
	}
	near := map[string]bool{}
	aw := strings.Fields(after)
	for _, w := range terms(strings.Join(aw[:min(len(aw), 4)], " ")) {
		near[w] = true
	}
	lead := strings.ToLower(text[max(strings.LastIndex(text[:start], ". "), strings.LastIndex(text[:start], "\n"), 0):start])
	leadTerms := map[string]bool{}
	for _, w := range terms(lead) {
		leadTerms[w] = true
	}
	for _, w := range uniq(field) {
		switch {
		case near[w]:
			score += 2
		case leadTerms[w]:
			score++
		}
	}
	return score
}

var (
	reCurrencyBefore = regexp.MustCompile(`(?:\b(?:usd|eur|gbp|nok|sek|dkk|chf|jpy)|[$€£¥])$`)
	reCurrencyAfter  = regexp.MustCompile(`^(?:million |billion |thousand |m |bn |k )?(?:usd|eur|gbp|nok|sek|dkk|chf|jpy|dollars?|euros?|pounds?|kroner|kronor)\b`)
)

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
