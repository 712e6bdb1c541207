package servertest

import (
	"sort"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Coverage records which operations a test binary exercised, and with which statuses. It is shared
// by every Env in the binary so TestMain can fail the suite when an operation goes untested.
var Coverage = &coverage{seen: map[string]map[int]int{}}

type coverage struct {
	mu   sync.Mutex
	seen map[string]map[int]int
}

func (c *coverage) record(opID string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[opID] == nil {
		c.seen[opID] = map[int]int{}
	}
	c.seen[opID][status]++
}

// Missing lists the document's operations no test exercised.
func (c *coverage) Missing(doc *openapi3.T) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if c.seen[op.OperationID] == nil {
				missing = append(missing, op.OperationID)
			}
		}
	}
	sort.Strings(missing)
	return missing
}

// Statuses reports the statuses seen for an operation.
func (c *coverage) Statuses(opID string) map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]int{}
	for s, n := range c.seen[opID] {
		out[s] = n
	}
	return out
}
