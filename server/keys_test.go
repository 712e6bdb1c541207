package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestKeysLifecycle(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			email := storetest.Name("owner") + "@example.com"
			tok := env.Token(t, email, "research", "billing", "keys")

			// Scopes omitted: inherited exactly.
			r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": "laptop"}})
			require.Equal(t, http.StatusCreated, r.Status)
			var created gen.ApiKeyCreated
			r.JSON(t, &created)
			require.ElementsMatch(t, []gen.Scope{"research", "billing", "keys"}, created.Scopes)
			require.Equal(t, created.Key[:8], created.Prefix)

			// The secret never appears again.
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: created.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.NotContains(t, string(r.Body), created.Key)

			// A subset is fine; a superset is 403; an API key cannot mint.
			r = env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"scopes": []string{"research"}}})
			require.Equal(t, http.StatusCreated, r.Status)
			r = env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"scopes": []string{"admin"}}})
			require.Equal(t, http.StatusForbidden, r.Status)
			r = env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: created.Key, Body: map[string]any{}})
			require.Equal(t, http.StatusForbidden, r.Status)
			require.Equal(t, "oauth_required", r.Problem(t).Code)

			// Revocation is idempotent and the key stops working.
			path := "/api/v2/keys/" + created.KeyId.String()
			require.Equal(t, http.StatusNoContent, env.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: tok}).Status)
			require.Equal(t, http.StatusNoContent, env.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: tok}).Status)
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: created.Key})
			require.Equal(t, http.StatusUnauthorized, r.Status)

			// Another account's key is 404.
			other := env.NewAccount(t, store.TierFree, false, 0)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: other.Key}).Status)
		})
	}
}
