package extractive

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
	"github.com/researchd/researchd/schema"
)

// How the field filler reads values in text: formats (dates, e-mail addresses, URLs), numbers and
// how well one suits a field, and a schema's bounds.

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func str(v any) string {
	s, _ := v.(string)
	return s
}

// schemaType is the first non-null type a schema allows, inferred when "type" is absent.
func schemaType(s map[string]any) string { return schema.Type(s) }

var (
	reDate     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	reDateTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\b`)
	reEmail    = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	reURL      = regexp.MustCompile(`\bhttps?://[^\s<>"')\]]+`)
	reNumber   = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`)
	// reSource: a field for where the answer comes from ("sources", "source_file", "citations");
	// "recall_reference" is a reference number, not a file.
	reSource = regexp.MustCompile(`(?i)^(?:(?:source|document)s?(?:[ _-]?(?:files?|paths?|urls?|documents?|names?))?|citations?|references?|files?|paths?)$`)
)

var (
	reYearField    = regexp.MustCompile(`(?i)year|date|since|founded`)
	rePercentField = regexp.MustCompile(`(?i)percent|pct|rate|share|ratio|efficiency|growth|margin`)
	reRangeRest    = regexp.MustCompile(`^(?:to|-|–|and)\s*[-+]?[\d,]+(?:\.\d+)?\s*`)
	reMoneyField   = regexp.MustCompile(`(?i)price|cost|usd|eur|dollar|revenue|amount|spend|budget|salary|fee`)
)

// numberFit scores how well the number text[start:end] suits a field called name.
func numberFit(name, text string, start, end int, literal string) float64 {
	return numberFitTerms(name, nlp.Terms(nlp.HumanName(name)), text, start, end, literal)
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
	for _, w := range nlp.Terms(strings.Join(aw[:min(len(aw), 6)], " ")) {
		near[w] = true
	}
	lead := strings.ToLower(text[max(strings.LastIndex(text[:start], ". "), strings.LastIndex(text[:start], "\n"), 0):start])
	leadTerms := map[string]bool{}
	for _, w := range nlp.Terms(lead) {
		leadTerms[w] = true
	}
	for _, w := range nlp.Uniq(field) {
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
