package accounts_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestKeyLifecycle: a key authenticates as its account with its scopes until it is revoked, and
// the revocation holds at once, although the key was just cached.
func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := t.Context()
		svc := accounts.New(st, accounts.Options{})
		acct, _, err := st.EnsureAccount(ctx, "keys@example.com", store.TierPro, false)
		require.NoError(t, err)
		label := "ci"
		k, secret, err := svc.CreateKey(ctx, acct.ID, &label, []string{"research", "keys"})
		require.NoError(t, err)
		require.Equal(t, []string{"research", "keys"}, k.ScopeList())

		p, err := svc.AuthenticateKey(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, auth.Principal{AccountID: acct.ID, Email: acct.Email, Tier: store.TierPro, Method: auth.MethodAPIKey,
			KeyID: k.ID, Scopes: []string{"research", "keys"}, Secret: secret}, p)
		page, err := svc.Keys(ctx, acct.ID, store.PageRequest{Limit: 10})
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		require.NotNil(t, page.Items[0].LastUsedAt, "a use is recorded")

		require.NoError(t, svc.RevokeKey(ctx, acct.ID, k.ID))
		require.NoError(t, svc.RevokeKey(ctx, acct.ID, k.ID), "revoking twice is harmless")
		_, err = svc.AuthenticateKey(ctx, secret)
		require.True(t, fault.IsKind(err, fault.Unauthenticated), "%v", err)

		require.True(t, fault.IsKind(svc.RevokeKey(ctx, "another-account", k.ID), fault.NotFound))
		_, err = svc.AuthenticateKey(ctx, auth.MintKey().Secret)
		require.True(t, fault.IsKind(err, fault.Unauthenticated), "%v", err)
		_, err = svc.AuthenticateKey(ctx, "rsk-")
		require.True(t, fault.IsKind(err, fault.Unauthenticated), "%v", err)
	})
}

// TestTokenMakesAccountOnce: the first sign-in of an email makes a free account; later ones find it.
func TestTokenMakesAccountOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := t.Context()
		svc := accounts.New(st, accounts.Options{})
		first, err := svc.AuthenticateToken(ctx, auth.Claims{Email: "New@Example.com", Scopes: []string{"keys"}})
		require.NoError(t, err)
		require.Equal(t, store.TierFree, first.Tier)
		require.Equal(t, auth.MethodOAuth, first.Method)
		again, err := svc.AuthenticateToken(ctx, auth.Claims{Email: "new@example.com"})
		require.NoError(t, err)
		require.Equal(t, first.AccountID, again.AccountID)
	})
}
