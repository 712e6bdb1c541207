package extractive

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine/extract"
)

// priorReport is what a continuation needs from the last report.
type priorReport struct {
	text          string
	maxCite       int
	continuations int
	open          []string // the open questions it named last
	hadOpen       bool
}

var (
	reCitation  = regexp.MustCompile("(?m)^(\\d+)\\. `[^`]+`, lines? \\d")
	reOpenBlock = regexp.MustCompile(`(?m)^#{2,3} Open questions\n\n((?:- .*\n)+)`)
)

func parsePrior(md string) priorReport {
	p := priorReport{text: md}
	for _, m := range reCitation.FindAllStringSubmatch(md, -1) {
		n, _ := strconv.Atoi(m[1])
		p.maxCite = max(p.maxCite, n)
	}
	for _, line := range strings.Split(md, "\n") {
		h, ok := extract.Heading(line)
		if !ok {
			continue
		}
		h = strings.TrimSpace(h)
		if strings.HasPrefix(h, "Continuation") && !strings.HasPrefix(h, "Continuation sources") {
			p.continuations++
		}
	}
	// The last list wins: a continuation's own open questions replace the report's.
	if blocks := reOpenBlock.FindAllStringSubmatch(md, -1); len(blocks) > 0 {
		p.hadOpen = true
		for _, line := range strings.Split(strings.TrimSpace(blocks[len(blocks)-1][1]), "\n") {
			q := strings.TrimPrefix(line, "- ")
			if i := strings.Index(q, " — "); i >= 0 {
				q = q[:i]
			}
			if q = mdUnescape(strings.TrimSpace(q)); q != "" {
				p.open = append(p.open, q)
			}
		}
	}
	return p
}

// followUps are what a continuation researches: the open questions the prior report named, or,
// when it named none, the question's own parts again (for evidence it did not quote).
func (p priorReport) followUps(question string) []subQuestion {
	if len(p.open) == 0 {
		return subQuestions(question, 100)
	}
	var out []subQuestion
	for _, q := range p.open {
		out = append(out, subQuestions(q, 1)...)
	}
	return out
}

// mdUnescape removes the backslash escapes nlp.EscapeMarkdown adds.
func mdUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_[]<>|~#+-=.)", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
