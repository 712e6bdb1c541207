package console_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The browser test drives the console in headless Chromium against the real researchd binary
// (SQLite, extractive engine, no web search), with every request outside the server's origin
// blocked and recorded. RESEARCH_BROWSER_TEST=1 (set by .ci/run) makes a missing Chromium a
// failure; =0 skips; unset runs it when Chromium is installed. RESEARCHD names a built binary
// (else the test builds one); RESEARCH_CONSOLE_SCREENSHOTS the folder for the screenshots
// (default .ci/artifacts/console at the repository root).

const notes = "Grid operator notes, winter 2024. Wholesale electricity prices in the EU rose in early 2024 because gas-fired plants set the marginal price on most days.\n" +
	"Low wind output in January raised the share of gas generation.\n" +
	"Carbon permit prices fell during the same period, which limited the increase.\n"

func TestConsoleInBrowser(t *testing.T) {
	chrome := chromium(t)
	bin := researchd(t)
	base, key := startServer(t, bin)
	shots := screenshotDir(t)
	b := newBrowser(t, chrome, base)

	// The root leads to the console; a wrong key is refused in the API's words and not kept.
	b.run(t, "open the root",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`//h1[contains(., "Sign in")]`))
	require.Equal(t, base+"/console#/signin", b.eval(t, `location.href`))
	b.run(t, "a wrong key",
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), "rsk-"+strings.Repeat("x", 43)),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	require.Contains(t, b.text(t, `.problem`), "invalid API key", "the problem+json detail")
	require.Equal(t, float64(0), b.eval(t, `sessionStorage.length`))
	b.shoot(t, shots, "signin")

	// The development key printed at the first start signs in; the key stays in sessionStorage only.
	b.run(t, "sign in",
		setValue(`input[name=key]`, key),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//h2[contains(., "No research jobs yet")]`))
	require.Equal(t, key, b.eval(t, `sessionStorage.getItem('researchd.apiKey')`))
	require.Equal(t, "", b.eval(t, `document.cookie`))
	require.NotContains(t, b.eval(t, `location.href`), key)

	// Start a job with an attachment uploaded from the browser; the cost is shown before submitting.
	file := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte(notes), 0o600))
	b.run(t, "the new-job form",
		chromedp.Click(`//a[contains(., "New research job")]`),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=question]`)),
		chromedp.WaitVisible(`//p[contains(., "medium costs 1 credit")]`))
	require.Equal(t, float64(0), b.eval(t, `[...document.querySelectorAll('main input, main select, main textarea')].filter(e => e.type !== 'radio' && !e.labels.length).length`),
		"every form control has a label")
	b.run(t, "fill the form and upload a file",
		chromedp.SendKeys(chromedp.CSS(`textarea[name=question]`), "Why did EU electricity prices rise in 2024?"),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=files]`), []string{file}),
		chromedp.WaitVisible(`//li[contains(., "notes.txt") and contains(., "ready")]`),
		chromedp.Click(`//summary[contains(., "Structured output")]`),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=json_schema]`), `{"type": "object", "properties": {"cause": {"type": "string"}}}`))
	b.shoot(t, shots, "new-job")
	b.run(t, "submit the job",
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//h1[contains(., "Why did EU electricity prices rise")]`))
	b.run(t, "the job completes live",
		chromedp.WaitVisible(`//span[contains(@class, "badge") and normalize-space(.)="completed"]`),
		chromedp.WaitVisible(`//div[contains(@class, "report")]//p[contains(., "Wholesale electricity prices")]`),
		chromedp.WaitVisible(`//*[contains(., "Citations verified: 6/6")]`)) // three in the report, three in the cause field's basis
	require.Greater(t, b.eval(t, `document.querySelectorAll('.timeline li').length`), float64(5), "timeline events from the stream")
	require.Contains(t, b.text(t, `section[aria-labelledby=so-h]`), "cause", "the structured output with its basis")
	require.True(t, b.requested(t, "/events"), "the job page follows the event stream")
	b.shoot(t, shots, "job")

	// An earlier revision reads back; a workspace file opens.
	b.run(t, "read the draft revision",
		chromedp.Click(`//td[contains(., "progress")]/following-sibling::td/a[contains(., "Read")]`),
		chromedp.WaitVisible(`//p[contains(., "Showing the report as it was at revision")]`),
		chromedp.WaitVisible(`//div[contains(@class, "report")]//*[contains(., "Draft")]`),
		chromedp.Click(`//a[contains(., "Show the latest")]`),
		// The revision's page also says "Citations verified": wait until it has gone, or the next
		// click can land on a node of the page being replaced.
		chromedp.WaitNotPresent(`//p[contains(., "Showing the report as it was at revision")]`),
		chromedp.WaitVisible(`//*[contains(., "Citations verified: 6/6")]`))
	b.run(t, "open a workspace file",
		chromedp.Click(`//a[normalize-space(.)="input_files/notes.txt"]`),
		chromedp.WaitVisible(`//pre[contains(., "Carbon permit prices fell")]`),
		chromedp.NavigateBack(),
		chromedp.WaitVisible(`//*[contains(., "Citations verified: 6/6")]`))

	// Continue: a second run follows live and joins the runs.
	b.run(t, "continue the job",
		chromedp.Click(`//button[contains(., "Continue research")]`),
		chromedp.WaitVisible(`//h2[contains(., "Runs")]/following-sibling::div//td[normalize-space(.)="continuation"]/following-sibling::td/span[normalize-space(.)="completed"]`),
		chromedp.WaitVisible(`//span[contains(@class, "badge") and normalize-space(.)="completed"]`))

	// A citation opens the stored source at the quote, marked and focused.
	b.run(t, "open a citation",
		chromedp.Click(chromedp.CSS(`.report a.cite`)),
		chromedp.WaitVisible(chromedp.CSS(`mark#quote`)))
	require.Contains(t, b.text(t, `mark#quote`), "Wholesale electricity prices in the EU rose in early 2024")
	require.Equal(t, true, b.eval(t, `document.activeElement === document.querySelector('mark#quote')`))
	require.Equal(t, true, b.eval(t, `(() => { const r = document.querySelector('mark#quote').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`))
	require.Contains(t, b.eval(t, `location.hash`), "/source?path=sources%2F")
	b.shoot(t, shots, "source")

	// The report renderer turns hostile Markdown into text: no element that loads or runs anything,
	// no javascript: link (and the request interception below sees no image request).
	hostile, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]any](`(async () => {
		const m = await import('/console/js/markdown.js');
		const box = document.createElement('div');
		box.append(m.render('# T\n\n<img src="http://evil.example/x.png" onerror="alert(1)">\n\n<script>alert(1)</script>\n\n' +
			'[click](javascript:alert(1)) ![pic](http://evil.example/y.png) <iframe src="http://evil.example/">\n\n| a | b |\n|---|---|\n| <b>x</b> | y |'));
		document.body.append(box);
		const out = {
			elements: box.querySelectorAll('img, script, iframe, object, embed, b, style, link').length,
			scriptLinks: [...box.querySelectorAll('a')].filter((a) => !/^(https?:|#)/.test(a.getAttribute('href'))).length,
			shownAsText: box.textContent.includes('<img src=') && box.textContent.includes('<script>'),
			table: box.querySelectorAll('td').length,
		};
		box.remove();
		return out;
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"elements": float64(0), "scriptLinks": float64(0), "shownAsText": true, "table": float64(2)}, hostile)

	// A small campaign: create, see plan and digest, approve, watch it finish, find its deliverable.
	b.run(t, "create a campaign",
		chromedp.Navigate(base+"/console#/campaigns/new"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=questions]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "Price drivers"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=questions]`), "What raised EU electricity prices?\nWhat limited the increase?"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//h3[contains(., "Review digest")]`))
	require.Regexp(t, `^[0-9a-f]{64}$`, b.text(t, `code.digest`))
	b.shoot(t, shots, "campaign-draft")
	b.run(t, "approve it",
		chromedp.Click(`//button[contains(., "Approve and start")]`),
		chromedp.WaitVisible(`//h1/following-sibling::span/span[contains(@class, "badge") and normalize-space(.)!="draft"]`))
	b.runFor(t, 45*time.Second, "the campaign completes",
		chromedp.WaitVisible(`//span[contains(@class, "badge") and normalize-space(.)="completed"]`),
		chromedp.WaitVisible(`//button[contains(., "Download results.csv")]`))
	b.shoot(t, shots, "campaign")

	// A batch from a CSV file: rows progress to their jobs and headlines.
	csv := filepath.Join(t.TempDir(), "questions.csv")
	require.NoError(t, os.WriteFile(csv, []byte("region,question\nEU,\"Why did prices rise, and when?\"\nUK,What limited the increase?\n"), 0o600))
	b.run(t, "create a batch from a CSV file",
		chromedp.Navigate(base+"/console#/batches/new"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=batch_name]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=batch_name]`), "Price questions"),
		chromedp.Click(chromedp.CSS(`input[name=qmode][value=csv]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[type=file][accept]`), []string{csv}),
		chromedp.WaitVisible(`//p[contains(., "2 questions.")]`),
		chromedp.WaitVisible(`//strong[contains(., "for 2 rows")]`),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//h1[contains(., "Price questions")]`))
	b.runFor(t, 40*time.Second, "the batch's rows finish",
		chromedp.WaitVisible(`//span[contains(@class, "badge") and normalize-space(.)="processed successfully"]`),
		chromedp.WaitVisible(`//td[contains(., "Why did prices rise, and when?")]/following-sibling::td/a[contains(., "Open job")]`))
	b.shoot(t, shots, "batch")

	// A weekly loop: its schedule and next run, then a run started by hand in its history.
	b.run(t, "create a loop",
		chromedp.Navigate(base+"/console#/loops/new"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=questions]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=batch_name]`), "Weekly prices"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=questions]`), "What raised EU electricity prices?"),
		setValue(`select[name=frequency]`, "weekly"),
		setValue(`input[name=timezone]`, "Europe/Berlin"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//dd[contains(., "weekly on Monday at 09:00 (Europe/Berlin)")]`),
		chromedp.Click(`//button[contains(., "Run now")]`),
		chromedp.WaitVisible(`//h2[contains(., "Run history")]/following-sibling::div//a[contains(., "#1")]`))
	b.shoot(t, shots, "loop")

	// A missing job says so in the API's words.
	b.run(t, "a job that does not exist",
		chromedp.Navigate(base+"/console#/jobs/no-such-job"),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	require.Contains(t, b.text(t, `.problem`), "not found")

	b.run(t, "the jobs list", chromedp.Navigate(base+"/console#/jobs"), chromedp.WaitVisible(chromedp.CSS(`ul.jobs li`)))
	b.shoot(t, shots, "jobs")
	b.run(t, "the account", chromedp.Navigate(base+"/console#/account"), chromedp.WaitVisible(`//td[contains(., "consumption")]`))
	b.shoot(t, shots, "account")

	// Signing out forgets the key.
	b.run(t, "sign out", chromedp.Click(chromedp.CSS(`#signout`)), chromedp.WaitVisible(`//h1[contains(., "Sign in")]`))
	require.Equal(t, float64(0), b.eval(t, `sessionStorage.length`))

	b.mu.Lock()
	defer b.mu.Unlock()
	require.Empty(t, b.blocked, "requests that tried to leave the origin")
	require.Empty(t, b.errors, "script errors and console errors (a CSP violation is one)")
	t.Logf("screenshots in %s", shots)
}

// setValue sets a form control's value as a person's edit would end: with input and change events.
func setValue(sel, value string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
		el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value)
	return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Evaluate[chromedp.Void](js))
}

// chromium finds the browser, or skips (fails under RESEARCH_BROWSER_TEST=1).
func chromium(t *testing.T) string {
	t.Helper()
	mode := os.Getenv("RESEARCH_BROWSER_TEST")
	if mode == "0" {
		t.Skip("RESEARCH_BROWSER_TEST=0: the console browser test runs in its own step (make console-check)")
	}
	if testing.Short() && mode != "1" {
		t.Skip("-short: the console browser test is skipped")
	}
	candidates := []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if mode == "1" {
		t.Fatal("RESEARCH_BROWSER_TEST=1 but no Chromium found: apt-get install chromium (or set CHROMIUM)")
	}
	t.Skip("no Chromium binary found (apt-get install chromium, or set CHROMIUM): the console browser test is skipped")
	return ""
}

// researchd is the binary under test: RESEARCHD, or one built from this checkout.
func researchd(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RESEARCHD"); p != "" {
		abs, err := filepath.Abs(p)
		require.NoError(t, err)
		require.FileExists(t, abs, "RESEARCHD")
		return abs
	}
	out := filepath.Join(t.TempDir(), "researchd")
	// The Makefile's flags, so the build cache of make test and make build is shared.
	cmd := exec.Command("go", "build", "-gcflags", "github.com/openai/openai-go/v3/...=-l", "-o", out, "github.com/researchd/researchd/cmd/researchd")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run(), "go build ./cmd/researchd")
	return out
}

var keyPattern = regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`)

// startServer runs `researchd serve` on a free loopback port over a fresh SQLite database and
// returns its URL and the development key it prints on its first start (as `make run` shows it).
func startServer(t *testing.T, bin string) (string, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RESEARCH_") && !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	env = append(env, "RESEARCH_ADDR="+addr, "RESEARCH_DATA_DIR="+filepath.Join(t.TempDir(), "data"), "RESEARCH_ENV=development",
		"RESEARCH_ENGINE=extractive", "RESEARCH_SEARCH_PROVIDER=none", "RESEARCH_LOG_LEVEL=warn")
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("researchd stderr:\n%s", stderr.String())
		}
	})
	keys := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if k := keyPattern.FindString(sc.Text()); k != "" {
				select {
				case keys <- k:
				default:
				}
			}
		}
	}()
	var key string
	select {
	case key = <-keys:
	case <-time.After(30 * time.Second):
		t.Fatalf("researchd printed no development key; stderr:\n%s", stderr.String())
	}
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "researchd did not become healthy")
		time.Sleep(100 * time.Millisecond)
	}
	return base, key
}

func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RESEARCH_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join("..", ".ci", "artifacts", "console")
	}
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(abs, 0o755))
	return abs
}

type browser struct {
	ctx     context.Context
	base    string
	mu      sync.Mutex
	blocked []string // requests that left (tried to leave) the origin
	errors  []string // exceptions and console errors
	seen    []string // every URL requested
}

// newBrowser starts headless Chromium that cannot reach anything but loopback: host names resolve
// to nothing but 127.0.0.1, a dead proxy takes whatever is not loopback, and request interception
// fails (and records) any request outside the server's origin.
func newBrowser(t *testing.T, chrome, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.ProxyServer("127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "127.0.0.1"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{ctx: ctx, base: base}
	origin, err := url.Parse(base)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx), "start Chromium") // no timeout here: it would stop the browser

	// The listener only records (it runs in the loop that reads the browser's messages).
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.record(&b.errors, "exception: "+exceptionText(e.ExceptionDetails))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.record(&b.errors, "console.error: "+strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			// The wrong key's 401 is logged by Chromium as a failed resource: expected. Anything
			// else at error level (a CSP violation, a module that did not load) is not.
			if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
				b.record(&b.errors, fmt.Sprintf("%s: %s", e.Entry.Source, e.Entry.Text))
			}
		}
	}))
	// Every request of the page pauses here until it is let through (same origin) or failed.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			b.decide(ctx, e, origin)
		}
	}()
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); return err },
	} {
		require.NoError(t, enable())
	}
	return b
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", d.Text, d.URL, d.LineNumber+1)
}

func (b *browser) decide(ctx context.Context, e fetch.EventRequestPaused, origin *url.URL) {
	u, err := url.Parse(e.Request.URL)
	b.record(&b.seen, e.Request.URL)
	if err == nil && (u.Scheme == "data" || u.Scheme == "blob" || (u.Scheme == origin.Scheme && u.Host == origin.Host)) {
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	b.record(&b.blocked, e.Request.URL)
	_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

func (b *browser) record(to *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*to = append(*to, s)
}

func (b *browser) requested(t *testing.T, part string) bool {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range b.seen {
		if strings.Contains(u, part) {
			return true
		}
	}
	return false
}

func (b *browser) run(t *testing.T, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	b.runFor(t, 15*time.Second, step, actions...)
}

func (b *browser) runFor(t *testing.T, d time.Duration, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail(t, step, err)
	}
}

// fail stops the test with what the page showed, so a failure in CI explains itself.
func (b *browser) fail(t *testing.T, step string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	page, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	b.mu.Lock()
	defer b.mu.Unlock()
	t.Fatalf("%s: %v\npage text:\n%s\nerrors: %v\nblocked: %v", step, err, page, b.errors, b.blocked)
}

func (b *browser) eval(t *testing.T, js string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
	if err != nil {
		b.fail(t, "evaluate "+js, err)
	}
	return out
}

func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail(t, "read "+sel, err)
	}
	return strings.TrimSpace(s)
}

// shoot saves full-page screenshots at a phone's width and a desktop's, and checks that the page
// does not scroll sideways at either (wide tables scroll inside their own box).
func (b *browser) shoot(t *testing.T, dir, name string) {
	t.Helper()
	for _, w := range []int64{375, 1440} {
		step := fmt.Sprintf("screenshot %s at %d px", name, w)
		b.run(t, step, chromedp.EmulateViewport(w, 900), chromedp.Sleep(100*time.Millisecond)) // let layout settle
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			b.fail(t, step, err)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644))
		require.Equal(t, true, b.eval(t, `document.documentElement.scrollWidth <= innerWidth + 1`), "%s scrolls sideways at %d px", name, w)
	}
}
