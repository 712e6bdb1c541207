// Command evalqa measures the research engine end to end (`make eval`): it starts a real
// `researchd serve` (or uses --server), uploads the documents of public question-answering data
// (SQuAD 2.0, HotpotQA; read from --data, never committed) and of the hand-written set
// (eval/testdata/handwritten) as attachments, runs one job per question at each effort, reads the
// reports and prints the figures per effort. Baselines are computed locally, without the server.
//
//	go run ./cmd/evalqa --data ../shared/data --n squad=376,swapped=100,hotpot=0 --out eval.json
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/researchd/researchd/eval"
	"github.com/researchd/researchd/qadata"
)

type options struct {
	data, split, efforts, n, out, server, key, hand, sets, researchd string
	seed                                                             uint64
	concurrency                                                      int
	reports                                                          bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "evalqa:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("evalqa", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.data, "data", "../shared/data", "folder with squad2-train-sample.json and hotpot-train-sample.json")
	fs.StringVar(&o.split, "split", "dev", "part of the data measured on: dev or train")
	fs.StringVar(&o.efforts, "efforts", "low,medium,high", "efforts, comma-separated")
	fs.StringVar(&o.n, "n", "squad=376,swapped=100,hotpot=0", "sample sizes per set (0: all); squad is half unanswerable where the split has enough (dev: 188)")
	fs.StringVar(&o.sets, "sets", "squad,swapped,hotpot,hand", "sets to run")
	fs.StringVar(&o.hand, "handwritten", "eval/testdata/handwritten", "folder of the hand-written set")
	fs.IntVar(&o.concurrency, "concurrency", 4, "jobs in flight at once")
	fs.StringVar(&o.out, "out", "", "write the figures and per-item results as JSON to this file")
	fs.BoolVar(&o.reports, "reports", false, "keep each report's Markdown in --out")
	fs.Uint64Var(&o.seed, "seed", 1, "sampling seed")
	fs.StringVar(&o.server, "server", "", "use this running server (base URL) instead of starting one")
	fs.StringVar(&o.key, "key", "", "API key for --server (its account needs credits for medium and high)")
	fs.StringVar(&o.researchd, "researchd", "", "researchd binary to start (default: go build ./cmd/researchd into a temporary folder)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.split != string(qadata.Dev) && o.split != string(qadata.Train) {
		return fmt.Errorf("--split %q: want dev or train", o.split)
	}
	efforts := splitList(o.efforts)
	sizes, err := parseSizes(o.n)
	if err != nil {
		return err
	}
	tasks, err := buildTasks(o, sizes)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "evalqa: %d jobs per effort (%s), efforts %s\n", len(tasks), countSets(tasks), strings.Join(efforts, ","))

	base, key := o.server, o.key
	if base == "" {
		srv, err := startServer(ctx, o.researchd, stderr)
		if err != nil {
			return err
		}
		defer srv.stop()
		base, key = srv.base, srv.key
	} else if key == "" {
		return errors.New("--server needs --key")
	}
	client := &eval.Client{Base: base, Key: key, HTTP: &http.Client{Timeout: 2 * time.Minute}}
	results, wall, err := eval.Run(ctx, client, tasks, eval.Options{Efforts: efforts, Concurrency: o.concurrency, Progress: stderr, KeepReports: o.reports})
	if err != nil {
		return err
	}
	sections := eval.Summarise(tasks, results, efforts, wall)
	fmt.Fprintf(stdout, "evalqa: split %s, seed %d, %s per effort, concurrency %d\n", o.split, o.seed, countSets(tasks), o.concurrency)
	eval.Print(stdout, sections, efforts)
	if o.out != "" {
		b, err := json.MarshalIndent(map[string]any{
			"split": o.split, "seed": o.seed, "efforts": efforts, "sizes": sizes, "figures": sections, "results": results,
		}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "evalqa: wrote %s\n", o.out)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseSizes reads "squad=300,swapped=100,hotpot=34".
func parseSizes(s string) (map[string]int, error) {
	out := map[string]int{eval.SetSQuAD: 376, eval.SetSwapped: 100, eval.SetHotpot: 0}
	for _, p := range splitList(s) {
		name, v, ok := strings.Cut(p, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("--n %q: want set=N pairs (squad, swapped, hotpot)", s)
		}
		if _, known := out[name]; !known {
			return nil, fmt.Errorf("--n: unknown set %q (want squad, swapped or hotpot)", name)
		}
		out[name] = n
	}
	return out, nil
}

// buildTasks samples the sets: SQuAD same-article questions half unanswerable (as far as the
// split has them), swapped-article items, HotpotQA records, and the whole hand-written set.
func buildTasks(o options, sizes map[string]int) ([]eval.Task, error) {
	sets := map[string]bool{}
	for _, s := range splitList(o.sets) {
		sets[s] = true
	}
	split := qadata.Split(o.split)
	var tasks []eval.Task
	if sets[eval.SetSQuAD] || sets[eval.SetSwapped] {
		items, err := qadata.SQuAD(filepath.Join(o.data, "squad2-train-sample.json"), split, 1, o.seed)
		if err != nil {
			return nil, err
		}
		var ans, unans, swapped []qadata.Item
		for _, it := range items {
			switch {
			case it.Kind == qadata.KindSwapped:
				swapped = append(swapped, it)
			case it.Answerable():
				ans = append(ans, it)
			default:
				unans = append(unans, it)
			}
		}
		if sets[eval.SetSQuAD] {
			n := sizes[eval.SetSQuAD]
			if n == 0 {
				n = len(ans) + len(unans)
			}
			u := qadata.Sample(unans, min(n/2, len(unans)), o.seed)
			a := qadata.Sample(ans, n-len(u), o.seed+1)
			for _, it := range append(a, u...) {
				tasks = append(tasks, eval.Task{Set: eval.SetSQuAD, Item: it})
			}
		}
		if sets[eval.SetSwapped] {
			for _, it := range qadata.Sample(swapped, sizes[eval.SetSwapped], o.seed+2) {
				tasks = append(tasks, eval.Task{Set: eval.SetSwapped, Item: it})
			}
		}
	}
	if sets[eval.SetHotpot] {
		items, err := qadata.Hotpot(filepath.Join(o.data, "hotpot-train-sample.json"), split)
		if err != nil {
			return nil, err
		}
		for _, it := range qadata.Sample(items, sizes[eval.SetHotpot], o.seed+3) {
			tasks = append(tasks, eval.Task{Set: eval.SetHotpot, Item: it})
		}
	}
	if sets[eval.SetHand] {
		h, err := eval.LoadHandwritten(o.hand)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, h.Tasks()...)
	}
	if len(tasks) == 0 {
		return nil, errors.New("no tasks: check --sets and --n")
	}
	return tasks, nil
}

func countSets(tasks []eval.Task) string {
	n := map[string]int{}
	var order []string
	for _, t := range tasks {
		if n[t.Set] == 0 {
			order = append(order, t.Set)
		}
		n[t.Set]++
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%s %d", s, n[s]))
	}
	return strings.Join(parts, ", ")
}

type server struct {
	base, key string
	stop      func()
}

var reKey = regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`)

// startServer builds (unless given) and starts `researchd serve` on a free port with a temporary
// data folder: embedded SQLite, no web search, the default (extractive) engine, no rate limits,
// free runs at every effort and no per-account cap on concurrent runs. It reads the development
// key the first start prints.
func startServer(ctx context.Context, bin string, logw io.Writer) (*server, error) {
	dir, err := os.MkdirTemp("", "evalqa-")
	if err != nil {
		return nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if bin == "" {
		bin = filepath.Join(dir, "researchd")
		fmt.Fprintln(logw, "evalqa: go build ./cmd/researchd")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/researchd")
		build.Stdout, build.Stderr = logw, logw
		if err := build.Run(); err != nil {
			cleanup()
			return nil, fmt.Errorf("go build ./cmd/researchd: %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		cleanup()
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"RESEARCH_ADDR="+addr,
		"RESEARCH_DATA_DIR="+filepath.Join(dir, "data"),
		"DATABASE_URL=",
		"RESEARCH_ENGINE=extractive",
		"RESEARCH_SEARCH_PROVIDER=none",
		"RESEARCH_RATE_LIMITS=off",
		"RESEARCH_CREDITS_LOW=0", "RESEARCH_CREDITS_MEDIUM=0", "RESEARCH_CREDITS_HIGH=0",
		"RESEARCH_ACCOUNT_MAX_RUNS=0",
		"RESEARCH_LOG_LEVEL=warn",
		"RESEARCH_ENV=development",
	)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cleanup()
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		cleanup()
		return nil, err
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		cleanup()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		cleanup()
	}
	keyc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if k := reKey.FindString(sc.Text()); k != "" && !sent {
				keyc <- k
				sent = true
			}
		}
	}()
	base := "http://" + addr
	deadline := time.After(2 * time.Minute)
	var key string
	for key == "" || !healthy(base) {
		select {
		case k := <-keyc:
			key = k
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			cleanup()
			return nil, fmt.Errorf("researchd serve exited (%v): %s", err, log)
		case <-deadline:
			stop()
			return nil, errors.New("researchd serve did not start within 2 minutes (or printed no development key)")
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	fmt.Fprintf(logw, "evalqa: researchd serving on %s (data in %s)\n", base, dir)
	return &server{base: base, key: key, stop: stop}, nil
}

func healthy(base string) bool {
	res, err := http.Get(base + "/readyz")
	if err != nil {
		return false
	}
	_ = res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
