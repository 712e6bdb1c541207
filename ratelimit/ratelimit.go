// Package ratelimit limits how often a caller may do something, with token buckets kept in the
// database so that every process of a deployment draws from the same buckets.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// Limiter takes tokens from buckets in the store.
type Limiter struct {
	st  *store.Store
	now func() time.Time
}

// New builds a limiter over st; now defaults to the wall clock.
func New(st *store.Store, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{st: st, now: now}
}

// Allow takes one token from the bucket named key at rate r.
func (l *Limiter) Allow(ctx context.Context, key string, r Rate) (Decision, error) {
	perSecond := float64(r.N) / r.Per.Seconds()
	taken, left, err := l.st.TakeToken(ctx, key, float64(r.N), perSecond, l.now())
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: taken, Limit: r.N, Remaining: int(math.Floor(left)),
		Reset: seconds((float64(r.N) - left) / perSecond)}
	if !taken {
		d.RetryAfter = seconds((1 - left) / perSecond)
	}
	return d, nil
}

// seconds rounds up to whole seconds, at least one: headers carry whole seconds and a client that
// waits the advertised time must find a token.
func seconds(s float64) time.Duration {
	return time.Duration(max(math.Ceil(s), 1)) * time.Second
}
