package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/ratelimit"
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
