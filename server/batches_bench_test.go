package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// BenchmarkBatchFirstRow measures create-to-first-row-in_progress: POST /batches returns, then
// the first row's research job is in_progress (dispatch job → row job → background worker), on
// the production poll interval (50 ms).
//
//	go test ./server/ -run '^$' -bench BenchmarkBatch -benchtime 10x
//
// (on Postgres when TEST_DATABASE_URL is set, else SQLite).
func BenchmarkBatchFirstRow(b *testing.B) {
	e := newBatchEnv(b, benchDialect(), func(c *jobs.Config) { c.PollInterval = jobs.DefaultConfig().PollInterval })
	acct := e.NewAccount(b, store.TierPro, false, 0)
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		d := e.createBatch(b, acct.Key, map[string]any{"batch_name": "bench", "questions": []string{"[gate] What is a heat pump?"}, "effort": "low"})
		for !firstRowInProgress(b, e.Store, d.BatchId.String()) {
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
		e.releaseRuns(1)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-row")
}

// BenchmarkBatch100Rows measures the wall time of a 100-row batch at low effort on the offline
// engine (max_concurrent 20, 20 background workers), from POST to PROCESSED_SUCCESSFULLY.
func BenchmarkBatch100Rows(b *testing.B) {
	e := newBatchEnv(b, benchDialect(), func(c *jobs.Config) {
		c.PollInterval = jobs.DefaultConfig().PollInterval
		c.BackgroundWorkers = 20
	})
	acct := e.NewAccount(b, store.TierPro, false, 0)
	b.ResetTimer()
	for range b.N {
		d := e.createBatch(b, acct.Key, map[string]any{"batch_name": "bench100", "questions": questions(100, "What is the efficiency of heat pump model %d?"),
			"effort": "low", "max_concurrent": 20})
		for {
			bt, err := e.Store.BatchByID(context.Background(), d.BatchId.String())
			if err != nil {
				b.Fatal(err)
			}
			if bt.Status == batch.ProcessedSuccessfully {
				break
			}
			if bt.Status != batch.Pending && bt.Status != batch.Processing {
				rows, _ := e.Store.BatchRows(context.Background(), bt.ID, ptr(batch.RowFailed))
				for _, r := range rows {
					if r.JobID != nil {
						j, _ := e.Store.ResearchJobByID(context.Background(), *r.JobID)
						b.Logf("row %d: %v %v %v", r.RowNumber, *r.ErrorCode, deref(j.ErrorCode), deref(j.ErrorMessage))
					}
				}
				b.Fatalf("batch ended %s with %d failed rows", bt.Status, len(rows))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// benchDialect is Postgres when TEST_DATABASE_URL is set, else SQLite.
func benchDialect() store.Dialect {
	d := storetest.Dialects()
	return d[len(d)-1]
}

func firstRowInProgress(b *testing.B, st *store.Store, batchID string) bool {
	r, err := st.BatchRowAt(context.Background(), batchID, 1)
	if err != nil {
		b.Fatal(err)
	}
	if r.JobID == nil {
		return false
	}
	j, err := st.ResearchJobByID(context.Background(), *r.JobID)
	if err != nil {
		b.Fatal(err)
	}
	return j.Status == jobs.InProgress
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
