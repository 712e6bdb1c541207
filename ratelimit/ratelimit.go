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

// Limiter takes tokens from buckets in the store. It remembers the buckets the store last found
// empty (see emptyUntil), so a caller hammering an exhausted bucket is refused without a database
// round trip; every token it grants still comes from the store.
type Limiter struct {
	st  *store.Store
	now func() time.Time

	mu    sync.Mutex
	empty map[string]emptyBucket
}

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
// refuses: a refused request still counts against the caller.
func (l *Limiter) AllowAll(ctx context.Context, takes ...Take) (Decision, error) {
	if len(takes) == 0 {
		return Decision{Allowed: true}, nil
	}
	now := l.now()
	if res, ok := l.knownEmpty(takes, now); ok {
		return tightest(takes, res), nil
	}
	bt := make([]store.BucketTake, len(takes))
	for i, t := range takes {
		bt[i] = store.BucketTake{Key: t.Key, Capacity: float64(t.Rate.N), PerSecond: perSecond(t.Rate)}
	}
	res, err := l.st.TakeTokens(ctx, bt, now)
	if err != nil {
		return Decision{}, err
	}
	l.remember(takes, res, now)
	return tightest(takes, res), nil
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
		res[t.Key] = store.BucketResult{Taken: false, Left: left}
	}
	return res, true
}

// remember records which buckets the store just found without a whole token, and forgets the rest.
func (l *Limiter) remember(takes []Take, res map[string]store.BucketResult, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range takes {
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
	d := Decision{Allowed: b.Taken, Limit: r.N, Remaining: int(math.Floor(max(b.Left, 0))),
		Reset: seconds((float64(r.N) - b.Left) / ps)}
	if !b.Taken {
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
