// Package ratelimit limits how often a caller may do something, with token buckets kept in the
// database so that every process of a deployment draws from the same buckets.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/researchd/researchd/store"
)

// Rate allows N actions per Per, in bursts of up to N.
type Rate struct {
	N   int
	Per time.Duration
}

func (r Rate) String() string { return fmt.Sprintf("%d/%s", r.N, unitName(r.Per)) }

func unitName(d time.Duration) string {
	switch d {
	case time.Second:
		return "s"
	case time.Minute:
		return "m"
	case time.Hour:
		return "h"
	}
	return d.String()
}

// ParseRate reads "60/m", "10/s" or "1000/h".
func ParseRate(s string) (Rate, error) {
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return Rate{}, fmt.Errorf("rate %q: want N/s, N/m or N/h with N >= 1", s)
	}
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if per == 0 {
		return Rate{}, fmt.Errorf("rate %q: unit must be s, m or h", s)
	}
	return Rate{N: count, Per: per}, nil
}

// Decision is the outcome of one Allow.
type Decision struct {
	Allowed    bool
	Limit      int           // the bucket's capacity
	Remaining  int           // whole tokens left
	RetryAfter time.Duration // when refused: until the next token
	Reset      time.Duration // until the bucket is full again
}

// Limiter takes tokens from buckets in the store. Requests that arrive while its statement is in
// flight wait and then go to the store together, in one statement that takes as many tokens from each
// bucket as requests wait on it (group commit): under load the database sees one write per round
// instead of one per request, and a lone request goes at once. It also remembers the buckets the
// store last found empty (see emptyUntil), so a caller hammering an exhausted bucket is refused
// without a database round trip (knownEmpty). Every token it grants comes from the store.
type Limiter struct {
	st  *store.Store
	now func() time.Time

	mu       sync.Mutex
	empty    map[string]emptyBucket
	waiting  []*waiter // requests waiting for a statement, in arrival order
	inFlight int       // statements in flight; a caller whose statement is done hands over to waiting[0]
}

// waiter is one AllowAll call queued for a statement.
type waiter struct {
	ctx   context.Context
	takes []Take
	wake  chan bool // true: res and err are set; false: lead the next statement (sent once)
	res   map[string]store.BucketResult
	err   error
}

// maxInFlight is how many statements a limiter has in flight at once: one on SQLite, whose one
// writer connection would only queue more; a few on Postgres, where a statement is mostly a round
// trip that others may overlap (the rows' locks still order the takes of one bucket).
func (l *Limiter) maxInFlight() int {
	if l.st.Dialect() == store.Postgres {
		return 4
	}
	return 1
}

// maxBatch bounds how many requests one statement serves.
const maxBatch = 64

// emptyBucket is what the store said of a bucket that could not give a token: Left tokens at At,
// refilling at Rate.
type emptyBucket struct {
	Left float64
	At   time.Time
	Rate Rate
}

// wholeTokenSlack keeps float rounding from refusing here what the store would grant.
const wholeTokenSlack = 1e-6

// maxEmpty bounds the remembered empty buckets; past it the memory starts over (it is only a cache).
const maxEmpty = 10000

// New builds a limiter over st; now defaults to the wall clock.
func New(st *store.Store, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{st: st, now: now, empty: map[string]emptyBucket{}}
}

// Take names one bucket and its rate.
type Take struct {
	Key  string
	Rate Rate
}

// Allow takes one token from the bucket named key at rate r.
func (l *Limiter) Allow(ctx context.Context, key string, r Rate) (Decision, error) {
	return l.AllowAll(ctx, Take{Key: key, Rate: r})
}

// AllowAll takes one token from each bucket in one database round trip and answers the tightest
// decision: refused when any bucket refuses (waiting for the slowest of those), otherwise the
// bucket with the fewest tokens left. A bucket that allowed keeps its token spent even when another
// refuses: a refused request still counts against the caller. Requests batched into one statement
// get exactly what they would have got one after the other in arrival order.
func (l *Limiter) AllowAll(ctx context.Context, takes ...Take) (Decision, error) {
	if len(takes) == 0 {
		return Decision{Allowed: true}, nil
	}
	if res, ok := l.knownEmpty(takes, l.now()); ok {
		return tightest(takes, res), nil
	}
	w := &waiter{ctx: ctx, takes: takes, wake: make(chan bool, 1)}
	l.mu.Lock()
	lead := l.inFlight < l.maxInFlight()
	if lead {
		l.inFlight++
	} else {
		l.waiting = append(l.waiting, w)
	}
	l.mu.Unlock()
	if lead || !<-w.wake {
		l.flush(w)
	}
	if w.err != nil {
		return Decision{}, w.err
	}
	return tightest(takes, w.res), nil
}

// flush sends the leader's request and those waiting to the store in one statement, answers them,
// and hands the next statement to the first request still waiting (taking it off the queue, so it
// is handed over once) or, when none waits, gives its place in flight back.
func (l *Limiter) flush(leader *waiter) {
	l.mu.Lock()
	n := min(len(l.waiting), maxBatch-1)
	batch := append([]*waiter{leader}, l.waiting[:n]...)
	l.waiting = l.waiting[n:]
	l.mu.Unlock()

	now := l.now()
	// The statement serves every request of the batch: no single one's cancellation may end it.
	ctx := context.WithoutCancel(batch[0].ctx)
	var buckets []Take // each bucket once
	want := map[string]int{}
	for _, w := range batch {
		for _, t := range w.takes {
			// A bucket is named with one rate (a key's or account's tier); should two requests
			// disagree, the first one's applies, as the store keeps only the latest rate anyway.
			if want[t.Key] == 0 {
				buckets = append(buckets, t)
			}
			want[t.Key]++
		}
	}
	bt := make([]store.BucketTake, len(buckets))
	for i, t := range buckets {
		bt[i] = store.BucketTake{Key: t.Key, Capacity: float64(t.Rate.N), PerSecond: perSecond(t.Rate), Want: want[t.Key]}
	}
	res, err := l.st.TakeTokens(ctx, bt, now)
	if err == nil {
		deal(batch, res)
		l.remember(buckets, res, now)
	}

	l.mu.Lock()
	for _, w := range batch {
		w.err = err
	}
	var next *waiter
	if len(l.waiting) > 0 {
		next, l.waiting = l.waiting[0], l.waiting[1:]
	} else {
		l.inFlight--
	}
	l.mu.Unlock()
	for _, w := range batch[1:] {
		w.wake <- true
	}
	if next != nil {
		next.wake <- false
	}
}

// deal shares each bucket's granted tokens among the batch in arrival order, as if the requests had
// taken them one after the other: the first Granted requests on a bucket get one each, and each is
// told what was left after its own take.
func deal(batch []*waiter, res map[string]store.BucketResult) {
	used := map[string]int{}
	for _, w := range batch {
		w.res = make(map[string]store.BucketResult, len(w.takes))
		for _, t := range w.takes {
			b := res[t.Key]
			i := used[t.Key]
			used[t.Key] = i + 1
			if i < b.Granted {
				w.res[t.Key] = store.BucketResult{Granted: 1, Left: b.Left + float64(b.Granted-1-i)}
			} else {
				w.res[t.Key] = store.BucketResult{Left: b.Left}
			}
		}
	}
}

// knownEmpty answers without the store when every bucket of the request was found empty and cannot
// have refilled to a whole token since: other processes only ever take tokens, so the store holds
// at most what was left then plus the refill. The store would refuse every bucket and so spend
// nothing, and its refill is linear below capacity, so skipping the round trip changes no bucket.
func (l *Limiter) knownEmpty(takes []Take, now time.Time) (map[string]store.BucketResult, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := make(map[string]store.BucketResult, len(takes))
	for _, t := range takes {
		e, ok := l.empty[t.Key]
		if !ok || e.Rate != t.Rate {
			return nil, false
		}
		left := e.Left
		if now.After(e.At) {
			left = min(left+now.Sub(e.At).Seconds()*perSecond(t.Rate), float64(t.Rate.N))
		}
		if left >= 1-wholeTokenSlack {
			return nil, false // maybe a token: the store decides
		}
		res[t.Key] = store.BucketResult{Left: left}
	}
	return res, true
}

// remember records which buckets the store just found without a whole token, and forgets the rest.
func (l *Limiter) remember(buckets []Take, res map[string]store.BucketResult, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range buckets {
		b := res[t.Key]
		if b.Left >= 1 {
			delete(l.empty, t.Key)
			continue
		}
		if len(l.empty) >= maxEmpty {
			clear(l.empty)
		}
		l.empty[t.Key] = emptyBucket{Left: b.Left, At: now, Rate: t.Rate}
	}
}

// tightest is the decision of a request from its buckets' outcomes.
func tightest(takes []Take, res map[string]store.BucketResult) Decision {
	var out Decision
	for i, t := range takes {
		d := decide(t.Rate, res[t.Key])
		if i == 0 || tighter(d, out) {
			out = d
		}
	}
	return out
}

func decide(r Rate, b store.BucketResult) Decision {
	ps := perSecond(r)
	d := Decision{Allowed: b.Granted > 0, Limit: r.N, Remaining: int(math.Floor(max(b.Left, 0))),
		Reset: seconds((float64(r.N) - b.Left) / ps)}
	if b.Granted == 0 {
		d.RetryAfter = seconds((1 - b.Left) / ps)
	}
	return d
}

// tighter reports whether a binds more than b.
func tighter(a, b Decision) bool {
	switch {
	case a.Allowed != b.Allowed:
		return !a.Allowed
	case !a.Allowed:
		return a.RetryAfter > b.RetryAfter
	case a.Remaining != b.Remaining:
		return a.Remaining < b.Remaining
	default:
		return a.Limit < b.Limit
	}
}

func perSecond(r Rate) float64 { return float64(r.N) / r.Per.Seconds() }

// seconds rounds up to whole seconds, at least one: headers carry whole seconds and a client that
// waits the advertised time must find a token.
func seconds(s float64) time.Duration {
	return time.Duration(max(math.Ceil(s), 1)) * time.Second
}
