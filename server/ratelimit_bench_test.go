package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// BenchmarkGetResearchRateLimit measures what request rate limiting adds to GET /research/{id}
// (API key authentication, one detail read): one upsert taking the key's and the account's tokens.
//
//	[TEST_DATABASE_URL=postgres://...] go test ./server/ -run '^$' -bench GetResearchRateLimit -benchtime 3s
func BenchmarkGetResearchRateLimit(b *testing.B) {
	for _, d := range storetest.Dialects() {
		for _, limited := range []bool{false, true} {
			name := string(d) + "/limits=off"
			if limited {
				name = string(d) + "/limits=on"
			}
			b.Run(name, func(b *testing.B) {
				limits := servertest.GenerousLimits()
				limits.Off = !limited
				e := servertest.New(b, d, func(c *servertest.Config) { c.RateLimits = limits })
				acct := e.NewAccount(b, store.TierPro, false, 100)
				r := e.Do(b, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: acct.Key,
					Body: map[string]any{"question": "How fast is a detail read?", "effort": "low"}})
				var j struct {
					JobID string `json:"job_id"`
				}
				r.JSON(b, &j)
				req, err := http.NewRequest(http.MethodGet, e.URL+"/api/v2/research/"+j.JobID, nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+acct.Key)
				b.ResetTimer()
				for b.Loop() {
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		}
	}
}
