package server_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// Concurrent creates with one name race for one slug: each gets its own, none fails.
func TestExpertCreatesRaceForOneSlug(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			const n = 8
			keys := make([]string, n)
			for i := range keys {
				keys[i] = e.NewAccount(t, store.TierPro, false, 0).Key
			}
			slugs := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := e.Send(servertest.Req{Method: "POST", Path: "/api/v2/experts", Token: keys[i],
						Body: map[string]any{"name": "Vendor checker", "system_prompt": "Check vendors."}})
					if !assertCreated(t, r, err) {
						return
					}
					var ex gen.Expert
					r.JSON(t, &ex)
					slugs[i] = ex.Slug
				}()
			}
			wg.Wait()
			seen := map[string]bool{}
			for _, s := range slugs {
				require.NotEmpty(t, s)
				require.False(t, seen[s], "slug %s given twice", s)
				seen[s] = true
			}
		})
	}
}

func assertCreated(t *testing.T, r *servertest.Resp, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	if r.Status != http.StatusCreated {
		t.Errorf("create answered %d: %s", r.Status, r.Body)
		return false
	}
	return true
}
