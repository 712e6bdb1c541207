package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Terms and conditions, policies and contracts number their clauses ("2.3 A joining fee of £20 is
// payable when you join.") and letter their sub-clauses ("(a) Off-Peak - £24.99 per month."),
// each on a line of its own with its wrapped lines indented under it. Each clause is a paragraph
// of its own; a clause that ends in a colon announces its sub-clauses, which are its items.

// reClauseMark is a clause's number or a sub-clause's letter and the space after it.
var reClauseMark = regexp.MustCompile(`^\s*(?:\d{1,3}(?:\.\d{1,3})+\.?|\([a-z]{1,2}\)|\([ivx]{1,4}\))\s+`)

// clauseAt: line j opens a clause. Its number is followed by a capital ("2.3 A joining fee", not a
// wrapped "2.5 million people …"), or it is a sub-clause; and the line before ends a sentence,
// announces a list, is blank, or opens a clause or a numbered heading itself.
func (p *docParser) clauseAt(j int) bool {
	m := reClauseMark.FindString(p.lines[j])
	if m == "" {
		return false
	}
	rest := p.lines[j][len(m):]
	r, _ := utf8.DecodeRuneInString(rest)
	if !strings.HasPrefix(strings.TrimSpace(m), "(") && !unicode.IsUpper(r) {
		return false
	}
	if j == 0 {
		return true
	}
	prev := strings.TrimSpace(p.lines[j-1])
	return prev == "" || EndsSentence(prev) || strings.HasSuffix(prev, ":") || strings.HasSuffix(prev, ";") ||
		reClauseMark.MatchString(p.lines[j-1]) || reListItem.MatchString(p.lines[j-1])
}

// clause reads the clause at line i and its wrapped lines: a heading when it only announces its
// sub-clauses ("We offer the following monthly memberships:"), else sentences (a sub-clause's are
// items of the list its clause announces). Its number or letter is no part of its text.
func (p *docParser) clause(i int) int {
	sub := strings.HasPrefix(strings.TrimSpace(p.lines[i]), "(")
	lines := []string{reClauseMark.ReplaceAllString(p.lines[i], "")}
	j := i + 1
	for j < len(p.lines) && !structural(p.lines[j]) && !p.clauseAt(j) {
		lines = append(lines, p.lines[j])
		j++
	}
	if !sub {
		p.endLeadIn()
	}
	if text := nlp.Collapse(strings.Join(lines, " ")); strings.HasSuffix(text, ":") && looksLikeHeading(lines, text) {
		p.heading(text)
		return j
	}
	kind := UnitSentence
	if sub {
		kind = UnitItem
		p.listed = true
	}
	p.prose(i+1, lines, kind)
	return j
}

// capsTitle is the number of lines in capitals a paragraph opens with before lines that are not
// (a document's title stacked above its version line: "IRONVALE FITNESS CLUBS" / "MEMBERSHIP
// TERMS AND CONDITIONS" / "Version 7 - effective from 1 September 2025"), 0 when it has none or
// is all capitals.
func capsTitle(lines []string) int {
	k := 0
	for k < len(lines) && k < 4 {
		t := strings.TrimSpace(lines[k])
		if !allCaps(t) || len(strings.Fields(t)) > 8 || strings.Contains(t, ":") || EndsSentence(t) {
			break
		}
		k++
	}
	if k == len(lines) {
		return 0
	}
	return k
}

// firstLine is the index of the document's first line that is not blank.
func (p *docParser) firstLine() int {
	for i, l := range p.lines {
		if strings.TrimSpace(l) != "" {
			return i
		}
	}
	return 0
}
