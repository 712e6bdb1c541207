package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// RateBucket is a token bucket shared by every process over the database.
type RateBucket struct {
	BucketKey string `gorm:"primaryKey"`
	Tokens    float64
	UpdatedAt time.Time
}

// BucketTake asks for one token from the bucket Key, which holds up to Capacity tokens and refills
// at PerSecond.
type BucketTake struct {
	Key       string
	Capacity  float64
	PerSecond float64
}

// BucketResult is the outcome of one BucketTake: whether a token was taken and the tokens left.
type BucketResult struct {
	Taken bool
	Left  float64
}

// takeTokensSQL refills each bucket up to now and takes a token where there is one, in one upsert:
// a single round trip however many buckets a request draws from. The SET expressions read the row as
// it was (both dialects), and the upsert locks it, so concurrent takers across processes never share
// a token. A clock that steps back refills nothing.
const takeTokensSQL = `INSERT INTO rate_buckets (bucket_key, tokens, updated_at, capacity, per_us, stamp_us, taken) VALUES %s
ON CONFLICT (bucket_key) DO UPDATE SET
	tokens = CASE WHEN ` + refillSQL + ` >= 1 THEN ` + refillSQL + ` - 1 ELSE ` + refillSQL + ` END,
	taken = ` + refillSQL + ` >= 1,
	stamp_us = CASE WHEN excluded.stamp_us > rate_buckets.stamp_us THEN excluded.stamp_us ELSE rate_buckets.stamp_us END,
	capacity = excluded.capacity, per_us = excluded.per_us, updated_at = excluded.updated_at
RETURNING bucket_key, tokens, taken`

const refillSQL = `(CASE WHEN excluded.stamp_us <= rate_buckets.stamp_us THEN
		CASE WHEN rate_buckets.tokens > excluded.capacity THEN excluded.capacity ELSE rate_buckets.tokens END
	WHEN rate_buckets.tokens + (excluded.stamp_us - rate_buckets.stamp_us) * excluded.per_us > excluded.capacity THEN excluded.capacity
	ELSE rate_buckets.tokens + (excluded.stamp_us - rate_buckets.stamp_us) * excluded.per_us END)`

// TakeTokens takes one token from each bucket at now, in one statement, and reports each bucket's
// outcome by key. Keys must be distinct.
func (s *Store) TakeTokens(ctx context.Context, takes []BucketTake, now time.Time) (map[string]BucketResult, error) {
	takes = slices.Clone(takes)
	// One order for every caller: two requests locking the same two rows never deadlock.
	slices.SortFunc(takes, func(a, b BucketTake) int { return strings.Compare(a.Key, b.Key) })
	rows := make([]string, 0, len(takes))
	args := make([]any, 0, 7*len(takes))
	now = now.UTC().Truncate(time.Microsecond)
	for _, t := range takes {
		rows = append(rows, "(?, ?, ?, ?, ?, ?, ?)")
		args = append(args, t.Key, t.Capacity-1, now, t.Capacity, t.PerSecond/1e6, now.UnixMicro(), true)
	}
	var out []struct {
		BucketKey string
		Tokens    float64
		Taken     bool
	}
	if err := s.with(ctx).Raw(fmt.Sprintf(takeTokensSQL, strings.Join(rows, ", ")), args...).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("rate limit %d bucket(s): %w", len(takes), err)
	}
	res := make(map[string]BucketResult, len(out))
	for _, r := range out {
		res[r.BucketKey] = BucketResult{Taken: r.Taken, Left: r.Tokens}
	}
	if len(res) != len(takes) {
		return nil, fmt.Errorf("rate limit: %d bucket(s) answered for %d", len(res), len(takes))
	}
	return res, nil
}
