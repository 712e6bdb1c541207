package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestBenchCampaignScale is issue 10 point 5, run only with RESEARCH_BENCH=1: a one-stage campaign
// of 100,000 records (RESEARCH_BENCH_RECORDS overrides) on the offline engine, against a real
// `researchd serve` process: create it through the API, approve it by its digest, wait until it
// completes, and stream its CSV deliverable. It logs the wall time of each phase, the process's
// CPU time and its peak RSS (VmHWM), and the machine's load average. The 2,000-record version that
// runs with every `make test` is server's TestCampaignScaleWindowed.
func TestBenchCampaignScale(t *testing.T) {
	if os.Getenv("RESEARCH_BENCH") == "" {
		t.Skip("set RESEARCH_BENCH=1 to run the measurement behind BENCHMARKS.md")
	}
	n := 100_000
	if v := os.Getenv("RESEARCH_BENCH_RECORDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "RESEARCH_BENCH_RECORDS")
	}
	effort := os.Getenv("RESEARCH_BENCH_EFFORT")
	if effort == "" {
		effort = billing.EffortMedium // what a one-stage campaign runs at by default
	}
	bin := buildResearchd(t)
	corpus := benchCorpus(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			runCampaignBench(t, bin, d, corpus, n, effort)
		})
	}
}

func runCampaignBench(t *testing.T, bin string, d store.Dialect, corpus string, n int, effort string) {
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := storetest.URL(t, d)
	st, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	require.NoError(t, st.Migrate(ctx))
	acct, err := createAccount(ctx, st, "bench@example.com", store.TierPro, false, int64(n)+100, billing.DefaultConfig())
	require.NoError(t, err)
	_, key, err := accounts.New(st, accounts.Options{}).CreateKey(ctx, acct.ID, nil, []string{"campaigns"})
	require.NoError(t, err)
	// SQLite has one connection: the test's store must not hold it open beside the server's.
	require.NoError(t, st.Close())

	env := append(os.Environ(),
		"DATABASE_URL="+dbURL, "RESEARCH_DATA_DIR="+filepath.Join(dir, "data"), "RESEARCH_ADDR=127.0.0.1:0",
		"RESEARCH_CORPUS_DIR="+corpus, "RESEARCH_LOG_LEVEL=info", // info: startProcess waits for the "listening" line
		"RESEARCH_SEARCH_PROVIDER=none", // the corpus only: no network
	)
	logPath := filepath.Join(dir, "serve.log")
	t.Cleanup(func() {
		if t.Failed() { // say what the server complained about
			b, _ := os.ReadFile(logPath)
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
					t.Log(line)
				}
			}
		}
	})
	p := startProcess(t, bin, env, logPath)
	pid := p.cmd.Process.Pid
	c := &benchClient{t: t, base: "http://" + p.addr + "/api/v2", key: key}
	t.Logf("records %d, effort %s, %s; load at start: %s", n, effort, d, loadavg())

	body := campaignBody(n, effort)
	start := time.Now()
	var created struct {
		CampaignID   string `json:"campaign_id"`
		ReviewDigest string `json:"review_digest"`
		Records      struct {
			Accepted int `json:"accepted"`
		} `json:"records"`
	}
	c.do("POST", "/campaigns", body, http.StatusCreated, &created)
	createdIn := time.Since(start)
	require.Equal(t, n, created.Records.Accepted)
	hwmCreate := procStatus(t, pid, "VmHWM")

	c.do("POST", "/campaigns/"+created.CampaignID+"/approve", []byte(fmt.Sprintf(`{"review_digest":%q}`, created.ReviewDigest)), http.StatusOK, nil)
	approved := time.Now()
	var done struct {
		Status string `json:"status"`
		Stages []struct {
			RecordsTotal  int `json:"records_total"`
			RecordsDone   int `json:"records_done"`
			RecordsFailed int `json:"records_failed"`
		} `json:"stages"`
		Attention any `json:"attention"`
	}
	lastLog := time.Now()
	deadline := time.Now().Add(60 * time.Minute)
	for {
		c.do("GET", "/campaigns/"+created.CampaignID, nil, http.StatusOK, &done)
		if done.Status == "completed" || done.Status == "needs_attention" || done.Status == "cancelled" {
			break
		}
		if time.Since(lastLog) > 30*time.Second {
			t.Logf("%s: %d of %d records done, RSS %s kB, load %s", time.Since(approved).Round(time.Second),
				done.Stages[0].RecordsDone, done.Stages[0].RecordsTotal, procStatus(t, pid, "VmRSS"), loadavg())
			lastLog = time.Now()
		}
		require.True(t, time.Now().Before(deadline), "campaign still %s", done.Status)
		time.Sleep(500 * time.Millisecond)
	}
	ranIn := time.Since(approved)
	require.Equal(t, "completed", done.Status, "attention: %v", done.Attention)
	require.Equal(t, n, done.Stages[0].RecordsTotal)
	require.Equal(t, n, done.Stages[0].RecordsDone+done.Stages[0].RecordsFailed)
	hwmRun := procStatus(t, pid, "VmHWM")

	dl := time.Now()
	rows, answered, size := c.csvRows("/campaigns/" + created.CampaignID + "/deliverables/results")
	downloadedIn := time.Since(dl)
	require.Equal(t, n+1, rows, "a header and one row per record")
	total := time.Since(start)
	cpu := procCPU(t, pid)
	hwm := procStatus(t, pid, "VmHWM")
	t.Logf("%s, %d records (%d done, %d failed, %d with a researched value), effort %s: create %s, approve→completed %s (%.0f records/s), "+
		"CSV streamed (%d KB) in %s; total %s; server CPU %s; peak RSS (VmHWM) %s kB (after create %s, after run %s); load at end: %s",
		d, n, done.Stages[0].RecordsDone, done.Stages[0].RecordsFailed, answered, effort, createdIn.Round(time.Millisecond), ranIn.Round(time.Second),
		float64(n)/ranIn.Seconds(), size>>10, downloadedIn.Round(time.Millisecond),
		total.Round(time.Second), cpu.Round(time.Second), hwm, hwmCreate, hwmRun, loadavg())
	require.Less(t, done.Stages[0].RecordsFailed, n/100+1, "nearly every record answered")
}

// campaignBody is a one-stage campaign over n company records with a three-field output schema.
func campaignBody(n int, effort string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"name":"Vendor headcount","instruction":"How many people does the company employ, and does it publish a SOC 2 report?",`+
		`"effort":%q,"concurrency":20,"output_schema":{"type":"object","properties":{"employees":{"type":"integer"},"soc2":{"type":"boolean"},"summary":{"type":"string"}}},"records":[`, effort)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		name := companyName(i)
		fmt.Fprintf(&b, `{"company":%q,"domain":"%s.example"}`, name, strings.ToLower(name))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// companyName is a distinct one-word name for record i (unique below 20^4 = 160,000), so a
// record's question names one company that the corpus either describes or does not.
func companyName(i int) string {
	syl := []string{"zan", "vor", "ix", "bel", "tor", "quin", "mar", "sel", "dax", "lum", "per", "kor", "ven", "ril", "sta", "gam", "hol", "nex", "wyn", "cor"}
	n := syl[i%20] + syl[i/20%20] + syl[i/400%20] + syl[i/8000%20]
	return strings.ToUpper(n[:1]) + n[1:]
}

// benchCorpus is what the offline engine searches: 20 files of 100 sections, each about one
// company — every 50th record's (2,000 companies; with 100,000 records, 2 % are covered) — the
// size of the corpus of the offline throughput benchmark in jobs/.
func benchCorpus(t *testing.T) string {
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Vendor register, part %d\n\n", i+1)
		for j := 0; j < 100; j++ {
			k := (i*100 + j) * 50
			name := companyName(k)
			soc2 := "publishes a SOC 2 Type II report on its trust center"
			if k%3 == 0 {
				soc2 = "does not publish a SOC 2 report"
			}
			fmt.Fprintf(&sb, "## %s\n\nThe company %s employs %d people. %s %s. Its domain is %s.example; it sells heat pumps from %d sites.\n\n",
				name, name, 20+k%900, name, soc2, strings.ToLower(name), 1+k%7)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("vendors%02d.md", i)), []byte(sb.String()), 0o600))
	}
	return dir
}

type benchClient struct {
	t         *testing.T
	base, key string
}

func (c *benchClient) do(method, path string, body []byte, want int, out any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, want, res.StatusCode, string(b))
	if out != nil {
		require.NoError(c.t, json.Unmarshal(b, out))
	}
}

// csvRows streams a CSV download and counts its rows, the rows with any researched value, and its
// bytes, without keeping it.
func (c *benchClient) csvRows(path string) (rows, answered int, size int64) {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.base+path, nil)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	require.Equal(c.t, http.StatusOK, res.StatusCode)
	cnt := &byteCount{r: res.Body}
	r := csv.NewReader(cnt)
	r.ReuseRecord = true
	head, err := r.Read()
	require.NoError(c.t, err)
	require.Equal(c.t, []string{"position", "company", "domain", "employees", "soc2", "summary", "error_code"}, head)
	for rows = 1; ; rows++ {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, answered, cnt.n
		}
		require.NoError(c.t, err)
		if rec[3] != "" || rec[4] != "" || rec[5] != "" {
			answered++
		}
	}
}

type byteCount struct {
	r io.Reader
	n int64
}

func (b *byteCount) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// procStatus reads one field of /proc/PID/status (VmHWM, VmRSS: kB).
func procStatus(t *testing.T, pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	return "?"
}

// procCPU is the process's user + system CPU time so far (/proc/PID/stat, clock ticks of 10 ms).
func procCPU(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	sys, _ := strconv.Atoi(f[12])
	return time.Duration(ut+sys) * 10 * time.Millisecond
}

func loadavg() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(string(out))
	if i := strings.Index(s, "load average:"); i >= 0 {
		return strings.TrimSpace(s[i+len("load average:"):])
	}
	return s
}
