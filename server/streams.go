package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
)

// DefaultMaxStreamsPerAccount is how many streams one account (or one anonymous client IP) may
// hold open in one process when the configuration names no other number.
const DefaultMaxStreamsPerAccount = 20

// a2aStreamMethods are the A2A JSON-RPC methods (v1.0 and v0.3 names) answered as event streams.
var a2aStreamMethods = map[string]bool{
	"SendStreamingMessage": true, "SubscribeToTask": true, "message/stream": true, "tasks/resubscribe": true,
}

// streamSlots counts the open streams of each account in this process. A stream costs no database
// reads of its own (the process's follower reads each followed job once per change), but each
// holds a connection, goroutines and buffers for as long as its job runs: the cap keeps one
// account from holding them all.
type streamSlots struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newStreamSlots(max int) *streamSlots {
	if max <= 0 {
		max = DefaultMaxStreamsPerAccount
	}
	return &streamSlots{max: max, open: map[string]int{}}
}

// acquire takes a slot of key's, or reports false when key holds max already.
func (s *streamSlots) acquire(key string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= s.max {
		return nil, false
	}
	s.open[key]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open[key]--; s.open[key] == 0 {
			delete(s.open, key)
		}
	}, true
}

// capStreams holds a stream slot of the caller's (its account's, or its client IP's when
// anonymous) for as long as an event stream or an A2A streaming method runs, and answers 429
// too_many_streams past RESEARCH_MAX_STREAMS_PER_ACCOUNT. A HEAD of the event stream opens none.
func (s *Server) capStreams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch {
		case c.Path() == eventsRoute && r.Method == http.MethodGet:
		case c.Path() == a2aPath && r.Method == http.MethodPost && a2aStreamMethods[peekMethod(r)]:
		default:
			return next(c)
		}
		key := "ip:" + c.RealIP()
		if p, ok := principalOf(c); ok {
			key = "acct:" + p.AccountID
		}
		release, ok := s.streams.acquire(key)
		if !ok {
			return newProblem(http.StatusTooManyRequests, "too_many_streams",
				fmt.Sprintf("too many open streams: this account has %d open on this server, the most allowed; close one and open the stream again", s.streams.max))
		}
		defer release()
		return next(c)
	}
}

// peekMethod reads a JSON-RPC request's method and puts the body back as it was (with the read's
// error, such as the body limit's, still to come for the endpoint).
func peekMethod(r *http.Request) string {
	b, err := io.ReadAll(r.Body)
	rest := io.Reader(bytes.NewReader(b))
	if err != nil {
		rest = io.MultiReader(rest, errReader{err})
	}
	r.Body = io.NopCloser(rest)
	var env struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(b, &env) != nil {
		return ""
	}
	return env.Method
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
