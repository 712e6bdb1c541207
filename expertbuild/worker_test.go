package expertbuild

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestWorker(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, d)
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			skills, err := skill.New(st, clock)
			require.NoError(t, err)
			experts, err := expert.New(st, expert.Options{Skills: skills, Now: clock})
			require.NoError(t, err)
			q, err := queue.New(st, queue.Config{PollInterval: time.Second, MaxAttempts: 1, RescueAfter: time.Minute})
			require.NoError(t, err)
			svc, err := New(Deps{Store: st, Experts: experts, Skills: skills, Queue: q, Now: clock}, DefaultConfig())
			require.NoError(t, err)
			acct, _, err := st.EnsureAccount(ctx, "builder@example.com", store.TierPro, false)
			require.NoError(t, err)
			w := &buildWorker{svc: svc}
			job := func(id string, attempt int) *river.Job[buildArgs] {
				return &river.Job[buildArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3}, Args: buildArgs{BuildID: id}}
			}
			insert := func(request string, created time.Time) string {
				row := store.ExpertBuild{ID: uuid.NewString(), AccountID: acct.ID, Status: Queued, Request: request, CreatedAt: created}
				require.NoError(t, st.CreateExpertBuild(ctx, &row))
				return row.ID
			}

			// A broken attempt is retried (error, still running) until the last, which fails the build.
			broken := insert("{not json", now)
			require.Error(t, w.Work(ctx, job(broken, 1)))
			row, err := st.ExpertBuildByID(ctx, broken)
			require.NoError(t, err)
			require.Equal(t, Running, row.Status)
			require.NoError(t, w.Work(ctx, job(broken, 3)))
			row, err = st.ExpertBuildByID(ctx, broken)
			require.NoError(t, err)
			require.Equal(t, Failed, row.Status)
			require.Equal(t, CodeBuildFailed, *row.ErrorCode)
			require.NotNil(t, row.FinishedAt)

			// An attempt that died after saving its draft: the retry finds the same draft.
			ok := insert(`{"domain_description":"Policy briefs on EU energy subsidies: costs, beneficiaries and alternatives."}`, now)
			b, err := st.ExpertBuildByID(ctx, ok)
			require.NoError(t, err)
			first, err := svc.draft(ctx, b)
			require.NoError(t, err)
			require.NoError(t, w.Work(ctx, job(ok, 2)))
			row, err = st.ExpertBuildByID(ctx, ok)
			require.NoError(t, err)
			require.Equal(t, Succeeded, row.Status)
			require.Equal(t, first.ID, *row.ExpertID)
			require.Equal(t, store.ExpertBuilding, first.Status)

			// The sweep fails builds that outlived the deadline and leaves young ones alone.
			lost := insert(`{"domain_description":"lost"}`, now.Add(-time.Hour))
			young := insert(`{"domain_description":"young"}`, now)
			require.NoError(t, (&sweepWorker{svc: svc}).Work(ctx, nil))
			row, err = st.ExpertBuildByID(ctx, lost)
			require.NoError(t, err)
			require.Equal(t, Failed, row.Status)
			row, err = st.ExpertBuildByID(ctx, young)
			require.NoError(t, err)
			require.Equal(t, Queued, row.Status)
		})
	}
}
