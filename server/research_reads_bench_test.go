package server_test

import (
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// BenchmarkResearchReads measures the reads of a completed job that has several revisions and
// nested files: the detail (latest report, and the report at an older revision), the file list
// (latest and at a revision) and two downloads. Each request is authenticated with an API key.
//
//	[TEST_DATABASE_URL=postgres://...] go test ./server/ -run '^$' -bench ResearchReads -benchtime 200x -benchmem
func BenchmarkResearchReads(b *testing.B) {
	for _, d := range storetest.Dialects() {
		b.Run(string(d), func(b *testing.B) {
			e := newResearchEnv(b, d)
			acct := e.NewAccount(b, store.TierPro, false, 100)
			j := e.mustCreate(b, acct.Key, map[string]any{"question": "What drove the 2024 rise in EU electricity prices? [files]", "effort": "medium"})
			done := e.await(b, acct.Key, j.Slug, isTerminal)
			if len(done.Revisions) < 2 {
				b.Fatalf("want several revisions, got %d", len(done.Revisions))
			}
			first := done.Revisions[0].CommitSha
			// Idle workers poll the queue; on SQLite they share the one connection with the reads.
			stopWorkers(e.Services)
			base := e.URL + "/api/v2/research/" + j.JobId.String()
			for _, c := range []struct{ name, url string }{
				{"detail", base},
				{"detail_at_revision", base + "?revision=" + first},
				{"files", base + "/files"},
				{"files_at_revision", base + "/files?revision=" + first},
				{"file_report", base + "/files/report.md"},
				{"file_nested", base + "/files/files/charts/q1.png"},
			} {
				b.Run(c.name, func(b *testing.B) {
					req, err := http.NewRequest(http.MethodGet, c.url, nil)
					if err != nil {
						b.Fatal(err)
					}
					req.Header.Set("Authorization", "Bearer "+acct.Key)
					cpu := cpuTime(b)
					for b.Loop() {
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Fatalf("%s: status %d", c.url, resp.StatusCode)
						}
					}
					// CPU time of this process (client, server, SQLite, git) per request: on a shared,
					// loaded machine it varies far less than wall time.
					b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// cpuTime is the user and system CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
