package server_test

import (
	"encoding/csv"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestCampaignScaleWindowed: a one-stage campaign of 2,000 records (RESEARCH_BENCH_RECORDS
// overrides; cmd/researchd's TestBenchCampaignScale runs 100,000 against the real binary) runs
// with the production chunk size: the queue holds one entry per chunk, never one per record, and
// never more than the stage's concurrency of chunks at once (the window); every record is
// answered, charged once, and the CSV streams one row per record in record order.
func TestCampaignScaleWindowed(t *testing.T) {
	t.Parallel()
	n := 2000
	if v := os.Getenv("RESEARCH_BENCH_RECORDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	const concurrency = 3
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			chunk := campaign.DefaultConfig().ChunkSize
			e := newCampaignEnv(t, d, func(c *campaign.Config) { c.ChunkSize, c.SweepInterval = chunk, time.Minute })
			acct := e.NewAccount(t, store.TierPro, false, int64(n))
			start := time.Now()
			c := e.create(t, acct.Key, map[string]any{
				"name": "Headcount", "instruction": "How many people does the company employ?", "concurrency": concurrency,
				"records": records(n, "Company %d"), "start": true,
				"output_schema": map[string]any{"type": "object", "properties": map[string]any{"employees": map[string]any{"type": "integer"}}},
			})
			created := time.Since(start)
			id := c.CampaignId.String()
			most := 0
			done := e.await(t, acct.Key, id, func(d gen.CampaignDetail) bool {
				st, err := e.Store.CampaignStages(t.Context(), id)
				require.NoError(t, err)
				most = max(most, st[0].ChunksRunning)
				return d.Status == gen.CampaignStatusCompleted || d.Status == gen.CampaignStatusNeedsAttention
			})
			require.Equal(t, gen.CampaignStatusCompleted, done.Status, "%+v", done.Attention)
			require.Equal(t, n, done.Stages[0].RecordsDone)
			require.Equal(t, n, done.CreditsSpent, "one credit per record at medium")
			require.LessOrEqual(t, most, concurrency, "never more chunks in flight than the stage's concurrency")

			var chunks int64
			require.NoError(t, e.Store.DB().Table("river_job").Where("kind = ?", "campaign_chunk").Count(&chunks).Error)
			require.EqualValues(t, (n+chunk-1)/chunk, chunks, "one queue entry per chunk of %d records", chunk)

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/campaigns/" + id + "/deliverables/results", Token: acct.Key})
			require.Equal(t, http.StatusOK, r.Status)
			rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"position", "company", "employees", "error_code"}, rows[0])
			require.Len(t, rows, n+1)
			for i, row := range rows[1:] {
				require.Equal(t, []string{strconv.Itoa(i + 1), "Company " + strconv.Itoa(i+1)}, row[:2])
			}
			t.Logf("%s: %d records, create %s, create → completed %s", d, n, created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		})
	}
}
