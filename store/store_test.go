package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestEnsureAccountIsIdempotentUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		email := storetest.Name("user") + "@example.com"
		ids := make(chan string, 8)
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, _, err := s.EnsureAccount(ctx, email, store.TierPro, false)
				require.NoError(t, err)
				ids <- a.ID
			}()
		}
		wg.Wait()
		close(ids)
		first := <-ids
		for id := range ids {
			require.Equal(t, first, id)
		}
		n, err := s.CountAccounts(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	})
}

func TestAPIKeyPagingAndRevocation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, "keys@example.com", "", false)
		require.NoError(t, err)
		for i := 0; i < 5; i++ {
			id := uuid.NewString()
			k := &store.APIKey{ID: id, AccountID: a.ID, Prefix: "rsk-abcd", Last4: "wxyz", Hash: strings.Repeat(id[:8], 8), Scopes: "research"}
			require.NoError(t, s.CreateAPIKey(ctx, k))
		}
		var seen []string
		req := store.PageRequest{Limit: 2}
		for {
			page, err := s.ListAPIKeys(ctx, a.ID, req)
			require.NoError(t, err)
			for _, k := range page.Items {
				seen = append(seen, k.ID)
			}
			if page.Next == nil {
				break
			}
			c, err := store.DecodeCursor(page.Next.Encode())
			require.NoError(t, err)
			req.Cursor = c
		}
		require.Len(t, seen, 5)
		require.NoError(t, s.RevokeAPIKey(ctx, a.ID, seen[0], time.Now()))
		require.NoError(t, s.RevokeAPIKey(ctx, a.ID, seen[0], time.Now()), "revoking twice is fine")
		other, _, err := s.EnsureAccount(ctx, "other@example.com", "", false)
		require.NoError(t, err)
		require.True(t, errors.Is(s.RevokeAPIKey(ctx, other.ID, seen[1], time.Now()), store.ErrNotFound))
	})
}

func TestDecodeCursorRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"!!!", "bm90IGpzb24", "e30"} {
		_, err := store.DecodeCursor(token)
		require.ErrorIs(t, err, store.ErrInvalidCursor, token)
	}
}

func TestLedgerNeverGoesNegativeUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, "ledger@example.com", "", false)
		require.NoError(t, err)
		require.NoError(t, s.AppendLedger(ctx, &store.LedgerEntry{AccountID: a.ID, Type: store.TxDeposit, AmountCents: 50}))
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.AppendLedger(ctx, &store.LedgerEntry{AccountID: a.ID, Type: store.TxConsumption, AmountCents: -10})
				mu.Lock()
				defer mu.Unlock()
				if errors.Is(err, store.ErrInsufficientFunds) {
					refused++
					return
				}
				require.NoError(t, err)
				ok++
			}()
		}
		wg.Wait()
		require.Equal(t, 5, ok)
		require.Equal(t, 7, refused)
		bal, err := s.Balance(ctx, a.ID)
		require.NoError(t, err)
		require.Zero(t, bal)
	})
}

// TestKeyLookupAndTouch: a prefix lookup brings each key's account along, and a key used within the
// last minute is not written again.
func TestKeyLookupAndTouch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, "touch@example.com", store.TierPro, true)
		require.NoError(t, err)
		id := uuid.NewString()
		require.NoError(t, s.CreateAPIKey(ctx, &store.APIKey{ID: id, AccountID: a.ID, Prefix: "rsk-tuch", Last4: "wxyz", Hash: strings.Repeat(id[:8], 8), Scopes: "research"}))

		lookup := func() store.KeyWithAccount {
			found, err := s.APIKeysByPrefix(ctx, "rsk-tuch")
			require.NoError(t, err)
			require.Len(t, found, 1)
			return found[0]
		}
		k := lookup()
		require.Equal(t, id, k.ID)
		require.Equal(t, a.ID, k.Account.ID)
		require.Equal(t, "touch@example.com", k.Account.Email)
		require.Equal(t, store.TierPro, k.Account.Tier)
		require.True(t, k.Account.IsAdmin)
		require.Nil(t, k.LastUsedAt)

		first := time.Now().UTC().Truncate(time.Microsecond)
		require.NoError(t, s.TouchAPIKey(ctx, k.APIKey, first))
		k = lookup()
		require.NotNil(t, k.LastUsedAt)
		require.True(t, first.Equal(*k.LastUsedAt))

		require.NoError(t, s.TouchAPIKey(ctx, k.APIKey, first.Add(30*time.Second)))
		require.True(t, first.Equal(*lookup().LastUsedAt), "used within the minute: not written again")

		later := first.Add(2 * time.Minute)
		require.NoError(t, s.TouchAPIKey(ctx, k.APIKey, later))
		require.True(t, later.Equal(*lookup().LastUsedAt))
	})
}

// The job queue joins a store transaction through the *sql.Tx under it (jobs.sqlTx, for River's
// InsertTx): every transaction must expose one, also where the SQLite statement cache wraps it.
func TestTransactionsExposeTheSQLTx(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, ok := s.SQLTx()
		require.False(t, ok, "outside a transaction")
		require.NoError(t, s.InTx(ctx, func(tx *store.Store) error {
			_, ok := tx.SQLTx()
			require.True(t, ok)
			// A nested InTx runs on a savepoint of the same transaction.
			return tx.InTx(ctx, func(inner *store.Store) error {
				_, ok := inner.SQLTx()
				require.True(t, ok)
				return nil
			})
		}))
	})
}
