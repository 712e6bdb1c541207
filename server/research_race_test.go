package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// Many jobs racing for the last credits: every accepted job either runs charged or fails at dispatch
// with insufficient_credits, uncharged; the balance ends exactly at what was paid for and never below zero.
func TestResearchRaceForTheLastCredits(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			const credits, perRun, attempts = 12, 5, 10 // room for two high runs
			acct := e.NewAccount(t, store.TierPro, false, credits)

			var wg sync.WaitGroup
			accepted := make(chan string, attempts)
			refused := make(chan int, attempts)
			for i := 0; i < attempts; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.create(t, acct.Key, map[string]any{"question": "What limits heat pump efficiency in cold climates?", "effort": "high"}, nil)
					switch r.Status {
					case http.StatusAccepted:
						var j gen.ResearchJobDetail
						r.JSON(t, &j)
						accepted <- j.JobId.String()
					case http.StatusPaymentRequired:
						refused <- r.Status
					default:
						t.Errorf("create answered %d: %s", r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			close(accepted)
			close(refused)

			completed := 0
			for id := range accepted {
				j := e.await(t, acct.Key, id, isTerminal)
				switch j.Status {
				case gen.JobStatusCompleted:
					completed++
					require.Equal(t, perRun, j.CreditsCharged)
					require.EqualValues(t, 1, consumptionCount(t, e.Store, id))
				case gen.JobStatusFailed:
					jobErr, err := j.Error.Get()
					require.NoError(t, err)
					require.Equal(t, "insufficient_credits", jobErr.Code)
					require.Zero(t, j.CreditsCharged)
					require.Zero(t, consumptionCount(t, e.Store, id))
				default:
					t.Fatalf("job %s ended %s", id, j.Status)
				}
			}
			require.Equal(t, credits/perRun, completed, "exactly the runs the credits pay for")
			bal, err := e.Store.Balance(context.Background(), acct.ID)
			require.NoError(t, err)
			require.EqualValues(t, (credits-completed*perRun)*10, bal)
			var negative int64
			require.NoError(t, e.Store.DB().Model(&store.LedgerEntry{}).Where("account_id = ? AND balance_after_cents < 0", acct.ID).Count(&negative).Error)
			require.Zero(t, negative)
		})
	}
}
