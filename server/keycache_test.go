package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestRevokedKeyStopsAtOnce: verified keys are cached briefly, but a key revoked through the API
// is refused on the very next request, even right after it was used (and so cached).
func TestRevokedKeyStopsAtOnce(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			acct := env.NewAccount(t, store.TierPro, false, 0)
			doomed := env.Key(t, acct.ID, "keys")
			doomedID := keyIDOf(t, env, acct.Key, doomed)
			for range 3 {
				require.Equal(t, http.StatusOK, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: doomed}).Status)
			}
			r := env.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + doomedID, Token: acct.Key})
			require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: doomed})
			require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
			require.Equal(t, "unauthenticated", r.Problem(t).Code)
			// A key revoking itself is refused afterwards too.
			r = env.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + keyIDOf(t, env, acct.Key, acct.Key), Token: acct.Key})
			require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
			require.Equal(t, http.StatusUnauthorized, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: acct.Key}).Status)
		})
	}
}
