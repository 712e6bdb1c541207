package jobs

import (
	"strings"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// slugStopwords are dropped from slugs so they keep the words that identify the question.
var slugStopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "for": true, "to": true,
	"and": true, "or": true, "is": true, "are": true, "was": true, "were": true, "be": true, "it": true,
	"its": true, "what": true, "which": true, "how": true, "why": true, "who": true, "whom": true,
	"when": true, "where": true, "does": true, "do": true, "did": true, "with": true, "by": true,
	"at": true, "from": true, "as": true, "that": true, "this": true, "these": true, "those": true,
	"about": true, "into": true, "than": true, "then": true, "can": true, "could": true,
	"should": true, "would": true, "will": true, "my": true, "our": true, "your": true, "their": true,
	"me": true, "we": true, "you": true, "they": true, "there": true, "please": true, "i": true,
}

const (
	slugMaxWords = 6
	slugMaxBase  = 60
)

// Slug derives a job's slug from its question: up to six significant words, lowercase ASCII,
// joined by hyphens, then the first hex digits of the job id so that it is unique in practice
// ("eu-heat-pump-subsidies-2025-7c9e66"). suffixLen grows when a slug is taken. A slug never
// parses as a UUID, so {job_id_or_slug} is never ambiguous.
func Slug(question, jobID string, suffixLen int) string {
	words := SlugWords(question)
	var kept []string
	for _, w := range words {
		if !slugStopwords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		kept = words
	}
	base := ""
	for i, w := range kept {
		if i == slugMaxWords {
			break
		}
		if len(w) > slugMaxBase {
			w = w[:slugMaxBase]
		}
		next := w
		if base != "" {
			next = base + "-" + w
		}
		if len(next) > slugMaxBase {
			break
		}
		base = next
	}
	if base == "" {
		base = "research"
	}
	hex := strings.ReplaceAll(jobID, "-", "")
	if suffixLen > len(hex) {
		suffixLen = len(hex)
	}
	slug := base + "-" + hex[:suffixLen]
	if _, err := uuid.Parse(slug); err == nil {
		slug = "job-" + slug
	}
	return slug
}

// SlugWords lowercases, strips diacritics and splits on anything that is not an ASCII letter or digit.
func SlugWords(s string) []string {
	t := transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	folded, _, err := transform.String(t, s)
	if err != nil {
		folded = s
	}
	folded = strings.ToLower(folded)
	return strings.FieldsFunc(folded, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}
