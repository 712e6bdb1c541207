package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestClaimCampaignRecords: a claim takes the lowest pending positions of its stage only, skipping
// settled and running ones wherever they sit, and the last claim takes what is left.
func TestClaimCampaignRecords(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		id := uuid.NewString()
		// Positions 1-12 of stage "a"; 2, 3 and 7 are settled, 5 is running (a retry left gaps).
		status := map[int]string{2: recordStatuses.RecordDone, 3: recordStatuses.RecordFailed, 7: recordStatuses.RecordDone, 5: recordStatuses.RecordRunning}
		var rows []store.CampaignRecord
		for seq := 1; seq <= 12; seq++ {
			st := status[seq]
			if st == "" {
				st = recordStatuses.RecordPending
			}
			rows = append(rows, store.CampaignRecord{CampaignID: id, StageKey: "a", Seq: seq, EntityKey: "k", Status: st, Given: "{}", UpdatedAt: now},
				store.CampaignRecord{CampaignID: id, StageKey: "b", Seq: seq, EntityKey: "k", Status: recordStatuses.RecordPending, Given: "{}", UpdatedAt: now})
		}
		require.NoError(t, s.InsertCampaignRecords(ctx, rows))
		for _, tc := range []struct {
			chunk string
			limit int
			want  []int
		}{
			{"c0", 0, nil}, // a limit below one claims nothing
			{"c1", 3, []int{1, 4, 6}},
			{"c2", 1, []int{8}},
			{"c3", 10, []int{9, 10, 11, 12}},
			{"c4", 5, nil},
		} {
			n, err := s.ClaimCampaignRecords(ctx, recordStatuses, id, "a", tc.chunk, tc.limit, now)
			require.NoError(t, err)
			require.Equal(t, len(tc.want), n, tc.chunk)
			got, err := s.ChunkRecords(ctx, recordStatuses, tc.chunk)
			require.NoError(t, err)
			var seqs []int
			for _, r := range got {
				require.Equal(t, "a", r.StageKey)
				require.Equal(t, 1, r.Attempts)
				seqs = append(seqs, r.Seq)
			}
			require.Equal(t, tc.want, seqs, tc.chunk)
		}
		other, err := s.CampaignRecordsAfter(ctx, id, "b", 0, 100, true)
		require.NoError(t, err)
		for _, r := range other {
			require.Equal(t, recordStatuses.RecordPending, r.Status, "another stage's records are not claimed")
		}
	})
}
