package expert

import (
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/jobs"
)

// reservedSlugs name literal paths under /api/v2/experts; they are never issued as slugs.
var reservedSlugs = map[string]bool{
	"custom": true, "apply": true, "build": true, "extract": true, "generate-workflow": true,
	"validate": true, "mcp-tools": true, "skills": true, "agents": true,
}

const slugMaxBase = 60

// Handle is a name as a slug: lowercase ASCII words (diacritics stripped) joined by hyphens, at
// most 60 characters, "expert" when nothing is left. "Vendor Risk Analyst" → "vendor-risk-analyst".
func Handle(name string) string {
	words := jobs.SlugWords(name)
	base := ""
	for _, w := range words {
		next := w
		if base != "" {
			next = base + "-" + w
		}
		if len(next) > slugMaxBase {
			if base == "" {
				base = w[:slugMaxBase]
			}
			break
		}
		base = next
	}
	if base == "" {
		base = "expert"
	}
	return base
}

// slugCandidate is the slug to try for an expert: its handle alone first (suffixLen 0), then with
// the first suffixLen hex digits of its id. Reserved words, registry ids and UUID-shaped strings
// are never returned bare, so {expert_id} is never ambiguous.
func slugCandidate(handle, id string, suffixLen int, reg *Registry) string {
	if suffixLen == 0 {
		_, builtin := reg.Get(handle)
		if _, err := uuid.Parse(handle); err != nil && !builtin && !reservedSlugs[handle] {
			return handle
		}
		suffixLen = 6
	}
	hex := strings.ReplaceAll(id, "-", "")
	suffixLen = min(suffixLen, len(hex))
	return handle + "-" + hex[:suffixLen]
}
