// Package authoring turns text into expert configuration without a model: pasted procedures into a
// system prompt, an SOP and an output schema (extract), an SOP into a validated workflow
// (generate-workflow), a question into the plan an expert would follow (plan preview), and a domain
// description into a draft expert (build). Everything is derived from the text given — headings,
// lists, field names — so the same text always gives the same result and nothing is invented.
package authoring

import (
	"regexp"
	"strings"
	"unicode"
)

// section is a heading and what follows it up to the next heading.
type section struct {
	Heading    string
	Items      []string // list items (numbered or bulleted), markers removed
	Numbered   bool     // at least one item was numbered
	Paragraphs []string // other non-empty lines, joined per paragraph
}

var (
	numberedItem = regexp.MustCompile(`^\s*(?:\d{1,3}|[a-zA-Z])[.)]\s+(.+)$`)
	bulletItem   = regexp.MustCompile(`^\s*(?:[-*+•·‣◦]|\[[ xX]\])\s+(.+)$`)
	mdHeading    = regexp.MustCompile(`^\s*#{1,6}\s+(.+?)\s*#*\s*$`)
)

// outline splits text into sections. A heading is a Markdown heading, a short line ending in a
// colon, or a short line without final punctuation followed by a list; the text before the first
// heading is a section with an empty heading.
func outline(text string) []section {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	secs := []section{{}}
	cur := &secs[0]
	var para []string
	flushPara := func() {
		if len(para) > 0 {
			cur.Paragraphs = append(cur.Paragraphs, strings.Join(para, " "))
			para = nil
		}
	}
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if line == "" || isRule(line) {
			flushPara()
			continue
		}
		if h, ok := headingOf(line, next(lines, i)); ok {
			flushPara()
			secs = append(secs, section{Heading: h})
			cur = &secs[len(secs)-1]
			continue
		}
		if m := numberedItem.FindStringSubmatch(line); m != nil {
			flushPara()
			cur.Items = append(cur.Items, cleanItem(m[1]))
			cur.Numbered = true
			continue
		}
		if m := bulletItem.FindStringSubmatch(line); m != nil {
			flushPara()
			cur.Items = append(cur.Items, cleanItem(m[1]))
			continue
		}
		if len(cur.Items) > 0 && len(para) == 0 && startsLower(line) {
			// A list item hard-wrapped onto the next line.
			cur.Items[len(cur.Items)-1] += " " + line
			continue
		}
		para = append(para, line)
	}
	flushPara()
	if len(secs) > 1 && len(secs[0].Items) == 0 && len(secs[0].Paragraphs) == 0 {
		secs = secs[1:]
	}
	return secs
}

func next(lines []string, i int) string {
	for j := i + 1; j < len(lines); j++ {
		if l := strings.TrimSpace(lines[j]); l != "" {
			return l
		}
	}
	return ""
}

func headingOf(line, following string) (string, bool) {
	if m := mdHeading.FindStringSubmatch(line); m != nil {
		return strings.Trim(m[1], "*_ "), true
	}
	if numberedItem.MatchString(line) || bulletItem.MatchString(line) || len(line) > 80 {
		return "", false
	}
	if strings.HasSuffix(line, ":") && len(strings.Fields(line)) <= 8 {
		return strings.TrimSuffix(strings.Trim(line, "*_ "), ":"), true
	}
	bold := strings.HasPrefix(line, "**") && strings.HasSuffix(line, "**")
	followedByList := numberedItem.MatchString(following) || bulletItem.MatchString(following)
	if (bold || followedByList) && !strings.ContainsAny(line[len(line)-1:], ".!?;,") && len(strings.Fields(line)) <= 8 {
		return strings.Trim(line, "*_ "), true
	}
	return "", false
}

func isRule(line string) bool {
	return len(line) >= 3 && strings.Trim(line, "-=_*") == ""
}

func startsLower(s string) bool {
	for _, r := range s {
		return unicode.IsLower(r)
	}
	return false
}

// cleanItem drops Markdown emphasis and a trailing period.
func cleanItem(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "**", ""), "__", "")
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), "."))
}

// headingMatches reports whether a heading contains one of the words (case-insensitive, whole
// words or their plural).
func headingMatches(heading string, words ...string) bool {
	hw := strings.FieldsFunc(strings.ToLower(heading), func(r rune) bool { return !unicode.IsLetter(r) })
	for _, h := range hw {
		for _, w := range words {
			if h == w || h == w+"s" || h == w+"es" {
				return true
			}
		}
	}
	return false
}

// fieldKey turns a label ("Risk level", "risk-level", "Risk Level (1-5)") into a snake_case key.
func fieldKey(label string) string {
	if i := strings.IndexAny(label, "(:—–"); i > 0 {
		label = label[:i]
	}
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(strings.TrimSpace(label)) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
		default:
			under = true
		}
	}
	k := b.String()
	if len(k) > 64 {
		k = strings.TrimRight(k[:64], "_")
	}
	if k != "" && k[0] >= '0' && k[0] <= '9' {
		k = "f_" + k
	}
	return k
}
