package citations

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/researchd/researchd/engine/extract"
)

// Inline quotations are claims written as “quoted text” [n] in running prose (the extractive
// engine's answer sentences; any engine may write them). Their source is entry n of the report's
// source list, and they are checked like block quotes: a failing one is replaced in place.
var (
	reInlineQuote = regexp.MustCompile(`“([^“”]+)”\s*((?:\[\d+\])+)`)
	reListEntry   = regexp.MustCompile(`^\s*(\d+)\.\s+(.+)$`)
	reFirstNum    = regexp.MustCompile(`\[(\d+)\]`)
)

// sourceListRefs maps the numbers of the report's source lists (entries under a heading that names
// sources) to the reference each entry names.
func sourceListRefs(lines []string) map[string]string {
	refs := map[string]string{}
	inList := false
	for _, l := range lines {
		if h, ok := extract.Heading(strings.TrimSpace(l)); ok {
			inList = strings.Contains(strings.ToLower(h), "sources")
			continue
		}
		if !inList {
			continue
		}
		if m := reListEntry.FindStringSubmatch(l); m != nil {
			if ref := attributionRef(m[2]); ref != "" {
				refs[m[1]] = ref
			}
		}
	}
	return refs
}

// verifyInline checks the inline quotations of one prose line and returns the line with failing
// ones replaced by an unverified mark.
func verifyInline(line string, refs map[string]string, rv *resolver, v *Verification) string {
	v.Total += strings.Count(line, "("+unverifiedMark) // marked by an earlier verification
	if !strings.Contains(line, "“") {
		return line
	}
	return reInlineQuote.ReplaceAllStringFunc(line, func(m string) string {
		sub := reInlineQuote.FindStringSubmatch(m)
		num := reFirstNum.FindStringSubmatch(sub[2])[1]
		ref := refs[num]
		chk := rv.check(ref, sub[1])
		chk.Where = "report"
		if ref == "" {
			chk.Reason = "the source list has no entry " + num
		}
		v.Total++
		if chk.Verified {
			v.Verified++
			return m
		}
		v.Failed = append(v.Failed, chk)
		return fmt.Sprintf("(%s: it could not be verified (%s).) %s", unverifiedMark, chk.Reason, sub[2])
	})
}
