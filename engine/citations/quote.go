package citations

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The quote-matching rule of citation verification. A quote is verified when its words and numbers
// appear in the source text, contiguously and in order:
//   - case, punctuation, Markdown escapes and link targets are ignored, and so is every kind of
//     whitespace, so a quote may be re-wrapped or joined across the source's line breaks;
//   - a word hyphenated across a line break in the source ("infor-\nmation") matches whole;
//   - numbers are tokens of their own and must be identical, separators included ("9,000" is
//     not "9000", "12" is not "15");
//   - an ellipsis ("…", "...", "[…]") splits a quote into pieces that must each match, in order.
//
// Matching works on token strings: " tok tok tok " with a space on each side, so a containment
// test is a whole-token match.

var (
	reEllipsis   = regexp.MustCompile(`\[?(?:…|\.\.\.)\]?`)
	reLinkTarget = regexp.MustCompile(`\]\([^)\s]*\)`)
	// reMdEscape is a Markdown backslash escape: the character stands for itself ("1\.2" is "1.2").
	reMdEscape = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
)

// tokenString turns text into its token string (see above). Digits keep "." and "," that sit
// between two digits, so 3.5 and 9,000 stay one token.
func tokenString(s string) string {
	s = reLinkTarget.ReplaceAllString(s, "]")
	s = reMdEscape.ReplaceAllString(s, "$1")
	s = strings.ToLower(norm.NFKC.String(s))
	rs := []rune(s)
	var b strings.Builder
	b.WriteByte(' ')
	in := false
	for i, r := range rs {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if !word && (r == '.' || r == ',') && in && i > 0 && unicode.IsDigit(rs[i-1]) && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) {
			word = true
		}
		switch {
		case word:
			b.WriteRune(r)
			in = true
		case in:
			b.WriteByte(' ')
			in = false
		}
	}
	if in {
		b.WriteByte(' ')
	}
	return b.String()
}

// SourceVariants are the token strings a quote may match in: the text as it is, and with words
// hyphenated across line breaks joined.
func SourceVariants(text string) []string {
	out := []string{tokenString(text)}
	if joined, ok := joinWrapHyphens(text); ok {
		out = append(out, tokenString(joined))
	}
	return out
}

// joinWrapHyphens joins words hyphenated across a line break ("infor-\nmation" → "information"):
// a letter, a hyphen (or soft hyphen), optional blanks, a newline, optional blanks or quote
// markers, a letter. ok is false when there is none.
func joinWrapHyphens(text string) (string, bool) {
	var b strings.Builder
	last, found := 0, false
	for i := 0; i < len(text); i++ {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r != '-' && r != '\u00AD' && r != '\u2010' {
			continue
		}
		prev, _ := utf8.DecodeLastRuneInString(text[:i])
		if !unicode.IsLetter(prev) {
			continue
		}
		j := i + size
		for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
			j++
		}
		if j >= len(text) || text[j] != '\n' {
			continue
		}
		j++
		for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '>') {
			j++
		}
		next, _ := utf8.DecodeRuneInString(text[j:])
		if !unicode.IsLetter(next) {
			continue
		}
		b.WriteString(text[last:i])
		last, found = j, true
		i = j - 1
	}
	if !found {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// quotePieces splits a quote at ellipses into token strings, dropping empty pieces.
func quotePieces(quote string) []string {
	var out []string
	for _, p := range reEllipsis.Split(quote, -1) {
		if t := tokenString(p); strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// MatchQuote reports whether quote is in a source given as its variants, and why not.
func MatchQuote(quote string, variants []string) (bool, string) {
	pieces := quotePieces(quote)
	if len(pieces) == 0 {
		return false, "the quote is empty"
	}
	for _, v := range variants {
		if piecesIn(pieces, v) {
			return true, ""
		}
	}
	if len(pieces) == 1 && numbersDiffer(pieces[0], variants) {
		return false, "the quote's words are in the source but its numbers are not"
	}
	return false, "the quoted text is not in the source"
}

// piecesIn: each piece occurs in v after the previous one.
func piecesIn(pieces []string, v string) bool {
	at := 0
	for _, p := range pieces {
		i := strings.Index(v[at:], p)
		if i < 0 {
			return false
		}
		at += i + len(p) - 1 // the trailing space is the next piece's leading one
	}
	return true
}

// numbersDiffer: with every number in the quote treated as a wildcard, the quote would match.
// It only sharpens the reason a quote failed.
func numbersDiffer(piece string, variants []string) bool {
	toks := strings.Fields(piece)
	hasNumber := false
	for _, t := range toks {
		if strings.ContainsFunc(t, unicode.IsDigit) {
			hasNumber = true
		}
	}
	if !hasNumber {
		return false
	}
	for _, v := range variants {
		vt := strings.Fields(v)
		for i := 0; i+len(toks) <= len(vt); i++ {
			ok := true
			for j, t := range toks {
				if strings.ContainsFunc(t, unicode.IsDigit) {
					if !strings.ContainsFunc(vt[i+j], unicode.IsDigit) {
						ok = false
						break
					}
				} else if vt[i+j] != t {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// QuoteInText reports whether quote matches text under the verification rule (for engines that
// want to check a quote before they write it, and for tests).
func QuoteInText(quote, text string) bool {
	ok, _ := MatchQuote(quote, SourceVariants(text))
	return ok
}
