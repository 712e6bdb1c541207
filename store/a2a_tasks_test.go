package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestA2ATasks: versions move by one per update, a stale version or another account loses, a job
// without a row starts one from version 0, and the list filters by context.
func TestA2ATasks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("a2a")+"@example.com", "", false)
		require.NoError(t, err)
		b, _, err := s.EnsureAccount(ctx, storetest.Name("a2a-other")+"@example.com", "", false)
		require.NoError(t, err)
		j := newJob(t, s, a.ID, storetest.Name("a2a-job"))
		rest := newJob(t, s, a.ID, storetest.Name("a2a-rest"))

		row := store.A2ATask{TaskID: j.ID, AccountID: a.ID, ContextID: "ctx-1", Task: `{"v":1}`}
		require.NoError(t, s.CreateA2ATask(ctx, &row))
		require.EqualValues(t, 1, row.Version)
		dup := row
		require.ErrorIs(t, s.CreateA2ATask(ctx, &dup), store.ErrConflict)

		tests := []struct {
			name    string
			account string
			prev    int64
			want    int64
			err     error
		}{
			{"current version", a.ID, 1, 2, nil},
			{"stale version", a.ID, 1, 0, store.ErrConflict},
			{"another account", b.ID, 2, 0, store.ErrConflict},
			{"from version 0 with a row", a.ID, 0, 0, store.ErrConflict},
			{"next version", a.ID, 2, 3, nil},
		}
		for _, tc := range tests {
			v, err := s.UpdateA2ATask(ctx, store.A2ATask{TaskID: j.ID, AccountID: tc.account, ContextID: "ctx-1", Task: `{"v":2}`}, tc.prev)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err, tc.name)
				continue
			}
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.want, v, tc.name)
		}
		// A job created through REST has no row: its first update creates one at version 1.
		v, err := s.UpdateA2ATask(ctx, store.A2ATask{TaskID: rest.ID, AccountID: a.ID, ContextID: rest.ID, Task: `{}`}, 0)
		require.NoError(t, err)
		require.EqualValues(t, 1, v)

		rows, err := s.A2ATasks(ctx, []string{j.ID, rest.ID, "missing"})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		require.EqualValues(t, 3, rows[j.ID].Version)

		other := newJob(t, s, a.ID, storetest.Name("a2a-plain")) // no row: its own context
		for ctxID, want := range map[string][]string{"ctx-1": {j.ID}, rest.ID: {rest.ID}, other.ID: {other.ID}, "": {other.ID, rest.ID, j.ID}} {
			page, total, err := s.ListA2ATaskJobs(ctx, a.ID, store.A2ATaskFilter{ContextID: ctxID}, store.PageRequest{Limit: 10})
			require.NoError(t, err)
			require.EqualValues(t, len(want), total, ctxID)
			var got []string
			for _, j := range page.Items {
				got = append(got, j.ID)
			}
			require.ElementsMatch(t, want, got, ctxID)
		}
		page, total, err := s.ListA2ATaskJobs(ctx, b.ID, store.A2ATaskFilter{}, store.PageRequest{Limit: 10})
		require.NoError(t, err)
		require.Zero(t, total)
		require.Empty(t, page.Items)
	})
}
