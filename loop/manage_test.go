package loop_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/store/storetest"
)

// TestCreateReplaysAfterReaper: an Idempotency-Key's record is kept by the time of the request,
// not by the loop's clock, so the job reaper (on the wall clock) does not expire it at once when
// the loop's clock is behind (a fake clock in tests, a clock driven by hand in a deployment).
func TestCreateReplaysAfterReaper(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t, d, monday) // the loop's clock is long before the wall clock
			in := loop.CreateInput{AccountID: b.account, Name: "watch", Schedule: daily(8, 0),
				Config:         loop.Config{Questions: []string{"What is new at Initech?"}},
				IdempotencyKey: "k1", RequestHash: strings.Repeat("a", 64)}
			first, replayed, err := b.svc.Create(ctx, in)
			require.NoError(t, err)
			require.False(t, replayed)

			_, err = b.st.DeleteExpiredIdempotencyKeys(ctx, time.Now().UTC())
			require.NoError(t, err)

			again, replayed, err := b.svc.Create(ctx, in)
			require.NoError(t, err)
			require.True(t, replayed, "the reaper kept the record of a request made just now")
			require.Equal(t, first.ID, again.ID)
		})
	}
}
