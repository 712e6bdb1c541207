package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func newJob(t *testing.T, s *store.Store, accountID, slug string) store.ResearchJob {
	t.Helper()
	j := store.ResearchJob{
		ID: uuid.NewString(), AccountID: accountID, Slug: slug, Status: jobQueued, Question: "q?",
		Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}",
	}
	require.NoError(t, s.CreateResearchJob(context.Background(), &j))
	return j
}

func TestResearchJobsStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("jobs")+"@example.com", "", false)
		require.NoError(t, err)

		j := newJob(t, s, a.ID, "first-job-abc123")
		// Slugs are unique; a duplicate is a conflict and leaves the caller's transaction usable.
		err = s.InTx(ctx, func(tx *store.Store) error {
			dup := store.ResearchJob{ID: uuid.NewString(), AccountID: a.ID, Slug: j.Slug, Status: jobQueued,
				Question: "q", Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}"}
			require.ErrorIs(t, tx.CreateResearchJob(ctx, &dup), store.ErrConflict)
			dup.Slug = "second-job-abc123"
			return tx.CreateResearchJob(ctx, &dup)
		})
		require.NoError(t, err)

		byID, err := s.ResearchJobByRef(ctx, j.ID)
		require.NoError(t, err)
		bySlug, err := s.ResearchJobByRef(ctx, j.Slug)
		require.NoError(t, err)
		require.Equal(t, byID.ID, bySlug.ID)
		_, err = s.ResearchJobByRef(ctx, "no-such-slug")
		require.ErrorIs(t, err, store.ErrNotFound)

		// Conditional transitions: only from the listed statuses.
		ok, err := s.UpdateResearchJob(ctx, j.ID, []string{jobCompleted}, map[string]any{"status": jobFailed})
		require.NoError(t, err)
		require.False(t, ok)
		ok, err = s.UpdateResearchJob(ctx, j.ID, activeJobs, map[string]any{"status": jobCancelled})
		require.NoError(t, err)
		require.True(t, ok)

		// Paging with a status filter.
		st := jobQueued
		page, err := s.ListResearchJobs(ctx, a.ID, &st, store.PageRequest{Limit: 10})
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		require.Equal(t, "second-job-abc123", page.Items[0].Slug)

		// Runs are created once per id.
		run := store.ResearchRun{ID: uuid.NewString(), JobID: j.ID, Kind: runInitial, Status: runRunning, Effort: "low", StartedAt: time.Now()}
		got, err := s.CreateRun(ctx, &run)
		require.NoError(t, err)
		again := run
		again.Status = runCompleted
		got2, err := s.CreateRun(ctx, &again)
		require.NoError(t, err)
		require.Equal(t, got.Status, got2.Status)
		require.Equal(t, runRunning, got2.Status)
	})
}

func TestEventSeqIsStrictlyIncreasingUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("events")+"@example.com", "", false)
		require.NoError(t, err)
		j := newJob(t, s, a.ID, storetest.Name("events-job"))
		var wg sync.WaitGroup
		for i := 0; i < 25; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				require.NoError(t, s.AppendEvent(ctx, &store.ResearchEvent{JobID: j.ID, Kind: "text", Title: "t"}))
			}()
		}
		wg.Wait()
		var seqs []int64
		req := store.PageRequest{Limit: 7}
		for {
			page, err := s.ListEvents(ctx, j.ID, req)
			require.NoError(t, err)
			for _, e := range page.Items {
				seqs = append(seqs, e.Seq)
			}
			if page.Next == nil {
				break
			}
			req.Cursor = page.Next
		}
		require.Len(t, seqs, 25)
		for i, seq := range seqs {
			require.EqualValues(t, 25-i, seq)
		}
		err = s.AppendEvent(ctx, &store.ResearchEvent{JobID: uuid.NewString(), Kind: "text"})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Now().UTC()
		k := store.IdempotencyKey{AccountID: "acct", IdemKey: "k1", RequestHash: "h", JobID: "j1", StatusCode: 202}
		require.NoError(t, s.ClaimIdempotencyKey(ctx, &k, now))
		dup := store.IdempotencyKey{AccountID: "acct", IdemKey: "k1", RequestHash: "h2", JobID: "j2", StatusCode: 202}
		require.True(t, errors.Is(s.ClaimIdempotencyKey(ctx, &dup, now), store.ErrConflict))
		got, err := s.IdempotencyKeyFor(ctx, "acct", "k1", now)
		require.NoError(t, err)
		require.Equal(t, "j1", got.JobID)
		// A day later the key is free again.
		later := now.Add(store.IdempotencyTTL + time.Minute)
		_, err = s.IdempotencyKeyFor(ctx, "acct", "k1", later)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NoError(t, s.ClaimIdempotencyKey(ctx, &dup, later))
	})
}

// TestResearchJobView: the view (one statement on Postgres) is what the plain queries read: the job
// by id or slug, its runs in start order and its revisions in ordinal order, times and nulls alike.
func TestResearchJobView(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _, err := s.EnsureAccount(ctx, storetest.Name("view")+"@example.com", "", false)
		require.NoError(t, err)
		bare := newJob(t, s, a.ID, "bare-job-abc123")
		j := newJob(t, s, a.ID, "viewed-job-abc123")
		start := time.Date(2026, 11, 24, 10, 0, 0, 123456000, time.UTC)
		done := start.Add(90 * time.Second)
		for i, r := range []store.ResearchRun{
			{ID: uuid.NewString(), Kind: runContinuation, Status: runRunning, Effort: "medium", StartedAt: start.Add(time.Hour)},
			{ID: uuid.NewString(), Kind: runInitial, Status: runCompleted, Effort: "low", CreditsCharged: 3, StartedAt: start, FinishedAt: &done},
		} {
			r.JobID = j.ID
			_, err := s.CreateRun(ctx, &r)
			require.NoError(t, err, i)
		}
		for i, ord := range []int64{2, 1} {
			require.NoError(t, s.AddRevision(ctx, &store.ResearchRevision{JobID: j.ID, SHA: fmt.Sprintf("%040d", ord), Ordinal: ord,
				RunID: "run", CheckpointType: "final", Message: fmt.Sprintf("checkpoint \"%d\"\n", i), CreatedAt: start.Add(time.Duration(ord) * time.Minute), FilesStored: ord == 2}))
		}
		for _, job := range []store.ResearchJob{j, bare} {
			for _, ref := range []string{job.ID, job.Slug} {
				v, err := s.ResearchJobView(ctx, ref)
				require.NoError(t, err)
				want, err := s.ResearchJobByRef(ctx, ref)
				require.NoError(t, err)
				runs, err := s.RunsForJob(ctx, job.ID)
				require.NoError(t, err)
				revs, err := s.RevisionsForJob(ctx, job.ID)
				require.NoError(t, err)
				require.Equal(t, want, v.Job)
				require.Equal(t, runs, v.Runs)
				require.Equal(t, revs, v.Revisions)
			}
		}
		v, err := s.ResearchJobView(ctx, j.ID)
		require.NoError(t, err)
		require.Len(t, v.Runs, 2)
		require.Equal(t, runInitial, v.Runs[0].Kind, "in start order")
		require.Len(t, v.Revisions, 2)
		require.EqualValues(t, 1, v.Revisions[0].Ordinal)
		for _, ref := range []string{uuid.NewString(), "no-such-slug"} {
			_, err = s.ResearchJobView(ctx, ref)
			require.ErrorIs(t, err, store.ErrNotFound)
		}
	})
}
