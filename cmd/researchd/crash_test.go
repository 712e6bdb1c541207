package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestKillNineWhileJobsRun is the durability check of issue 3: start `researchd serve` as a real
// process, create 50 jobs, kill -9 the process while they run, start it again, and wait: every job
// ends terminal and no run is charged twice (consumption entries counted per run id).
func TestKillNineWhileJobsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it; skipped with -short")
	}
	t.Parallel()
	bin := buildResearchd(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			dbURL := storetest.URL(t, d)
			st, err := store.Open(ctx, dbURL)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, st.Migrate(ctx))
			acct, err := createAccount(ctx, st, "crash@example.com", store.TierPro, false, 100, billing.DefaultConfig())
			require.NoError(t, err)
			_, key, err := accounts.New(st, accounts.Options{}).CreateKey(ctx, acct.ID, nil, []string{"research"})
			require.NoError(t, err)

			// A corpus makes each run read and rank real text, so the kill lands mid-run.
			corpus := filepath.Join(dir, "corpus")
			require.NoError(t, os.MkdirAll(corpus, 0o750))
			for i := 0; i < 20; i++ {
				var b strings.Builder
				for j := 0; j < 200; j++ {
					fmt.Fprintf(&b, "Document %d line %d: wholesale electricity prices, gas supply, interconnector congestion and carbon permits %d.\n", i, j, i*j)
				}
				require.NoError(t, os.WriteFile(filepath.Join(corpus, fmt.Sprintf("doc%02d.txt", i)), []byte(b.String()), 0o600))
			}
			env := append(os.Environ(),
				"DATABASE_URL="+dbURL, "RESEARCH_DATA_DIR="+filepath.Join(dir, "data"), "RESEARCH_ADDR=127.0.0.1:0",
				"RESEARCH_CORPUS_DIR="+corpus, "RESEARCH_WORKERS=4", "RESEARCH_POLL_INTERVAL=20ms",
				"RESEARCH_JOB_TIMEOUTS=low=20s,medium=20s,high=20s,build=20s", "RESEARCH_RESCUE_MARGIN=5s", "RESEARCH_LOG_LEVEL=info",
				"RESEARCH_SEARCH_PROVIDER=none", // the corpus only: no network
			)

			first := startProcess(t, bin, env, filepath.Join(dir, "first.log"))
			var ids []string
			for i := 0; i < 50; i++ {
				ids = append(ids, postJob(t, first.addr, key, fmt.Sprintf("Why did wholesale electricity prices move in scenario %d?", i)))
			}
			// Kill as soon as runs are under way.
			waitUntil(t, func() bool {
				n, err := st.CountJobsByStatus(ctx)
				require.NoError(t, err)
				return n[jobs.InProgress] > 0
			})
			require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
			_ = first.cmd.Wait()
			atKill, err := st.CountJobsByStatus(ctx)
			require.NoError(t, err)
			t.Logf("at kill -9: %v", atKill)
			require.Positive(t, atKill[jobs.InProgress], "the kill landed mid-run")

			second := startProcess(t, bin, env, filepath.Join(dir, "second.log"))
			waitUntil(t, func() bool {
				n, err := st.CountJobsByStatus(ctx)
				require.NoError(t, err)
				return n[jobs.Queued]+n[jobs.InProgress] == 0
			})
			final, err := st.CountJobsByStatus(ctx)
			require.NoError(t, err)
			t.Logf("after restart: %v", final)
			if final[jobs.Failed] > 0 {
				explainFailures(t, st, ids, dir)
			}
			require.EqualValues(t, 50, final[jobs.Completed]+final[jobs.Failed]+final[jobs.Cancelled]+final[jobs.Blocked])

			// No double charge: at most one consumption per run, one run per job, and each job charged
			// exactly its one medium run (1 credit = 10 cents).
			var perRun []struct {
				RunID string
				N     int64
			}
			require.NoError(t, st.DB().Model(&store.LedgerEntry{}).Select("run_id, COUNT(*) AS n").
				Where("type = ? AND account_id = ?", store.TxConsumption, acct.ID).Group("run_id").Scan(&perRun).Error)
			require.Len(t, perRun, 50)
			for _, r := range perRun {
				require.EqualValues(t, 1, r.N, "run %s charged %d times", r.RunID, r.N)
			}
			for _, id := range ids {
				runs, err := st.RunsForJob(ctx, id)
				require.NoError(t, err)
				require.Len(t, runs, 1, id)
			}
			balance, err := st.Balance(ctx, acct.ID)
			require.NoError(t, err)
			require.EqualValues(t, (100-50)*10, balance)

			// A clean stop: SIGTERM, workers drain, exit 0.
			require.NoError(t, second.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, second.cmd.Wait())
		})
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func buildResearchd(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "researchd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "researchd")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return builtBin
}

type process struct {
	cmd  *exec.Cmd
	addr string
}

// startProcess runs `researchd serve` and waits for its "listening" log line.
func startProcess(t *testing.T, bin string, env []string, logPath string) *process {
	t.Helper()
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = logf.Close() })
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	cmd.Stdout = logf
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if !sent && json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "researchd listening" {
				addrc <- rec.Addr
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case addr := <-addrc:
		return &process{cmd: cmd, addr: addr}
	case <-time.After(60 * time.Second):
		t.Fatalf("researchd did not start; see %s", logPath)
		return nil
	}
}

func postJob(t *testing.T, addr, key, question string) string {
	t.Helper()
	body := fmt.Sprintf(`{"question":%q,"effort":"medium"}`, question)
	req, err := http.NewRequest("POST", "http://"+addr+"/api/v2/research", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusAccepted, res.StatusCode, string(b))
	var out struct {
		JobID string `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal(b, &out))
	return out.JobID
}

// waitUntil polls cond; the bound only stops a hung test.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// explainFailures logs why jobs failed, and the servers' warnings, so a failure says what went wrong.
func explainFailures(t *testing.T, st *store.Store, ids []string, dir string) {
	t.Helper()
	for _, id := range ids {
		var j store.ResearchJob
		if err := st.DB().Where("id = ?", id).Take(&j).Error; err == nil && j.Status == jobs.Failed {
			t.Logf("job %s failed: %s %s", id, deref(j.ErrorCode), deref(j.ErrorMessage))
		}
	}
	for _, f := range []string{"first.log", "second.log"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
				t.Log(f, line)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
