package authoring

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Extraction is a proposed expert configuration; nothing is saved.
type Extraction struct {
	SystemPrompt string
	OutputSOP    map[string]any // nil when the text has no procedure, criteria or fields
	OutputSchema map[string]any // nil when the text names no output fields
}

// field is one output field found in the text.
type field struct {
	Key, Label string
	Enum       []string
}

var (
	rateStep    = regexp.MustCompile(`(?i)\b(?:rate|score|classify|grade|rank)\s+(?:the\s+|its\s+|overall\s+)*([a-z]+)\s+(?:as\s+|from\s+)?([a-z]+(?:\s*/\s*[a-z]+)+)`)
	writeStep   = regexp.MustCompile(`(?i)\b(?:write|give|produce|add)\s+(?:a|an|the)\s+(?:short\s+|brief\s+|one-paragraph\s+|final\s+)?(summary|recommendation|rationale|verdict|conclusion)\b`)
	inlineSlash = regexp.MustCompile(`\b([a-z]+(?:\s*/\s*[a-z]+)+)\b`)
	optionSplit = regexp.MustCompile(`\s*(?:,|/|;|\bor\b|\band\b)\s*`)
	levelWords  = map[string]bool{"low": true, "medium": true, "high": true, "critical": true, "none": true, "moderate": true, "severe": true, "minimal": true}
)

// Extract proposes a system prompt, an SOP and an output schema from pasted text.
func Extract(text string) Extraction {
	text = strings.TrimSpace(text)
	secs := outline(text)
	title := titleOf(secs)
	steps := itemsUnder(secs, "step", "procedure", "process", "workflow", "method", "checklist", "playbook", "instruction", "task")
	if len(steps) == 0 {
		steps = firstList(secs, true)
	}
	criteria := itemsUnder(secs, "risk", "flag", "criterion", "criteria", "warning", "concern")
	categories := itemsUnder(secs, "recommendation", "decision", "verdict", "outcome", "category")
	fields := outputFields(secs, steps)
	if len(categories) == 0 {
		categories = inlineCategories(steps)
	}

	var sop map[string]any
	if len(steps)+len(criteria)+len(fields) > 0 {
		sop = map[string]any{"steps": anyList(steps)}
		if len(criteria) > 0 {
			sop["risk_criteria"] = anyList(criteria)
		}
		if len(fields) > 0 {
			keys := make([]string, len(fields))
			for i, f := range fields {
				keys[i] = f.Key
			}
			sop["required_output_fields"] = anyList(keys)
		}
		if len(categories) > 0 {
			sop["recommendation_categories"] = anyList(categories)
		}
	}
	return Extraction{
		SystemPrompt: systemPrompt(text, title, steps, criteria, fields, categories),
		OutputSOP:    sop,
		OutputSchema: outputSchema(fields, categories),
	}
}

func titleOf(secs []section) string {
	if len(secs) == 0 {
		return ""
	}
	s := secs[0]
	if s.Heading != "" {
		return s.Heading
	}
	if len(s.Paragraphs) > 0 {
		p := s.Paragraphs[0]
		if len(strings.Fields(p)) <= 8 && !strings.ContainsAny(p[len(p)-1:], ".!?") {
			return p
		}
	}
	return ""
}

func itemsUnder(secs []section, words ...string) []string {
	var out []string
	for _, s := range secs {
		if s.Heading != "" && headingMatches(s.Heading, words...) {
			out = append(out, s.Items...)
		}
	}
	return dedupe(out)
}

// firstList is the first numbered list (or, when numbered is false or there is none, the first list).
func firstList(secs []section, numbered bool) []string {
	for _, s := range secs {
		if len(s.Items) > 0 && s.Numbered == numbered {
			return s.Items
		}
	}
	if numbered {
		return firstList(secs, false)
	}
	return nil
}

func outputFields(secs []section, steps []string) []field {
	var out []field
	add := func(f field) {
		if f.Key == "" || slices.ContainsFunc(out, func(g field) bool { return g.Key == f.Key }) {
			return
		}
		out = append(out, f)
	}
	for _, item := range itemsUnder(secs, "output", "field", "deliverable", "return", "include", "result", "format", "report") {
		add(fieldFromItem(item))
	}
	for _, st := range steps {
		if m := rateStep.FindStringSubmatch(st); m != nil {
			opts := options(m[2])
			suffix := "_category"
			if allLevels(opts) {
				suffix = "_level"
			}
			noun := strings.ToLower(m[1])
			add(field{Key: fieldKey(noun) + suffix, Label: noun + strings.ReplaceAll(suffix, "_", " "), Enum: opts})
		}
		if m := writeStep.FindStringSubmatch(st); m != nil {
			add(field{Key: strings.ToLower(m[1]), Label: strings.ToLower(m[1])})
		}
	}
	return out
}

// fieldFromItem reads "Risk level: low, medium or high" or "summary — two sentences".
func fieldFromItem(item string) field {
	label, rest, found := strings.Cut(item, ":")
	if !found {
		label, rest, _ = strings.Cut(item, " — ")
	}
	label = strings.Trim(strings.TrimSpace(label), "`*_")
	if len(strings.Fields(label)) > 6 {
		return field{}
	}
	f := field{Key: fieldKey(label), Label: label}
	if opts := options(rest); len(opts) >= 2 && len(opts) <= 8 {
		f.Enum = opts
	}
	return f
}

// options splits "low, medium or high" / "low/medium/high" into its choices, or nil when the text
// is not a short list of one- or two-word choices.
func options(s string) []string {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), "."))
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range optionSplit.Split(s, -1) {
		p = strings.ToLower(strings.Trim(strings.TrimSpace(p), "`\"'"))
		if p == "" {
			continue
		}
		if len(strings.Fields(p)) > 3 {
			return nil
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil
	}
	return dedupe(out)
}

func allLevels(opts []string) bool {
	for _, o := range opts {
		if !levelWords[o] {
			return false
		}
	}
	return len(opts) > 0
}

// inlineCategories finds "approve/reject"-style choices in a step about a recommendation or decision.
func inlineCategories(steps []string) []string {
	for _, st := range steps {
		l := strings.ToLower(st)
		if !strings.Contains(l, "recommend") && !strings.Contains(l, "decide") && !strings.Contains(l, "decision") {
			continue
		}
		if m := inlineSlash.FindStringSubmatch(l); m != nil {
			if opts := options(m[1]); !allLevels(opts) {
				return opts
			}
		}
	}
	return nil
}

func outputSchema(fields []field, categories []string) map[string]any {
	if len(fields) == 0 {
		return nil
	}
	props := map[string]any{}
	required := make([]any, 0, len(fields))
	for _, f := range fields {
		props[f.Key] = propertyFor(f, categories)
		required = append(required, f.Key)
	}
	return map[string]any{"type": "object", "required": required, "properties": props}
}

func propertyFor(f field, categories []string) map[string]any {
	p := map[string]any{"description": f.Label}
	switch {
	case len(f.Enum) > 0:
		p["type"], p["enum"] = "string", anyList(f.Enum)
	case f.Key == "recommendation" && len(categories) > 0:
		p["type"], p["enum"] = "string", anyList(categories)
	case strings.HasPrefix(f.Key, "is_") || strings.HasPrefix(f.Key, "has_"):
		p["type"] = "boolean"
	case hasAnyPart(f.Key, "count", "number", "year", "employees"):
		p["type"] = "integer"
	case hasAnyPart(f.Key, "score", "amount", "total", "percent", "percentage", "revenue", "price", "cost", "usd", "eur"):
		p["type"] = "number"
	case strings.HasPrefix(strings.ToLower(f.Label), "list"):
		p["type"], p["items"] = "array", map[string]any{"type": "string"}
	default:
		p["type"] = "string"
	}
	return p
}

func hasAnyPart(key string, parts ...string) bool {
	for _, k := range strings.Split(key, "_") {
		if slices.Contains(parts, k) {
			return true
		}
	}
	return false
}

// systemPrompt keeps a pasted prompt as it is; anything else becomes a prompt that states the
// procedure, criteria and output the text described.
func systemPrompt(text, title string, steps, criteria []string, fields []field, categories []string) string {
	lower := strings.ToLower(text)
	if strings.HasPrefix(lower, "you are") || strings.Contains(lower[:min(len(lower), 400)], "your task") {
		return text
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "You are a research analyst who works by the %q.", title)
	} else {
		b.WriteString("You are a research analyst who follows the procedure below.")
	}
	if len(steps) > 0 {
		b.WriteString("\n\nFor every request, follow these steps in order:\n")
		for i, s := range steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
	}
	if len(criteria) > 0 {
		b.WriteString("\nTreat each of these as a risk to report when the sources show it:\n")
		for _, c := range criteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if len(fields) > 0 {
		b.WriteString("\nYour answer must fill these fields:\n")
		for _, f := range fields {
			line := f.Key
			if len(f.Enum) > 0 {
				line += " (one of: " + strings.Join(f.Enum, ", ") + ")"
			}
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	if len(categories) > 0 {
		fmt.Fprintf(&b, "\nEnd with one recommendation: %s.\n", strings.Join(categories, ", "))
	}
	b.WriteString("\nGround every statement in the sources you read and cite them. When the sources do not answer a point, say so plainly instead of guessing.")
	if len(steps) == 0 && len(criteria) == 0 && len(fields) == 0 {
		b.WriteString("\n\nInstructions:\n" + text)
	}
	return b.String()
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}
