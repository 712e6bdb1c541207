package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// followJob makes a running job to follow, with no events yet.
func followJob(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := context.Background()
	acct, _, err := st.EnsureAccount(ctx, storetest.Name("follow")+"@example.com", store.TierPro, false)
	require.NoError(t, err)
	now := time.Now().UTC()
	j := &store.ResearchJob{ID: uuid.NewString(), AccountID: acct.ID, Slug: storetest.Name("follow"), Status: InProgress,
		Question: "Followed?", Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}", APIVersion: "v2",
		CreatedAt: now, UpdatedAt: now}
	require.NoError(t, st.CreateResearchJob(ctx, j))
	return j.ID
}

// writeTimeline appends n events in batches of random size, then completes the job with a last
// status event, the way a run ends.
func writeTimeline(t *testing.T, st *store.Store, jobID string, n int) {
	t.Helper()
	ctx := context.Background()
	for written := 0; written < n; {
		k := min(n-written, 1+rand.IntN(40))
		batch := make([]*store.ResearchEvent, k)
		for i := range batch {
			batch[i] = &store.ResearchEvent{Kind: "text", Title: fmt.Sprintf("event %d", written+i+1), CreatedAt: time.Now().UTC()}
		}
		require.NoError(t, st.AppendEvents(ctx, jobID, batch))
		written += k
		if rand.IntN(4) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.UpdateResearchJob(ctx, jobID, nil, map[string]any{"status": Completed}); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &store.ResearchEvent{JobID: jobID, Kind: "status", Title: Completed, CreatedAt: time.Now().UTC()})
	}))
}

// collect follows a job from after and returns the seqs handed over, checking that the last step
// is Final on a completed job.
func collect(ctx context.Context, f *Follower, jobID string, after int64, slow bool) ([]int64, error) {
	var seqs []int64
	final := false
	err := f.Follow(ctx, jobID, after, 0, func(p Progress) error {
		for _, e := range p.Events {
			seqs = append(seqs, e.Seq)
		}
		if slow {
			time.Sleep(2 * time.Millisecond)
		}
		final = p.Final
		if p.Final && p.Job.Status != Completed {
			return fmt.Errorf("final step on status %s", p.Job.Status)
		}
		return nil
	})
	if err == nil && !final {
		err = fmt.Errorf("the follow ended without a final step: %w", ctx.Err())
	}
	return seqs, err
}

func requireEveryEvent(t *testing.T, seqs []int64, after int64, last int64, who string) {
	t.Helper()
	require.Len(t, seqs, int(last-after), who)
	for i, s := range seqs {
		require.Equal(t, after+int64(i)+1, s, "%s: event %d", who, i)
	}
}

// Followers of one job share its feed: each gets every event once, in order, from where it asked,
// whether it keeps up or falls behind what the feed keeps in memory (more than feedKeep events),
// and the final step as soon as the job completes (woken by the writes alone).
func TestFollowHandsEveryEventInOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f := NewFollower(st, slog.New(slog.NewTextHandler(io.Discard, nil)))
		f.safety = time.Hour // a wake-up lost is a failure, not a 30 s wait
		jobID := followJob(t, st)
		const n = feedKeep + 500
		starts := []int64{0, 0, 0, 5, 5000}
		var wg sync.WaitGroup
		results := make([][]int64, len(starts))
		errs := make([]error, len(starts))
		for i, after := range starts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = collect(ctx, f, jobID, after, i == 1)
			}()
		}
		writeTimeline(t, st, jobID, n)
		// A follower that arrives after the end replays everything from the database.
		late, err := collect(ctx, f, jobID, 0, false)
		require.NoError(t, err)
		requireEveryEvent(t, late, 0, n+1, "late")
		wg.Wait()
		for i, after := range starts {
			require.NoError(t, errs[i], "follower %d", i)
			if after > n+1 {
				require.Empty(t, results[i])
				continue
			}
			requireEveryEvent(t, results[i], after, n+1, fmt.Sprintf("follower %d", i))
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		require.Empty(t, f.feeds, "the last follower out stops the feed")
		require.Nil(t, f.stopListen, "and the listener")
	})
}

// A follower in one process hears the events another process appends (Postgres: LISTEN/NOTIFY),
// without waiting for its safety re-read, which is put out of reach here.
func TestFollowHearsOtherProcesses(t *testing.T) {
	t.Parallel()
	if !slices.Contains(storetest.Dialects(), store.Postgres) {
		t.Skip("Postgres only (set TEST_DATABASE_URL): SQLite is one process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := storetest.URL(t, store.Postgres)
	writer, reader := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
	f := NewFollower(reader, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.safety = time.Hour
	jobID := followJob(t, writer)
	done := make(chan struct{})
	var seqs []int64
	var err error
	go func() {
		defer close(done)
		seqs, err = collect(ctx, f, jobID, 0, false)
	}()
	// Wait until the reader's LISTEN is in place: what committed before it is read at that moment
	// anyway, but this test is about what is heard.
	require.Eventually(t, func() bool { return f.listening.Load() != 0 }, 10*time.Second, 5*time.Millisecond)
	for i := 0; i < 3; i++ {
		require.NoError(t, writer.AppendEvents(ctx, jobID, []*store.ResearchEvent{{Kind: "text", Title: "one", CreatedAt: time.Now().UTC()}}))
		time.Sleep(20 * time.Millisecond)
	}
	writeTimeline(t, writer, jobID, 50)
	<-done
	require.NoError(t, err)
	requireEveryEvent(t, seqs, 0, 54, "reader")
}
