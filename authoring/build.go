package authoring

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/researchd/researchd/engine/extractive"
)

// SkillInfo is a skill the builder may link.
type SkillInfo struct{ Name, Description string }

// Draft is a proposed expert built from a domain description; it is saved as a `building` draft.
type Draft struct {
	Name, Description, Domain, SystemPrompt string
	ExpertiseAreas, Tags, SkillNames        []string
	OutputSchema, OutputSOP                 map[string]any
	InputForm                               []map[string]any
}

var (
	topicList   = regexp.MustCompile(`[:—–]\s*([^.;:]+)`)
	topicSplit  = regexp.MustCompile(`\s*(?:,|;|\band\b|\bor\b)\s*`)
	sentenceEnd = regexp.MustCompile(`[.!?](\s|$)`)
	scoreWords  = regexp.MustCompile(`(?i)\b(score|scorecard|rating|rate|grade)\b`)
)

// BuildDraft drafts an expert from a domain description: its topics (a list after a colon)
// become expertise areas and output fields, a named deliverable with a score adds a score field,
// and skills whose descriptions share the description's key terms are linked.
func BuildDraft(description, name string, skills []SkillInfo) Draft {
	description = strings.TrimSpace(description)
	phrases := extractive.KeyPhrases(description)
	domain := ""
	if len(phrases) > 0 {
		domain = phrases[0]
	}
	if name = strings.TrimSpace(name); name == "" {
		name = titleCase(domain) + " Expert"
		if domain == "" {
			name = "Research Expert"
		}
	}
	topics := topicsOf(description)
	x := Extract(description)
	d := Draft{
		Name: shorten(name, 255), Description: shorten(firstSentence(description), 5000), Domain: shorten(domain, 255),
		ExpertiseAreas: topics, Tags: tagsOf(phrases), SkillNames: matchSkills(description, skills),
		OutputSOP: x.OutputSOP, OutputSchema: x.OutputSchema,
	}
	if d.OutputSchema == nil && len(topics) > 0 {
		d.OutputSchema = topicSchema(topics, scoreWords.MatchString(description))
	}
	d.InputForm = []map[string]any{{"key": "subject", "label": "What to research", "type": "text", "required": true}}
	d.SystemPrompt = buildPrompt(description, domain, topics)
	return d
}

func topicsOf(description string) []string {
	m := topicList.FindStringSubmatch(description)
	if m == nil {
		return nil
	}
	var out []string
	for _, t := range topicSplit.Split(m[1], -1) {
		t = strings.TrimSpace(strings.Trim(t, "\"'()"))
		if t != "" && len(strings.Fields(t)) <= 5 {
			out = append(out, t)
		}
	}
	return dedupe(out)
}

func topicSchema(topics []string, scored bool) map[string]any {
	props := map[string]any{}
	required := []any{}
	for _, t := range topics {
		k := fieldKey(t)
		if k == "" {
			continue
		}
		props[k] = map[string]any{"type": "string", "description": "Cited findings on " + t + "."}
		required = append(required, k)
	}
	if scored {
		props["overall_score"] = map[string]any{"type": "number", "minimum": 0, "maximum": 10,
			"description": "Overall score from 0 to 10, justified by the findings above."}
		required = append(required, "overall_score")
	}
	props["summary"] = map[string]any{"type": "string", "description": "A short summary of the answer."}
	required = append(required, "summary")
	return map[string]any{"type": "object", "required": required, "properties": props}
}

func buildPrompt(description, domain string, topics []string) string {
	var b strings.Builder
	if domain != "" {
		fmt.Fprintf(&b, "You are a research expert on %s.\n\n", domain)
	} else {
		b.WriteString("You are a research expert.\n\n")
	}
	b.WriteString("Your brief: " + description + "\n")
	if len(topics) > 0 {
		b.WriteString("\nFor every request, cover each of these, one section each:\n")
		for _, t := range topics {
			fmt.Fprintf(&b, "- %s\n", t)
		}
	}
	b.WriteString("\nGround every statement in the sources you read and cite them with a supporting quote. " +
		"When the sources do not cover a point, say so plainly instead of guessing.")
	return b.String()
}

func tagsOf(phrases []string) []string {
	var out []string
	for _, p := range phrases {
		if len(p) <= 50 && len(out) < 5 {
			out = append(out, strings.ToLower(p))
		}
	}
	return dedupe(out)
}

// matchSkills links skills that share at least two content words with the description (or one
// when the skill's name word appears).
func matchSkills(description string, skills []SkillInfo) []string {
	words := contentWords(description)
	var out []string
	for _, s := range skills {
		hits := 0
		for w := range contentWords(s.Description) {
			if words[w] {
				hits++
			}
		}
		nameHit := false
		for _, part := range strings.Split(s.Name, "-") {
			if len(part) > 3 && words[part] {
				nameHit = true
			}
		}
		if hits >= 2 || nameHit {
			out = append(out, s.Name)
		}
	}
	return out
}

func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) > 4 && !idStopwords[w] {
			out[w] = true
		}
	}
	return out
}

func firstSentence(s string) string {
	if loc := sentenceEnd.FindStringIndex(s); loc != nil {
		return strings.TrimSpace(s[:loc[0]+1])
	}
	return s
}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}
