package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestParseRate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ratelimit.Rate{"60/m": {60, time.Minute}, "10/s": {10, time.Second}, " 5/h ": {5, time.Hour}} {
		got, err := ratelimit.ParseRate(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"", "0/m", "x/m", "10/d", "10", "-1/s"} {
		_, err := ratelimit.ParseRate(bad)
		require.Error(t, err, bad)
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			l := ratelimit.New(st, func() time.Time { return now })
			ctx := context.Background()
			rate := ratelimit.Rate{N: 3, Per: time.Minute}
			for i := range 3 {
				dec, err := l.Allow(ctx, "a", rate)
				require.NoError(t, err)
				require.True(t, dec.Allowed)
				require.Equal(t, 2-i, dec.Remaining)
			}
			dec, err := l.Allow(ctx, "a", rate)
			require.NoError(t, err)
			require.False(t, dec.Allowed)
			require.Equal(t, 20*time.Second, dec.RetryAfter, "one token every 20 s")
			require.Equal(t, time.Minute, dec.Reset)

			other, err := l.Allow(ctx, "b", rate)
			require.NoError(t, err)
			require.True(t, other.Allowed, "buckets are per key")

			now = now.Add(20 * time.Second)
			dec, err = l.Allow(ctx, "a", rate)
			require.NoError(t, err)
			require.True(t, dec.Allowed, "refilled after the advertised wait")

			// Concurrent takers never share a token: exactly N of many succeed.
			var wg sync.WaitGroup
			var mu sync.Mutex
			allowed := 0
			for range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dec, err := l.Allow(ctx, "burst", ratelimit.Rate{N: 5, Per: time.Hour})
					require.NoError(t, err)
					if dec.Allowed {
						mu.Lock()
						allowed++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.Equal(t, 5, allowed)
		})
	}
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	l, err := ratelimit.ParseLimits("")
	require.NoError(t, err)
	require.Equal(t, ratelimit.DefaultLimits(), l)
	require.Equal(t, ratelimit.Rate{N: 60, Per: time.Minute}, l.ForTier("free"))
	require.Equal(t, ratelimit.Rate{N: 60, Per: time.Minute}, l.ForTier("unknown"), "an unknown tier gets the free rate")

	l, err = ratelimit.ParseLimits(" pro=10/s , anonymous=5/h")
	require.NoError(t, err)
	require.Equal(t, ratelimit.Rate{N: 10, Per: time.Second}, l.ForTier("pro"))
	require.Equal(t, ratelimit.Rate{N: 5, Per: time.Hour}, l.Anonymous)
	require.Equal(t, ratelimit.Rate{N: 3000, Per: time.Minute}, l.ForTier("enterprise"), "names left out keep their default")

	l, err = ratelimit.ParseLimits("off")
	require.NoError(t, err)
	require.True(t, l.Off)

	for _, bad := range []string{"gold=5/m", "free", "free=0/m", "free=5/d"} {
		_, err := ratelimit.ParseLimits(bad)
		require.Error(t, err, bad)
	}
}

// The tighter of several buckets decides, in one call.
func TestAllowAll(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			l := ratelimit.New(st, func() time.Time { return now })
			ctx := context.Background()
			key := ratelimit.Take{Key: "key:a", Rate: ratelimit.Rate{N: 5, Per: time.Minute}}
			acct := ratelimit.Take{Key: "acct:a", Rate: ratelimit.Rate{N: 3, Per: time.Minute}}
			for i := range 3 {
				dec, err := l.AllowAll(ctx, key, acct)
				require.NoError(t, err)
				require.True(t, dec.Allowed)
				require.Equal(t, 3, dec.Limit, "the account bucket has fewer left")
				require.Equal(t, 2-i, dec.Remaining)
			}
			dec, err := l.AllowAll(ctx, key, acct)
			require.NoError(t, err)
			require.False(t, dec.Allowed, "the account bucket refuses though the key's has tokens")
			require.Equal(t, 20*time.Second, dec.RetryAfter)

			// Another key of the same account shares the account's bucket.
			dec, err = l.AllowAll(ctx, ratelimit.Take{Key: "key:b", Rate: key.Rate}, acct)
			require.NoError(t, err)
			require.False(t, dec.Allowed)

			now = now.Add(time.Hour) // both refill, never beyond capacity
			dec, err = l.AllowAll(ctx, key, acct)
			require.NoError(t, err)
			require.True(t, dec.Allowed)
			require.Equal(t, 2, dec.Remaining)

			now = now.Add(-time.Minute) // a clock stepping back refills nothing
			dec, err = l.AllowAll(ctx, key, acct)
			require.NoError(t, err)
			require.Equal(t, 1, dec.Remaining)
		})
	}
}

// TestLimiterRemembersEmptyBuckets: a bucket the store found empty is refused without the store
// until it can hold a whole token again, with the same decision the store would give; a request
// whose buckets are not all known empty still goes to the store and spends what it takes there.
func TestLimiterRemembersEmptyBuckets(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			l := ratelimit.New(st, func() time.Time { return now })
			ctx := context.Background()
			perKey := ratelimit.Rate{N: 1, Per: time.Minute}
			perAcct := ratelimit.Rate{N: 3, Per: time.Minute}
			takes := []ratelimit.Take{{Key: "key", Rate: perKey}, {Key: "acct", Rate: perAcct}}
			dec, err := l.AllowAll(ctx, takes...)
			require.NoError(t, err)
			require.True(t, dec.Allowed)
			// The key's bucket is empty, the account's is not: the store is asked, refuses on the
			// key, and spends the account's token.
			dec, err = l.AllowAll(ctx, takes...)
			require.NoError(t, err)
			require.False(t, dec.Allowed)
			dec, err = l.Allow(ctx, "acct", perAcct)
			require.NoError(t, err)
			require.True(t, dec.Allowed)
			require.Equal(t, 0, dec.Remaining, "the refused request spent the account's token")

			// Now both are known empty: decided here, as the store would.
			now = now.Add(10 * time.Second)
			fresh := ratelimit.New(st, func() time.Time { return now })
			want, err := fresh.AllowAll(ctx, takes...)
			require.NoError(t, err)
			require.False(t, want.Allowed)
			require.NoError(t, st.Close())
			got, err := l.AllowAll(ctx, takes...)
			require.NoError(t, err, "answered without the (closed) store")
			require.Equal(t, want, got)
			require.Equal(t, 50*time.Second, got.RetryAfter)

			// Once a token may have come back, the store decides again.
			now = now.Add(50 * time.Second)
			_, err = l.AllowAll(ctx, takes...)
			require.Error(t, err, "the store was asked")
		})
	}
}

// TestTakeTokensGrantsSeveral: one statement takes several tokens from a bucket, granting what it
// holds when it holds fewer, and refills at the bucket's rate; store.TakeTokens is what a batch of
// waiting requests sends.
func TestTakeTokensGrantsSeveral(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			ctx := context.Background()
			now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			b := store.BucketTake{Key: "k", Capacity: 5, PerSecond: 1}
			for _, step := range []struct {
				name    string
				advance time.Duration
				want    int
				granted int
				left    float64
			}{
				{"a new bucket grants from its capacity", 0, 3, 3, 2},
				{"fewer left than wanted: all whole tokens", 0, 3, 2, 0},
				{"empty: nothing", 0, 2, 0, 0},
				{"a partial refill grants nothing and keeps the fraction", 500 * time.Millisecond, 1, 0, 0.5},
				{"a refill is granted in whole tokens", 2 * time.Second, 4, 2, 0.5},
				{"never beyond capacity", time.Hour, 9, 5, 0},
				{"no want is one", time.Hour, 0, 1, 4},
			} {
				now = now.Add(step.advance)
				b.Want = step.want
				res, err := st.TakeTokens(ctx, []store.BucketTake{b, {Key: "other", Capacity: 1, PerSecond: 1}}, now)
				require.NoError(t, err, step.name)
				require.Equal(t, step.granted, res["k"].Granted, step.name)
				require.InDelta(t, step.left, res["k"].Left, 1e-9, step.name)
			}
		})
	}
}

// TestLimiterConcurrentCallers: however concurrent requests are batched into statements, each gets
// what taking one after the other would give: exactly N are allowed, and they are told N-1, ..., 0
// tokens remain, each once; the refused are told none remain. Two buckets per request, as the API's.
func TestLimiterConcurrentCallers(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			l := ratelimit.New(st, func() time.Time { return now })
			ctx := context.Background()
			const n, callers = 20, 48
			takes := []ratelimit.Take{{Key: "acct", Rate: ratelimit.Rate{N: n, Per: time.Hour}}, {Key: "key", Rate: ratelimit.Rate{N: 1000, Per: time.Hour}}}
			decs := make(chan ratelimit.Decision, callers)
			var wg sync.WaitGroup
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dec, err := l.AllowAll(ctx, takes...)
					require.NoError(t, err)
					decs <- dec
				}()
			}
			wg.Wait()
			close(decs)
			remaining := map[int]int{}
			allowed := 0
			for dec := range decs {
				if dec.Allowed {
					allowed++
					remaining[dec.Remaining]++
				} else {
					require.Equal(t, 0, dec.Remaining)
					require.Equal(t, n, dec.Limit)
				}
			}
			require.Equal(t, n, allowed)
			for i := range n {
				require.Equal(t, 1, remaining[i], "remaining %d told once", i)
			}
			// Every caller spent a token from the key's bucket, allowed or not.
			res, err := st.TakeTokens(ctx, []store.BucketTake{{Key: "key", Capacity: 1000, PerSecond: 1000.0 / 3600}}, now)
			require.NoError(t, err)
			require.InDelta(t, 1000-callers-1, res["key"].Left, 1e-9)
		})
	}
}
