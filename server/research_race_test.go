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

// Many jobs racing for the last credits: each create holds its price in the transaction that accepts
// it, so exactly the jobs the balance pays for are accepted and the rest answer 402 at once; no
// accepted job fails for credits at dispatch, and the ledger ends exactly at what was paid for.
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
						require.Contains(t, string(r.Body), "insufficient_credits")
						refused <- r.Status
					default:
						t.Errorf("create answered %d: %s", r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			close(accepted)
			close(refused)
			require.Len(t, accepted, credits/perRun, "exactly the runs the credits pay for are accepted")
			require.Len(t, refused, attempts-credits/perRun)

			for id := range accepted {
				j := e.await(t, acct.Key, id, isTerminal)
				require.Equal(t, gen.JobStatusCompleted, j.Status, "no accepted job fails for credits at dispatch")
				require.Equal(t, perRun, j.CreditsCharged)
				require.EqualValues(t, 1, consumptionCount(t, e.Store, id))
			}
			bal, err := e.Store.Balance(context.Background(), acct.ID)
			require.NoError(t, err)
			require.EqualValues(t, (credits-credits/perRun*perRun)*10, bal)
			var negative, holds int64
			require.NoError(t, e.Store.DB().Model(&store.LedgerEntry{}).Where("account_id = ? AND balance_after_cents < 0", acct.ID).Count(&negative).Error)
			require.Zero(t, negative)
			require.NoError(t, e.Store.DB().Model(&store.CreditHold{}).Where("account_id = ?", acct.ID).Count(&holds).Error)
			require.Zero(t, holds, "every hold was consumed by its charge")
		})
	}
}
