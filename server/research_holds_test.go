package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// Credits are held when a job is accepted: the quota shows what is left after the holds, a create
// (or a continuation) beyond it is 402, a cancel before dispatch gives the hold back, and the ledger
// is not touched until a run is dispatched. Nothing runs here (no workers), so every job stays
// queued.
func TestCreditHolds(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 7)
			quota := func() gen.QuotaResponse {
				var q gen.QuotaResponse
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				r.JSON(t, &q)
				return q
			}
			check := func(effort string) bool {
				var c gen.QuotaCheckResponse
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota/check?effort=" + effort, Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				r.JSON(t, &c)
				return c.Allowed
			}
			create := func(effort string) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: acct.Key,
					Body: map[string]any{"question": "Which heat pumps work below minus twenty?", "effort": effort}})
			}

			r := create("high")
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var high gen.ResearchJobDetail
			r.JSON(t, &high)
			q := quota()
			require.Equal(t, 2, q.CreditsRemaining, "7 credits less the 5 held")
			require.Equal(t, 70, q.BalanceCents, "a hold is not a ledger entry")
			require.False(t, check("high"))
			require.True(t, check("medium"))

			r = create("high")
			require.Equal(t, http.StatusPaymentRequired, r.Status, string(r.Body))
			require.Contains(t, string(r.Body), "insufficient_credits")

			// Low effort costs nothing and holds nothing.
			require.Equal(t, http.StatusAccepted, create("low").Status)
			require.Equal(t, 2, quota().CreditsRemaining)

			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + high.JobId.String() + "/cancel", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.Equal(t, 7, quota().CreditsRemaining, "the cancel released the hold")
			require.True(t, check("high"))
			require.Equal(t, http.StatusAccepted, create("high").Status)

			bal, err := e.Store.Balance(context.Background(), acct.ID)
			require.NoError(t, err)
			require.EqualValues(t, 70, bal)
			var entries int64
			require.NoError(t, e.Store.DB().Model(&store.LedgerEntry{}).Where("account_id = ?", acct.ID).Count(&entries).Error)
			require.EqualValues(t, 1, entries, "only the deposit: nothing was charged or refunded")
		})
	}
}
