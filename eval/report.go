// Package eval measures research reports produced by a running server: it parses a report's
// Markdown (answer section, quotes, citations, sources), scores it against what a right answer
// holds, and runs sets of questions through the public API (`make eval`, cmd/evalqa). It reads
// reports as a user would, so it measures whichever engine the server runs.
package eval

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NotAnswered is how a report says a question (or one of its parts) has no answer in the sources
// (engine/extractive/report.go notAnswered), compared case-insensitively.
const NotAnswered = "the sources do not answer"

// Report is a report's Markdown cut into what the measurements look at.
type Report struct {
	Title  string
	Answer string   // the text of the `## Answer` section, trimmed
	Parts  []string // the answer's parts: each bullet's text after its bold label, or the whole answer
	Quotes []Quote  // inline “…” quotations in the answer and > block quotes anywhere, with their citation
	// Cited are the citation numbers used in the answer section, in order of first use.
	Cited   []string
	Sources map[string]string // citation number → cited path (input_files/x.txt)
}

// Quote is one quoted passage and the citation that follows it.
type Quote struct {
	Text   string // unescaped: as it should appear in the source
	Cite   string // citation number, "" when none follows
	Block  bool   // a > block quote (else an inline quotation in the answer)
	Answer bool   // in the answer section
}

var (
	reCite       = regexp.MustCompile(`\s*\[(\d+)\]`)
	reSource     = regexp.MustCompile("(?m)^(\\d+)\\. `([^`]+)`")
	reBlockCite  = regexp.MustCompile(`^—\s.*\[(\d+)\]\s*$`)
	reEscape     = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
	reBoldLabel  = regexp.MustCompile(`^\*\*(?:[^*\\]|\\.)+\*\*\s*`)
	reEmphasis   = regexp.MustCompile(`(\*\*|__)(.+?)(\*\*|__)`)
	reSingleEmph = regexp.MustCompile(`(^|[\s(])[*_]([^*_\s][^*_]*?)[*_]`)
)

// Unescape removes Markdown backslash escapes (a backslash before ASCII punctuation).
func Unescape(s string) string { return reEscape.ReplaceAllString(s, "$1") }

// ParseReport parses a report's Markdown.
func ParseReport(md string) Report {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	r := Report{Sources: map[string]string{}}
	lines := strings.Split(md, "\n")
	for _, l := range lines {
		if t, ok := strings.CutPrefix(l, "# "); ok && r.Title == "" {
			r.Title = strings.TrimSpace(t)
		}
	}
	r.Answer = section(lines, "Answer")
	r.Parts = answerParts(r.Answer)
	for _, m := range reCite.FindAllStringSubmatch(r.Answer, -1) {
		if !containsStr(r.Cited, m[1]) {
			r.Cited = append(r.Cited, m[1])
		}
	}
	if src := section(lines, "Sources"); src != "" {
		for _, m := range reSource.FindAllStringSubmatch(src, -1) {
			r.Sources[m[1]] = m[2]
		}
	}
	r.Quotes = append(inlineQuotes(r.Answer), blockQuotes(lines)...)
	return r
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// section is the text under a `## name` heading up to the next `## ` heading (### stays inside).
func section(lines []string, name string) string {
	var out []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			in = strings.EqualFold(strings.TrimSpace(l[3:]), name)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// answerParts: a bullet list gives one part per bullet (text after its bold label); otherwise the
// answer's paragraphs are one part, skipping a draft notice.
func answerParts(answer string) []string {
	var bullets, prose []string
	for _, l := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, ">"):
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			t = strings.TrimSpace(t[2:])
			bullets = append(bullets, strings.TrimSpace(reBoldLabel.ReplaceAllString(t, "")))
		case len(bullets) > 0 && (strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")):
			bullets[len(bullets)-1] += " " + t
		default:
			prose = append(prose, t)
		}
	}
	if len(bullets) > 0 && len(prose) == 0 {
		return bullets
	}
	if len(prose) > 0 {
		return append([]string{strings.Join(prose, " ")}, bullets...)
	}
	return nil
}

// Abstained reports whether every part of the answer says the sources do not answer (an empty
// answer counts as abstaining).
func (r Report) Abstained() bool {
	for _, p := range r.Parts {
		if !strings.Contains(strings.ToLower(p), NotAnswered) {
			return false
		}
	}
	return true
}

// AnswerText is the answer section as plain text: escapes, emphasis and citation markers removed.
func (r Report) AnswerText() string { return plain(r.Answer) }

// FirstSentence is the first sentence of the answer: of the first part (the first bullet's text
// after its label), as plain text without quotation marks.
func (r Report) FirstSentence() string {
	if len(r.Parts) == 0 {
		return ""
	}
	p := strings.TrimSpace(r.Parts[0])
	// A verbatim sentence is quoted whole: it runs to the matching closing mark.
	if strings.HasPrefix(p, "“") {
		depth := 0
		for i, c := range p {
			switch c {
			case '“':
				depth++
			case '”':
				depth--
				if depth == 0 {
					return strings.TrimSpace(plain(p[len("“"):i]))
				}
			}
		}
	}
	return firstSentence(strings.NewReplacer("“", "", "”", "").Replace(plain(p)))
}

// plain strips citation markers, emphasis and escapes.
func plain(s string) string {
	s = reCite.ReplaceAllString(s, "")
	s = reEmphasis.ReplaceAllString(s, "$2")
	s = reSingleEmph.ReplaceAllString(s, "$1$2")
	return strings.TrimSpace(Unescape(s))
}

// firstSentence cuts text after the first sentence end: . ! or ? (with any closing quotes or
// brackets) followed by a space and an upper-case letter, digit or opening quote, and not after an
// abbreviation (one letter, Mr, Dr, etc.).
func firstSentence(text string) string {
	rs := []rune(text)
	for i, c := range rs {
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(rs) && strings.ContainsRune(`"')]’”`, rs[j]) {
			j++
		}
		if j >= len(rs) || rs[j] != ' ' {
			continue
		}
		k := j
		for k < len(rs) && rs[k] == ' ' {
			k++
		}
		if k >= len(rs) {
			break
		}
		if next := rs[k]; !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune(`"“‘(`, next) {
			continue
		}
		if c == '.' && abbreviation(string(rs[:i])) {
			continue
		}
		return strings.TrimSpace(string(rs[:j]))
	}
	return strings.TrimSpace(text)
}

var abbreviations = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "jr": true, "sr": true,
	"vs": true, "etc": true, "inc": true, "co": true, "ltd": true, "fig": true, "approx": true, "e.g": true, "i.e": true, "u.s": true}

func abbreviation(before string) bool {
	f := strings.Fields(before)
	if len(f) == 0 {
		return false
	}
	w := strings.ToLower(strings.TrimLeft(f[len(f)-1], `("“`))
	if utf8.RuneCountInString(w) == 1 {
		return true // an initial: "J. K. Rowling"
	}
	return abbreviations[w]
}

// inlineQuotes are the answer's cited quotations: a text segment wrapped whole in “…” before a
// citation, and any “…” inside other cited segments, each with the citation that follows the
// segment. Quotation marks with no citation after them (a question's words echoed) are no quote.
func inlineQuotes(answer string) []Quote {
	var out []Quote
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "- "), "* "))
		line = reBoldLabel.ReplaceAllString(line, "")
		start := 0
		idx := reCite.FindAllStringSubmatchIndex(line, -1)
		for _, m := range idx {
			seg, cite := strings.TrimSpace(line[start:m[0]]), line[m[2]:m[3]]
			start = m[1]
			for _, q := range quotedSpans(seg) {
				out = append(out, Quote{Text: Unescape(q), Cite: cite, Answer: true})
			}
		}
	}
	return out
}

// quotedSpans: the whole segment when it is wrapped in “…” (nested marks stay inside), else each
// outermost “…” in it.
func quotedSpans(seg string) []string {
	if strings.HasPrefix(seg, "“") && strings.HasSuffix(seg, "”") && len(seg) > len("“”") {
		return []string{seg[len("“") : len(seg)-len("”")]}
	}
	var out []string
	depth, from := 0, 0
	for i, c := range seg {
		switch c {
		case '“':
			if depth == 0 {
				from = i + len("“")
			}
			depth++
		case '”':
			if depth > 0 {
				depth--
				if depth == 0 {
					out = append(out, seg[from:i])
				}
			}
		}
	}
	return out
}

// blockQuotes are the report's cited > block quotes, each ending at its "> — `path`, line n [k]"
// line; a block without one (a draft notice) is no quote. Fenced table rows keep their lines.
func blockQuotes(lines []string) []Quote {
	var out []Quote
	var block []string
	inAnswer := false
	flush := func(cite string) {
		var text []string
		for _, l := range block {
			l = strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
			if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
				continue
			}
			text = append(text, l)
		}
		t := strings.TrimSpace(strings.Join(text, "\n"))
		if t != "" && cite != "" {
			out = append(out, Quote{Text: Unescape(t), Cite: cite, Block: true, Answer: inAnswer})
		}
		block = nil
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			inAnswer = strings.EqualFold(strings.TrimSpace(l[3:]), "Answer")
		}
		if !strings.HasPrefix(l, ">") {
			if len(block) > 0 {
				flush("")
			}
			continue
		}
		body := strings.TrimSpace(strings.TrimPrefix(l, ">"))
		if m := reBlockCite.FindStringSubmatch(body); m != nil {
			flush(m[1])
			continue
		}
		if body == "" {
			continue // the blank > line before the citation
		}
		block = append(block, l)
	}
	if len(block) > 0 {
		flush("")
	}
	return out
}
