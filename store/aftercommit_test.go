package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestAfterCommit: what AfterCommit defers runs once the outermost transaction commits, in order,
// never when it rolls back (a savepoint's callbacks wait for the outer commit); outside a
// transaction it runs at once.
func TestAfterCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		boom := errors.New("boom")
		tests := []struct {
			name string
			run  func(ran *[]string) error
			want []string
		}{
			{"no transaction", func(ran *[]string) error {
				s.AfterCommit(func() { *ran = append(*ran, "now") })
				return nil
			}, []string{"now"}},
			{"commit", func(ran *[]string) error {
				return s.InTx(ctx, func(tx *store.Store) error {
					tx.AfterCommit(func() { *ran = append(*ran, "a") })
					tx.AfterCommit(func() { *ran = append(*ran, "b") })
					require.Empty(t, *ran, "not before the commit")
					return nil
				})
			}, []string{"a", "b"}},
			{"rollback", func(ran *[]string) error {
				return s.InTx(ctx, func(tx *store.Store) error {
					tx.AfterCommit(func() { *ran = append(*ran, "a") })
					return boom
				})
			}, nil},
			{"savepoint waits for the outer commit", func(ran *[]string) error {
				return s.InTx(ctx, func(tx *store.Store) error {
					require.NoError(t, tx.InTx(ctx, func(inner *store.Store) error {
						inner.AfterCommit(func() { *ran = append(*ran, "inner") })
						return nil
					}))
					require.Empty(t, *ran)
					tx.AfterCommit(func() { *ran = append(*ran, "outer") })
					return nil
				})
			}, []string{"inner", "outer"}},
			{"savepoint rolls back, outer commits", func(ran *[]string) error {
				return s.InTx(ctx, func(tx *store.Store) error {
					require.ErrorIs(t, tx.InTx(ctx, func(inner *store.Store) error {
						inner.AfterCommit(func() { *ran = append(*ran, "inner") })
						return boom
					}), boom)
					tx.AfterCommit(func() { *ran = append(*ran, "outer") })
					return nil
				})
			}, []string{"outer"}},
			{"savepoint, outer rolls back", func(ran *[]string) error {
				return s.InTx(ctx, func(tx *store.Store) error {
					require.NoError(t, tx.InTx(ctx, func(inner *store.Store) error {
						inner.AfterCommit(func() { *ran = append(*ran, "inner") })
						return nil
					}))
					return boom
				})
			}, nil},
		}
		for _, tt := range tests {
			var ran []string
			err := tt.run(&ran)
			if tt.want == nil {
				require.ErrorIs(t, err, boom, tt.name)
			} else {
				require.NoError(t, err, tt.name)
			}
			require.Equal(t, tt.want, ran, tt.name)
		}
	})
}
