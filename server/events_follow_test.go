package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// streamAll reads a whole event stream through e and returns its timeline seqs, checking it ends
// with event: end.
func streamAll(t *testing.T, e *researchEnv, key, jobID string) []int {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + jobID + "/events", Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	evs := parseSSE(t, r.Body)
	require.Equal(t, "end", evs[len(evs)-1].Event)
	return timelineSeqs(t, evs)
}

// Streams follow a job that another process runs (two server instances on one database): every
// event arrives once, in order, through either instance. On Postgres the instance that does not
// run the job hears its writes through LISTEN/NOTIFY; on SQLite both share one process's store.
func TestEventStreamAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			a, b, owner := twoProcesses(t, d)
			job := a.mustCreate(t, owner.Key, map[string]any{"question": "A long run to follow [drip]", "effort": "low"})
			id := job.JobId.String()

			// Streams open before the run starts, on both instances; only A runs it.
			streams := map[string]chan []int{}
			for name, p := range map[string]*process{"a": a, "b1": b, "b2": b} {
				ch := make(chan []int, 1)
				streams[name] = ch
				go func() { ch <- streamAll(t, p.researchEnv, owner.Key, id) }()
			}
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, a.Services.Start(context.Background()))
			for name, ch := range streams {
				select {
				case seqs := <-ch:
					require.Greater(t, len(seqs), dripEvents, name)
					for i, s := range seqs {
						require.Equal(t, i+1, s, "%s: event %d", name, i)
					}
				case <-time.After(60 * time.Second):
					t.Fatalf("stream %s did not end", name)
				}
			}
			require.Equal(t, streamAll(t, a.researchEnv, owner.Key, id), streamAll(t, b.researchEnv, owner.Key, id), "a replay is the same through both")
		})
	}
}

// openStream opens an event stream and returns once its headers arrived; cancel closes it.
func openStream(t *testing.T, e *researchEnv, key, jobID string) (status int, closeIt func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.URL+"/api/v2/research/"+jobID+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if res.StatusCode == http.StatusOK {
		// The first event is written once the stream holds its slot.
		_, err := bufio.NewReader(res.Body).ReadString('\n')
		require.NoError(t, err)
	}
	return res.StatusCode, func() {
		stop()
		_ = res.Body.Close()
	}
}

// Each account holds at most RESEARCH_MAX_STREAMS_PER_ACCOUNT streams open: past it an event
// stream or an A2A streaming method is 429 too_many_streams (problem+json); other accounts are not
// affected, and a slot frees when a stream closes.
func TestEventStreamCapPerAccount(t *testing.T) {
	t.Parallel()
	e := newResearchEnvWith(t, store.SQLite, func(cfg *servertest.Config) { cfg.MaxStreamsPerAccount = 2 })
	owner := e.NewAccount(t, store.TierPro, false, 100)
	other := e.NewAccount(t, store.TierPro, false, 100)
	job := e.mustCreate(t, owner.Key, map[string]any{"question": "Held open [block]", "effort": "low"})
	theirs := e.mustCreate(t, other.Key, map[string]any{"question": "Another account's job", "effort": "low"})
	id := job.JobId.String()

	var closers []func()
	for i := 0; i < 2; i++ {
		status, closeIt := openStream(t, e, owner.Key, id)
		require.Equal(t, http.StatusOK, status)
		closers = append(closers, closeIt)
	}
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + id + "/events", Token: owner.Key})
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json"))
	require.Equal(t, "too_many_streams", r.Problem(t).Code)
	for _, method := range []string{"SendStreamingMessage", "message/stream"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"q"}]}}}`
		r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/a2a", Token: owner.Key, RawBody: []byte(body), ContentType: "application/json"})
		require.Equal(t, http.StatusTooManyRequests, r.Status, method)
		require.Equal(t, "too_many_streams", r.Problem(t).Code, method)
	}
	// Not a stream: still answered.
	r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/a2a", Token: owner.Key, ContentType: "application/json",
		RawBody: []byte(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"` + id + `"}}`)})
	require.Equal(t, http.StatusOK, r.Status)
	// Another account streams as usual.
	require.NotEmpty(t, streamAll(t, e, other.Key, theirs.JobId.String()))

	// A closed stream gives its slot back.
	closers[0]()
	require.Eventually(t, func() bool {
		status, closeIt := openStream(t, e, owner.Key, id)
		if status == http.StatusOK {
			closers[0] = closeIt
			return true
		}
		closeIt()
		return false
	}, 10*time.Second, 20*time.Millisecond)
	for _, c := range closers {
		c()
	}
	r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + id + "/cancel", Token: owner.Key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}
