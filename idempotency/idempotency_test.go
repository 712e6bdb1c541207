package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestCreate: without a key every call creates; with one, a retry answers the original, another
// body is ErrKeyReused, a create that fails keeps no record, and a request that loses the claim to
// a concurrent one answers the winner's resource.
func TestCreate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		created := 0
		// create makes a resource: an id claimed in a transaction. before runs first, outside it.
		create := func(before func()) func(context.Context, struct{}, idempotency.Claim) (string, error) {
			return func(ctx context.Context, _ struct{}, claim idempotency.Claim) (string, error) {
				if before != nil {
					before()
				}
				id := uuid.NewString()
				err := st.InTx(ctx, func(tx *store.Store) error { return claim(ctx, tx, id) })
				if err != nil {
					return "", err
				}
				created++
				return id, nil
			}
		}
		replay := func(_ context.Context, rec store.IdempotencyKey) (string, error) {
			require.Equal(t, 201, rec.StatusCode)
			return rec.JobID, nil
		}
		key := func(k, hash string) idempotency.Key {
			// Hashes are 64 hex digits (the column is char(64), blank-padded on Postgres).
			return idempotency.Key{AccountID: "acct", Scope: "test:", Key: k, RequestHash: strings.Repeat(hash, 64/len(hash)), StatusCode: 201, Now: now}
		}

		a, replayed, err := idempotency.Create(ctx, st, key("", "0"), struct{}{}, replay, create(nil))
		require.NoError(t, err)
		require.False(t, replayed)
		b, _, err := idempotency.Create(ctx, st, key("", "0"), struct{}{}, replay, create(nil))
		require.NoError(t, err)
		require.NotEqual(t, a, b, "without a key every call creates")

		first, replayed, err := idempotency.Create(ctx, st, key("k1", "1"), struct{}{}, replay, create(nil))
		require.NoError(t, err)
		require.False(t, replayed)
		again, replayed, err := idempotency.Create(ctx, st, key("k1", "1"), struct{}{}, replay, create(nil))
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, first, again)
		_, _, err = idempotency.Create(ctx, st, key("k1", "2"), struct{}{}, replay, create(nil))
		require.ErrorIs(t, err, idempotency.ErrKeyReused)
		require.Equal(t, 3, created, "a replay and a reused key create nothing")

		boom := errors.New("boom")
		_, _, err = idempotency.Create(ctx, st, key("k2", "3"), struct{}{}, replay, func(ctx context.Context, _ struct{}, claim idempotency.Claim) (string, error) {
			return "", st.InTx(ctx, func(tx *store.Store) error {
				if err := claim(ctx, tx, uuid.NewString()); err != nil {
					return err
				}
				return boom
			})
		})
		require.ErrorIs(t, err, boom)
		_, replayed, err = idempotency.Create(ctx, st, key("k2", "3"), struct{}{}, replay, create(nil))
		require.NoError(t, err)
		require.False(t, replayed, "a failed create keeps no record of its key")

		// Another request claims k3 after this one looked it up and before it claims it.
		winner := uuid.NewString()
		got, replayed, err := idempotency.Create(ctx, st, key("k3", "3"), struct{}{}, replay, create(func() {
			rec := store.IdempotencyKey{AccountID: "acct", IdemKey: "test:k3", RequestHash: strings.Repeat("3", 64), JobID: winner, StatusCode: 201}
			require.NoError(t, st.ClaimIdempotencyKey(ctx, &rec, now))
		}))
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, winner, got, "the loser answers the winner's resource")
		require.Equal(t, 4, created)
	})
}
