package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/queue"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

type pingArgs struct{ N int }

func (pingArgs) Kind() string { return "queue_test_ping" }

type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	seen chan int
}

func (w *pingWorker) Work(_ context.Context, j *river.Job[pingArgs]) error {
	w.seen <- j.Args.N
	return nil
}

// An entry exists if and only if the transaction that enqueued it commits, and a committed one is
// worked; work cannot be registered once the queue runs.
func TestEnqueueTxAndWork(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, d)
			q, err := queue.New(st, queue.Config{PollInterval: 20 * time.Millisecond, MaxAttempts: 1, RescueAfter: time.Minute, TestOnly: true})
			require.NoError(t, err)
			w := &pingWorker{seen: make(chan int, 4)}
			name := "queue_test_" + storetest.Name("q")
			require.NoError(t, q.AddQueue(name, 1))
			require.NoError(t, queue.AddWorker(q, w))

			var rolledBack int64
			errAbort := errors.New("abort")
			err = st.InTx(ctx, func(tx *store.Store) error {
				res, err := q.EnqueueTx(ctx, tx, pingArgs{N: 1}, &river.InsertOpts{Queue: name})
				require.NoError(t, err)
				rolledBack = res.Job.ID
				return errAbort
			})
			require.ErrorIs(t, err, errAbort)
			rows, err := q.Jobs(ctx, rolledBack)
			require.NoError(t, err)
			require.Empty(t, rows, "a rolled-back enqueue leaves no entry")

			var committed int64
			require.NoError(t, st.InTx(ctx, func(tx *store.Store) error {
				res, err := q.EnqueueTx(ctx, tx, pingArgs{N: 2}, &river.InsertOpts{Queue: name})
				if err == nil {
					committed = res.Job.ID
				}
				return err
			}))
			rows, err = q.Jobs(ctx, committed)
			require.NoError(t, err)
			require.Len(t, rows, 1)

			require.NoError(t, q.Start(ctx))
			t.Cleanup(func() { _ = q.Stop(context.Background()) })
			select {
			case n := <-w.seen:
				require.Equal(t, 2, n, "only the committed entry is worked")
			case <-time.After(30 * time.Second):
				t.Fatal("the committed entry was never worked")
			}
			require.Error(t, q.AddQueue("late", 1), "registering after Start fails")
		})
	}
}
