package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// A snapshot's statements all see one state: a commit made while it reads is not half seen.
func TestSnapshotReadsOneState(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("snap")+"@example.com", "", false)
		require.NoError(t, err)
		j := newJob(t, s, a.ID, storetest.Name("snap-job"))
		public := true
		err = s.Snapshot(ctx, func(tx *store.Store) error {
			before, err := tx.ResearchJobByID(ctx, j.ID)
			require.NoError(t, err)
			if s.Dialect() == store.Postgres {
				// Another connection commits a change between the snapshot's two reads. (SQLite has
				// one writer connection, which the snapshot holds: a write would wait for it.)
				require.NoError(t, s.ChangeJobSettings(ctx, j.ID, store.JobSettings{IsPublic: &public}))
			}
			after, err := tx.ResearchJobByID(ctx, j.ID)
			require.NoError(t, err)
			require.Equal(t, before.IsPublic, after.IsPublic, "the second read sees the snapshot's state")
			return nil
		})
		require.NoError(t, err)
		if s.Dialect() == store.Postgres {
			now, err := s.ResearchJobByID(ctx, j.ID)
			require.NoError(t, err)
			require.True(t, now.IsPublic, "the change was committed")
		}
	})
}
