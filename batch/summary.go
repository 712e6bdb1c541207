package batch

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Lengths of a row result's short answer (BatchRowResult in openapi/v2.json).
const (
	HeadlineMax = 300
	ExcerptMax  = 1000
)

var (
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdCitation = regexp.MustCompile(`\s*\[\d+(?:\s*,\s*\d+)*\]`)
	mdEmphasis = regexp.MustCompile("(\\*\\*|__|\\*|`)")
	mdListMark = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)
	sentence   = regexp.MustCompile(`^(.+?[.!?])(?:\s|$)`)
	answerHead = regexp.MustCompile(`(?i)^(summary|answer|short answer|tl;?dr|key findings|conclusion|executive summary)\b`)
)

// Summarize derives a row's short answer from its report: the headline is the first sentence of
// the answer (the first paragraph under a Summary/Answer heading, else the first paragraph of
// prose), the excerpt that paragraph, both as plain text and trimmed to their limits. Headings,
// byline-style emphasis lines and quotes are skipped; the full report is never returned.
func Summarize(markdown string) (headline, excerpt string) {
	paras := paragraphs(markdown)
	pick := -1
	for i, p := range paras {
		if p.afterAnswerHeading {
			pick = i
			break
		}
	}
	if pick < 0 && len(paras) > 0 {
		pick = 0
	}
	if pick < 0 {
		return "", ""
	}
	text := paras[pick].text
	first := paras[pick].firstLine
	if m := sentence.FindStringSubmatch(first); m != nil {
		first = m[1]
	}
	return truncate(first, HeadlineMax), truncate(text, ExcerptMax)
}

type paragraph struct {
	text, firstLine    string
	afterAnswerHeading bool
}

// paragraphs splits a report into plain-text paragraphs of prose or list items.
func paragraphs(md string) []paragraph {
	var out []paragraph
	var cur []string
	answer, underAnswer := false, false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, paragraph{text: strings.Join(cur, " "), firstLine: cur[0], afterAnswerHeading: underAnswer})
			cur = nil
			underAnswer = false
		}
	}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			flush()
			continue
		}
		switch {
		case inFence:
		case t == "":
			flush()
		case strings.HasPrefix(t, "#"):
			flush()
			answer = answerHead.MatchString(strings.TrimSpace(strings.TrimLeft(t, "#")))
		case strings.HasPrefix(t, ">"), strings.HasPrefix(t, "|"), isBylineEmphasis(t):
			flush()
		default:
			if len(cur) == 0 {
				underAnswer = answer
				answer = false
			}
			if p := plain(t); p != "" {
				cur = append(cur, p)
			}
		}
	}
	flush()
	return out
}

// isBylineEmphasis is a line that is wholly italic (a byline or note, not an answer).
func isBylineEmphasis(t string) bool {
	return len(t) > 2 && ((t[0] == '_' && t[len(t)-1] == '_') || (t[0] == '*' && t[1] != '*' && t[len(t)-1] == '*'))
}

// plain strips inline Markdown from one line.
func plain(s string) string {
	s = mdListMark.ReplaceAllString(s, "")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdCitation.ReplaceAllString(s, "")
	s = mdEmphasis.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, `\`, "")
	return strings.Join(strings.Fields(s), " ")
}

// truncate shortens s to at most n characters, on a word boundary with an ellipsis when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
