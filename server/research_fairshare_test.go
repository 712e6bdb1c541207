package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// One account's backlog of runs that never end does not keep another account's job from running:
// each account gets at most its share of the workers, and its jobs beyond the share queue behind
// other accounts' jobs.
func TestFairShareOfWorkers(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d, func(c *jobs.Config) {
				c.Workers, c.AccountShare, c.ShareRecheck = 2, 1, 20*time.Millisecond
			})
			heavy := e.NewAccount(t, store.TierFree, false, 0)
			light := e.NewAccount(t, store.TierFree, false, 0)
			var backlog []string
			for range 8 {
				j := e.mustCreate(t, heavy.Key, map[string]any{"question": "[block] Map every heat pump ever sold", "effort": "low"})
				backlog = append(backlog, j.JobId.String())
			}
			t.Cleanup(func() {
				for _, id := range backlog {
					e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + id + "/cancel", Token: heavy.Key})
				}
			})
			// Bounded poll until a worker holds one of them (which one is the queue's choice).
			require.Eventually(t, func() bool {
				n, err := e.Store.CountAccountJobs(context.Background(), heavy.ID, jobs.QueueResearch, 0, jobs.InProgress)
				return err == nil && n > 0
			}, 90*time.Second, 20*time.Millisecond)

			j := e.mustCreate(t, light.Key, map[string]any{"question": "Which refrigerants do heat pumps use?", "effort": "low"})
			done := e.await(t, light.Key, j.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status)

			running, err := e.Store.CountAccountJobs(context.Background(), heavy.ID, jobs.QueueResearch, 0, jobs.InProgress)
			require.NoError(t, err)
			require.EqualValues(t, 1, running, "the heavy account never holds more than its share")
			queued, err := e.Store.CountAccountJobs(context.Background(), heavy.ID, jobs.QueueResearch, 0, jobs.Queued)
			require.NoError(t, err)
			require.EqualValues(t, len(backlog)-1, queued)
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + backlog[len(backlog)-1], Token: heavy.Key})
			require.Equal(t, http.StatusOK, r.Status)
		})
	}
}
