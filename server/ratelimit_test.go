package server_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// Requests are limited per API key and per account at the tier's rate and per client IP when
// anonymous (or refused at authentication); every limited response carries the RateLimit headers,
// the operational endpoints none.
func TestRequestRateLimits(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			limits := ratelimit.DefaultLimits()
			limits.Tiers[store.TierFree] = ratelimit.Rate{N: 3, Per: time.Hour}
			limits.Tiers[store.TierPro] = ratelimit.Rate{N: 100, Per: time.Hour}
			limits.Anonymous = ratelimit.Rate{N: 2, Per: time.Hour}
			e := servertest.New(t, d, func(c *servertest.Config) { c.RateLimits = &limits })
			free := e.NewAccount(t, store.TierFree, false, 0)
			pro := e.NewAccount(t, store.TierPro, false, 0)

			headers := func(r *servertest.Resp, limit, remaining int) {
				t.Helper()
				require.Equal(t, strconv.Itoa(limit), r.Header.Get("RateLimit-Limit"), "%d %s", r.Status, r.Body)
				require.Equal(t, strconv.Itoa(remaining), r.Header.Get("RateLimit-Remaining"))
				reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
				require.NoError(t, err)
				require.Positive(t, reset)
			}
			refused := func(r *servertest.Resp) {
				t.Helper()
				require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
				require.Contains(t, string(r.Body), `"rate_limited"`)
				after, err := strconv.Atoi(r.Header.Get("Retry-After"))
				require.NoError(t, err)
				require.Positive(t, after)
			}
			quota := func(key string) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: key})
			}

			for i := range 3 {
				r := quota(free.Key)
				require.Equal(t, http.StatusOK, r.Status)
				headers(r, 3, 2-i)
			}
			r := quota(free.Key)
			refused(r)
			headers(r, 3, 0)
			refused(quota(e.Key(t, free.ID, "billing")))

			// Errors count and carry the headers too; other accounts have their own buckets.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/00000000-0000-4000-8000-000000000000", Token: pro.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			headers(r, 100, 99)

			// Anonymous and unauthenticated requests share their IP's bucket.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts"})
			require.Equal(t, http.StatusOK, r.Status)
			headers(r, 2, 1)
			r = quota("rsk-" + "NotAKeyNotAKeyNotAKeyNotAKeyNotAKeyNotAKey0")
			require.Equal(t, http.StatusUnauthorized, r.Status)
			headers(r, 2, 0)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts"})
			refused(r)
			refused(quota("rsk-" + "NotAKeyNotAKeyNotAKeyNotAKeyNotAKeyNotAKey0"))

			// Health, metrics and docs are not limited.
			for _, p := range []string{"/healthz", "/readyz", "/openapi/v2.json"} {
				r = e.Do(t, servertest.Req{Method: "GET", Path: p})
				require.Equal(t, http.StatusOK, r.Status, p)
				require.Empty(t, r.Header.Get("RateLimit-Limit"), p)
			}
		})
	}
}
