// Package citations checks the quoted citations a run wrote (report.md and the structured
// output's basis) against the sources it stored, under one quote-matching rule (quote.go) that
// engines may also apply before they write a quote.
package citations

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/workspace"
)

// unverifiedMark opens the line that replaces a quote that failed verification. Reports are
// verified again after each continuation; a marked block still counts as a citation, unverified.
const unverifiedMark = "⚠ Unverified quote removed"

// CitationCheck is the outcome of one quoted citation.
type CitationCheck struct {
	Where    string `json:"where"`  // "report", or "structured_output_basis/<field>"
	Source   string `json:"source"` // the reference as written
	Quote    string `json:"quote"`
	Verified bool   `json:"verified"`
	Reason   string `json:"reason,omitempty"`
}

// Verification is what VerifyWorkspace found and changed.
type Verification struct {
	Total, Verified int
	// Failed lists the citations that did not verify (removed from the report or the basis).
	Failed []CitationCheck
	Report string // report.md after verification
	// StructuredOutput and Basis after verification; nil when the run wrote none.
	StructuredOutput map[string]any
	Basis            engine.Basis
	// Unsupported are the top-level fields set to null or dropped for want of a verified citation.
	Unsupported []string
}

// VerifyWorkspace checks every quoted citation a run wrote (report.md and, when present,
// structured_output_basis.json) against the stored sources of the workspace, and rewrites the
// files in the working tree: a quote that fails is replaced by an unverified mark, a basis citation
// that fails is dropped, and a structured-output field left without support is settled by
// ApplyBasis (schema is the run's json_schema). A required field that cannot be supported is an
// *Error with code structured_output_invalid naming it.
func VerifyWorkspace(repo *workspace.Repo, schema map[string]any) (Verification, error) {
	srcs, err := sources.Open(repo, nil)
	if err != nil {
		return Verification{}, err
	}
	rv := &resolver{repo: repo, sources: srcs, cache: map[string]resolved{}}
	var v Verification
	report, err := repo.ReadWorking(engine.ReportPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Verification{}, fmt.Errorf("engine: read report: %w", err)
	default:
		v.Report = verifyReport(string(report), rv, &v)
		if v.Report != string(report) {
			if err := repo.WriteFile(engine.ReportPath, []byte(v.Report)); err != nil {
				return Verification{}, fmt.Errorf("engine: rewrite report: %w", err)
			}
		}
	}
	if err := verifyStructured(repo, schema, rv, &v); err != nil {
		return v, err
	}
	return v, nil
}

// verifyStructured checks the basis citations and settles unsupported fields.
func verifyStructured(repo *workspace.Repo, schema map[string]any, rv *resolver, v *Verification) error {
	raw, err := repo.ReadWorking(engine.StructuredOutputPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: read structured output: %w", err)
	}
	if err := json.Unmarshal(raw, &v.StructuredOutput); err != nil {
		return fmt.Errorf("engine: decode structured output: %w", err)
	}
	basis, err := engine.ReadBasis(repo)
	if err != nil || basis == nil {
		return err
	}
	for _, field := range slices.Sorted(maps.Keys(basis)) {
		fb := basis[field]
		kept := fb.Citations[:0]
		for _, c := range fb.Citations {
			chk := rv.check(c.Source, c.Quote)
			chk.Where = "structured_output_basis/" + field
			v.Total++
			if chk.Verified {
				v.Verified++
				kept = append(kept, c)
				continue
			}
			v.Failed = append(v.Failed, chk)
			fb.Confidence = lowerConfidence(fb.Confidence)
		}
		fb.Citations = kept
		basis[field] = fb
	}
	out, settled, unsupported, err := engine.ApplyBasis(schema, v.StructuredOutput, basis)
	v.Unsupported = unsupported
	if err != nil {
		return err
	}
	v.StructuredOutput, v.Basis = out, settled
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("engine: encode structured output: %w", err)
	}
	if err := repo.WriteFile(engine.StructuredOutputPath, append(b, '\n')); err != nil {
		return fmt.Errorf("engine: rewrite structured output: %w", err)
	}
	return engine.WriteBasis(repo, settled)
}

// resolved is a cited source's text as token strings, or why it has none.
type resolved struct {
	variants []string
	reason   string
}

// resolver finds the stored text a citation refers to.
type resolver struct {
	repo    *workspace.Repo
	sources *sources.Store
	cache   map[string]resolved
}

func (r *resolver) resolve(ref string) resolved {
	if got, ok := r.cache[ref]; ok {
		return got
	}
	var res resolved
	if st, ok := r.sources.Lookup(ref); ok {
		text, err := r.sources.Text(st)
		if err != nil {
			res.reason = "its stored copy " + st.Path + " cannot be read"
		} else {
			res.variants = SourceVariants(text)
		}
	} else if text, ok := r.workspaceText(ref); ok {
		res.variants = SourceVariants(text)
	} else {
		res.reason = "the cited source has no stored copy in the workspace"
	}
	r.cache[ref] = res
	return res
}

// workspaceText extracts the text of a workspace file (an input file) the way a run reads it.
func (r *resolver) workspaceText(p string) (string, bool) {
	if _, err := workspace.CleanPath(p); err != nil || p == engine.ReportPath || strings.HasPrefix(p, engine.SiteDir+"/") {
		return "", false
	}
	data, err := r.repo.ReadWorking(p)
	if err != nil {
		return "", false
	}
	return extract.Text(p, data)
}

func (r *resolver) check(ref, quote string) CitationCheck {
	c := CitationCheck{Source: ref, Quote: quote}
	if strings.TrimSpace(ref) == "" {
		c.Reason = "the citation names no source"
		return c
	}
	res := r.resolve(ref)
	if res.variants == nil {
		c.Reason = res.reason
		return c
	}
	c.Verified, c.Reason = MatchQuote(quote, res.variants)
	return c
}

var (
	reBacktick  = regexp.MustCompile("`([^`]+)`")
	reMdLink    = regexp.MustCompile(`\]\((https?://[^)\s]+)\)`)
	reAngleURL  = regexp.MustCompile(`<(https?://[^>\s]+)>`)
	reBareURL   = regexp.MustCompile(`https?://[^\s)>\]]+`)
	reSourceID  = regexp.MustCompile(`\[(S\d+)\]`)
	reCiteNums  = regexp.MustCompile(`(\[\d+\])+\s*$`)
	reFenceLine = regexp.MustCompile("^(```|~~~)")
)

// attributionRef is the source reference of an attribution line ("— `path`, lines 3–7 [1]").
func attributionRef(line string) string {
	for _, re := range []*regexp.Regexp{reBacktick, reMdLink, reAngleURL} {
		if m := re.FindStringSubmatch(line); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	if m := reBareURL.FindString(line); m != "" {
		return strings.TrimRight(m, ".,;:")
	}
	if m := reSourceID.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// quoteBlock is a block quote of the report: lines [start, end).
type quoteBlock struct{ start, end int }

// verifyReport checks each quoted citation of a report, counts them in v and returns the report
// with failing quotes replaced by an unverified mark.
func verifyReport(report string, rv *resolver, v *Verification) string {
	lines := strings.Split(report, "\n")
	refs := sourceListRefs(lines)
	var out []string
	fence := ""
	for i := 0; i < len(lines); {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			out = append(out, line)
			i++
			continue
		}
		if m := reFenceLine.FindString(trimmed); m != "" {
			fence = m
			out = append(out, line)
			i++
			continue
		}
		if !isQuoteLine(line) {
			out = append(out, verifyInline(line, refs, rv, v))
			i++
			continue
		}
		b := quoteBlock{start: i}
		for b.end = i; b.end < len(lines) && isQuoteLine(lines[b.end]); b.end++ {
		}
		out = append(out, verifyBlock(lines[b.start:b.end], rv, v)...)
		i = b.end
	}
	return strings.Join(out, "\n")
}

func isQuoteLine(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " "), ">")
}

// quoteContent strips a block quote line's marker.
func quoteContent(line string) string {
	s := strings.TrimPrefix(strings.TrimLeft(line, " "), ">")
	return strings.TrimPrefix(s, " ")
}

// verifyBlock checks one block quote: a citation when its last line is an attribution.
func verifyBlock(block []string, rv *resolver, v *Verification) []string {
	var content []string
	for _, l := range block {
		content = append(content, quoteContent(l))
	}
	last := len(content) - 1
	for last >= 0 && strings.TrimSpace(content[last]) == "" {
		last--
	}
	if last < 0 {
		return block
	}
	if strings.HasPrefix(strings.TrimSpace(content[0]), unverifiedMark) {
		v.Total++
		return block
	}
	attr := strings.TrimSpace(content[last])
	if !strings.HasPrefix(attr, "—") && !strings.HasPrefix(attr, "-- ") {
		return block // a plain block quote, not a citation
	}
	var quote []string
	for _, l := range content[:last] {
		if t := strings.TrimSpace(l); t != "" && !reFenceLine.MatchString(t) {
			quote = append(quote, t)
		}
	}
	ref := attributionRef(attr)
	chk := rv.check(ref, strings.Join(quote, "\n"))
	chk.Where = "report"
	v.Total++
	if chk.Verified {
		v.Verified++
		return block
	}
	v.Failed = append(v.Failed, chk)
	where := "its cited source"
	if ref != "" {
		where = "`" + strings.ReplaceAll(ref, "`", "") + "`"
	}
	mark := fmt.Sprintf("> %s: it could not be verified against %s (%s).", unverifiedMark, where, chk.Reason)
	if nums := reCiteNums.FindString(attr); nums != "" {
		mark += " " + strings.TrimSpace(nums)
	}
	return []string{mark}
}

// lowerConfidence caps a field that lost a citation at medium (a field left with none becomes low
// in ApplyBasis).
func lowerConfidence(c string) string {
	if c == engine.ConfidenceHigh {
		return engine.ConfidenceMedium
	}
	return c
}
