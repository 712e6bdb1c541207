package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/ratelimit"
)

// Rate-limit response headers (draft-ietf-httpapi-ratelimit-headers), sent on every response of a
// limited operation.
const (
	headerLimit     = "RateLimit-Limit"
	headerRemaining = "RateLimit-Remaining"
	headerReset     = "RateLimit-Reset"
	// limitedKey marks a request whose buckets were already drawn from.
	limitedKey = "ratelimit.decided"
)

// limitRequests draws every authenticated request from its API key's and its account's buckets (the
// tier's rate; the tighter decision wins) and every anonymous one from its client IP's bucket, in
// one database round trip. It sits after authentication; limitUnidentified covers requests refused
// before they get here.
func (s *Server) limitRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.limited(c) {
			return next(c)
		}
		ctx := c.Request().Context()
		p, ok := principalOf(c)
		if !ok {
			p, ok = scopelessCaller(ctx)
		}
		var takes []ratelimit.Take
		if ok {
			r := s.limits.ForTier(p.Tier)
			takes = append(takes, ratelimit.Take{Key: "acct:" + p.AccountID, Rate: r})
			if p.KeyID != "" {
				takes = append(takes, ratelimit.Take{Key: "key:" + p.KeyID, Rate: r})
			}
		} else {
			takes = append(takes, s.ipTake(c))
		}
		if err := s.applyLimit(c, takes); err != nil {
			return err
		}
		return next(c)
	}
}

// limitUnidentified wraps authentication and the body limit: a request they refuse (401, 413) is
// drawn from its client IP's bucket, so guessing keys is limited too and these answers carry the
// headers like every other.
func (s *Server) limitUnidentified(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Get(limitedKey) != nil || !s.limited(c) {
			return err
		}
		if lerr := s.applyLimit(c, []ratelimit.Take{s.ipTake(c)}); lerr != nil {
			return lerr
		}
		return err
	}
}

// limited reports whether the request's operation is rate limited: every operation of the document
// but the Operations ones (health, readiness, metrics, docs, key sets), which monitors and browsers
// poll.
func (s *Server) limited(c echo.Context) bool {
	if s.limits.Off {
		return false
	}
	op := s.routes.lookup(c)
	return op != nil && !slices.Contains(op.route.Operation.Tags, "Operations")
}

func (s *Server) ipTake(c echo.Context) ratelimit.Take {
	return ratelimit.Take{Key: "ip:" + c.RealIP(), Rate: s.limits.Anonymous}
}

// applyLimit takes the tokens, sets the headers and answers 429 when refused.
func (s *Server) applyLimit(c echo.Context, takes []ratelimit.Take) error {
	c.Set(limitedKey, true)
	d, err := s.limiter.AllowAll(c.Request().Context(), takes...)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(headerLimit, strconv.Itoa(d.Limit))
	h.Set(headerRemaining, strconv.Itoa(d.Remaining))
	h.Set(headerReset, strconv.Itoa(int(d.Reset.Seconds())))
	if d.Allowed {
		return nil
	}
	return rateLimited(d, "at most "+refusingRate(takes, d)+" requests")
}

// refusingRate names the rate of the bucket that refused.
func refusingRate(takes []ratelimit.Take, d ratelimit.Decision) string {
	for _, t := range takes {
		if t.Rate.N == d.Limit {
			return t.Rate.String()
		}
	}
	return strconv.Itoa(d.Limit)
}

// rateLimited is the 429 rate_limited problem with Retry-After.
func rateLimited(d ratelimit.Decision, what string) *Problem {
	secs := int(d.RetryAfter.Seconds())
	p := newProblem(http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("%s; retry in %d s", what, secs))
	p.Title = "Too many requests"
	p.header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return p
}
