package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestBenchEventStreams is the measurement behind BENCHMARKS.md's event-stream section: N event
// streams (RESEARCH_BENCH_STREAMS, default 1,000) held open on one running job while a writer
// appends a batch of 5 events every 200 ms (a run's event buffer flushes that often), for 10 s. It
// reports the reads the app sent per second through the store (the streams'; the job has no
// worker, so nothing else reads it; the queue's polls go around GORM and are not counted), and
// each event's delivery delay, from the moment the writer stamped it
// (just before its transaction) to the moment a stream's reader parsed it, over every stream.
//
//	RESEARCH_BENCH=1 [TEST_DATABASE_URL=postgres://...] go test ./server/ -run TestBenchEventStreams -count=1 -v
func TestBenchEventStreams(t *testing.T) {
	if os.Getenv("RESEARCH_BENCH") == "" {
		t.Skip("set RESEARCH_BENCH=1 to run the measurements behind BENCHMARKS.md")
	}
	n := 1000
	if v := os.Getenv("RESEARCH_BENCH_STREAMS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	const window, every, batch = 10 * time.Second, 200 * time.Millisecond, 5
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			e := newResearchEnvWith(t, d, func(cfg *servertest.Config) { cfg.MaxStreamsPerAccount = n },
				func(c *jobs.Config) { c.PollInterval = jobs.DefaultConfig().PollInterval })
			owner := e.NewAccount(t, store.TierPro, false, 100)
			now := time.Now().UTC()
			job := &store.ResearchJob{ID: uuid.NewString(), AccountID: owner.ID, Slug: "bench-streams", Status: jobs.InProgress,
				Question: "Held open", Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}", APIVersion: "v2",
				CreatedAt: now, UpdatedAt: now, StartedAt: &now}
			require.NoError(t, e.Store.CreateResearchJob(ctx, job))
			var reads atomic.Int64
			require.NoError(t, e.Store.CountQueries(&reads))

			var (
				mu     sync.Mutex
				delays []time.Duration
				wg     sync.WaitGroup
				opened sync.WaitGroup
				broken atomic.Int64
			)
			opened.Add(n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := readStream(e.URL, owner.Key, job.ID, opened.Done)
					if err != nil {
						broken.Add(1)
						t.Errorf("stream %d: %v", i, err)
						return
					}
					mu.Lock()
					delays = append(delays, got...)
					mu.Unlock()
				}()
			}
			opened.Wait()
			reads.Store(0)
			start := time.Now()
			written := 0
			for time.Since(start) < window {
				evs := make([]*store.ResearchEvent, batch)
				for i := range evs {
					evs[i] = &store.ResearchEvent{Kind: "thinking", Title: fmt.Sprintf("step %d", written+i+1), Content: "thinking", CreatedAt: time.Now().UTC()}
				}
				require.NoError(t, e.Store.AppendEvents(ctx, job.ID, evs))
				written += batch
				time.Sleep(every)
			}
			elapsed := time.Since(start)
			stmts := reads.Load()
			require.NoError(t, e.Store.InTx(ctx, func(tx *store.Store) error {
				if _, err := tx.UpdateResearchJob(ctx, job.ID, nil, map[string]any{"status": jobs.Completed, "completed_at": time.Now().UTC()}); err != nil {
					return err
				}
				return tx.AppendEvent(ctx, &store.ResearchEvent{JobID: job.ID, Kind: "status", Title: jobs.Completed, CreatedAt: time.Now().UTC()})
			}))
			wg.Wait()
			require.Zero(t, broken.Load())
			require.Len(t, delays, n*(written+1), "every stream got every event")
			slices.Sort(delays)
			at := func(q float64) time.Duration { return delays[min(len(delays)-1, int(q*float64(len(delays))))] }
			t.Logf("%s: %d streams on one running job, %d events in %s: %.1f reads/s through the store; delivery delay p50 %s, p99 %s, max %s",
				d, n, written, elapsed.Round(time.Millisecond), float64(stmts)/elapsed.Seconds(),
				at(0.5).Round(100*time.Microsecond), at(0.99).Round(100*time.Microsecond), delays[len(delays)-1].Round(100*time.Microsecond))
		})
	}
}

// readStream reads an event stream to its end and returns each timeline event's delay (now minus
// its created_at, in the order received); opened is called once the stream is open.
func readStream(base, key, jobID string, opened func()) ([]time.Duration, error) {
	req, err := http.NewRequest("GET", base+"/api/v2/research/"+jobID+"/events", nil)
	if err != nil {
		opened()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		opened()
		return nil, err
	}
	defer res.Body.Close()
	opened()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	var delays []time.Duration
	event, last := "", 0
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "timeline":
			var ev struct {
				Seq       int       `json:"seq"`
				CreatedAt time.Time `json:"created_at"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				return nil, err
			}
			if ev.Seq != last+1 {
				return nil, fmt.Errorf("event %d after %d", ev.Seq, last)
			}
			last = ev.Seq
			delays = append(delays, time.Since(ev.CreatedAt))
		case strings.HasPrefix(line, "data: ") && event == "end":
			return delays, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the stream ended without event: end after %d events", last)
}
