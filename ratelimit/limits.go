package ratelimit

import (
	"fmt"
	"strings"
	"time"
)

// Limits are the request rates of the API: one per account tier, applied to each API key and to
// each account (two buckets, the tighter wins), and one for anonymous callers per client IP.
type Limits struct {
	Tiers     map[string]Rate
	Anonymous Rate
	// Off disables request rate limiting (RESEARCH_RATE_LIMITS=off).
	Off bool
}

// DefaultLimits are the limits when RESEARCH_RATE_LIMITS does not say otherwise.
func DefaultLimits() Limits {
	return Limits{
		Tiers: map[string]Rate{
			"free":       {N: 60, Per: time.Minute},
			"pro":        {N: 600, Per: time.Minute},
			"enterprise": {N: 3000, Per: time.Minute},
		},
		Anonymous: Rate{N: 60, Per: time.Minute},
	}
}

// ForTier is the rate of a tier; an unknown tier gets the free tier's.
func (l Limits) ForTier(tier string) Rate {
	if r, ok := l.Tiers[tier]; ok {
		return r
	}
	return l.Tiers["free"]
}

// ParseLimits reads RESEARCH_RATE_LIMITS, "free=60/m,pro=600/m,enterprise=3000/m,anonymous=60/m",
// over the defaults: names left out keep their default; "off" disables limiting.
func ParseLimits(s string) (Limits, error) {
	l := DefaultLimits()
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		l.Off = true
		return l, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, rate, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return Limits{}, fmt.Errorf("rate limits %q: want name=N/unit pairs", s)
		}
		r, err := ParseRate(rate)
		if err != nil {
			return Limits{}, fmt.Errorf("rate limits: %s: %w", name, err)
		}
		switch _, tier := l.Tiers[name]; {
		case name == "anonymous":
			l.Anonymous = r
		case tier:
			l.Tiers[name] = r
		default:
			return Limits{}, fmt.Errorf("rate limits: unknown name %q (want free, pro, enterprise or anonymous)", name)
		}
	}
	return l, nil
}
