package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func newMessage(t *testing.T, s *store.Store, j store.ResearchJob, key *string) store.WebhookMessage {
	t.Helper()
	m := store.WebhookMessage{ID: uuid.NewString(), JobID: j.ID, AccountID: j.AccountID, RunID: uuid.NewString(), Event: "research.completed",
		URL: "https://hooks.example.com/x", Body: `{"event":"research.completed"}`, APIVersion: store.APIv2, KeySealed: key, Round: 1, State: store.WebhookPending}
	require.NoError(t, s.CreateWebhookMessage(context.Background(), &m))
	return m
}

// TestWebhookRounds: a round ends once (deleting its key); concurrent redeliveries start exactly one
// new round; a round cannot start while one is under way; one message per run and event.
func TestWebhookRounds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("hooks")+"@example.com", "", false)
		require.NoError(t, err)
		j := newJob(t, s, a.ID, storetest.Name("hook-job"))
		m := newMessage(t, s, j, ptr("sealed-key"))
		dup := m
		dup.ID = uuid.NewString()
		require.ErrorIs(t, s.CreateWebhookMessage(ctx, &dup), store.ErrConflict)

		_, err = s.StartWebhookRound(ctx, m.ID, nil)
		require.ErrorIs(t, err, store.ErrConflict, "round 1 is under way")
		ok, err := s.FinishWebhookRound(ctx, m.ID, 1, store.WebhookDelivered)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.FinishWebhookRound(ctx, m.ID, 1, store.WebhookFailed)
		require.NoError(t, err)
		require.False(t, ok, "a round ends once")
		got, err := s.WebhookMessageByID(ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, store.WebhookDelivered, got.State)
		require.Nil(t, got.KeySealed)

		var wg sync.WaitGroup
		rounds := make([]int, 8)
		errs := make([]error, 8)
		for i := range rounds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.InTx(ctx, func(tx *store.Store) error {
					var err error
					rounds[i], err = tx.StartWebhookRound(ctx, m.ID, ptr("another key"))
					return err
				})
			}()
		}
		wg.Wait()
		started := 0
		for i, err := range errs {
			if err == nil {
				started++
				require.Equal(t, 2, rounds[i])
			} else {
				require.ErrorIs(t, err, store.ErrConflict)
			}
		}
		require.Equal(t, 1, started)
		got, err = s.LatestWebhookMessage(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, 2, got.Round)
		require.Equal(t, "another key", *got.KeySealed)
	})
}

// TestForgetWebhookKeys: the reaper's sweep fails rounds pending for too long and deletes keys of
// finished jobs, and leaves recent ones alone.
func TestForgetWebhookKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("sweep")+"@example.com", "", false)
		require.NoError(t, err)
		finished := newJob(t, s, a.ID, storetest.Name("finished"))
		running := newJob(t, s, a.ID, storetest.Name("running"))
		for _, j := range []store.ResearchJob{finished, running} {
			_, err := s.UpdateResearchJob(ctx, j.ID, nil, map[string]any{"webhook_key_sealed": "k"})
			require.NoError(t, err)
		}
		_, err = s.UpdateResearchJob(ctx, finished.ID, nil, map[string]any{"status": jobCompleted})
		require.NoError(t, err)
		m := newMessage(t, s, finished, ptr("k"))

		n, err := s.ForgetWebhookKeys(ctx, jobStatuses, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "nothing is old enough")
		n, err = s.ForgetWebhookKeys(ctx, jobStatuses, time.Now().Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(2), n)

		got, err := s.WebhookMessageByID(ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, store.WebhookFailed, got.State)
		require.Nil(t, got.KeySealed)
		j, err := s.ResearchJobByID(ctx, finished.ID)
		require.NoError(t, err)
		require.Nil(t, j.WebhookKeySealed)
		j, err = s.ResearchJobByID(ctx, running.ID)
		require.NoError(t, err)
		require.NotNil(t, j.WebhookKeySealed, "an active job's run may still end with a webhook")
	})
}

func ptr[T any](v T) *T { return &v }
