package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RateBucket is a token bucket shared by every process over the database.
type RateBucket struct {
	BucketKey string `gorm:"primaryKey"`
	Tokens    float64
	UpdatedAt time.Time
}

// BucketTake asks for Want tokens (at least one) from the bucket Key, which holds up to Capacity
// tokens and refills at PerSecond. A limiter asks for several at once when several of its requests
// wait on the same bucket.
type BucketTake struct {
	Key       string
	Capacity  float64
	PerSecond float64
	Want      int
}

// BucketResult is the outcome of one BucketTake: how many tokens were granted (as many as wanted,
// or the whole tokens there were) and the tokens left after.
type BucketResult struct {
	Granted int
	Left    float64
}

// takeTokensSQL refills each bucket up to now and grants what it can of the tokens wanted, in one
// upsert: a single round trip however many buckets a call draws from. The SET expressions read the
// row as it was (both dialects), and the upsert locks it, so concurrent takers across processes never
// share a token. A clock that steps back refills nothing. The inserted row (a new bucket) is worked
// out in Go; excluded.granted carries the tokens wanted, capped at the capacity, which is all a bucket
// can ever grant. taken is kept for processes of the previous release, which read it.
// %[1]s is the refill (refillSQLite or refillPostgres), %[2]s its whole part, %[3]s the rows,
// %[4]s and %[5]s the dialect's least and greatest.
const takeTokensSQL = `INSERT INTO rate_buckets (bucket_key, tokens, updated_at, capacity, per_us, stamp_us, taken, granted) VALUES %[3]s
ON CONFLICT (bucket_key) DO UPDATE SET
	granted = %[4]s(excluded.granted, %[2]s),
	tokens = %[1]s - %[4]s(excluded.granted, %[2]s),
	taken = %[1]s >= 1,
	stamp_us = %[5]s(excluded.stamp_us, rate_buckets.stamp_us),
	capacity = excluded.capacity, per_us = excluded.per_us, updated_at = excluded.updated_at
RETURNING bucket_key, tokens, granted`

// The refill, per dialect: scalar min/max in SQLite, LEAST/GREATEST in Postgres.
const (
	refillSQLite   = `min(excluded.capacity, rate_buckets.tokens + max(0, excluded.stamp_us - rate_buckets.stamp_us) * excluded.per_us)`
	refillPostgres = `LEAST(excluded.capacity, rate_buckets.tokens + GREATEST(0, excluded.stamp_us - rate_buckets.stamp_us) * excluded.per_us)`
)

// takeSQL is takeTokensSQL for the dialect and n rows.
func (s *Store) takeSQL(n int) string {
	refill, whole, least, greatest := refillSQLite, "CAST("+refillSQLite+" AS INTEGER)", "min", "max" // the refill is never negative: CAST is floor
	if s.dialect == Postgres {
		refill, whole, least, greatest = refillPostgres, "floor("+refillPostgres+")::integer", "LEAST", "GREATEST"
	}
	return fmt.Sprintf(takeTokensSQL, refill, whole, s.valueRows(n, 8), least, greatest)
}

// TakeTokens takes the wanted tokens from each bucket at now, in one statement, and reports each
// bucket's outcome by key. Keys must be distinct.
func (s *Store) TakeTokens(ctx context.Context, takes []BucketTake, now time.Time) (map[string]BucketResult, error) {
	takes = slices.Clone(takes)
	// One order for every caller: two requests locking the same two rows never deadlock.
	slices.SortFunc(takes, func(a, b BucketTake) int { return strings.Compare(a.Key, b.Key) })
	args := make([]any, 0, 8*len(takes))
	now = now.UTC().Truncate(time.Microsecond)
	for _, t := range takes {
		want := min(max(t.Want, 1), int(math.Floor(t.Capacity)))
		args = append(args, t.Key, t.Capacity-float64(want), now, t.Capacity, t.PerSecond/1e6, now.UnixMicro(), want >= 1, want)
	}
	// Straight to the connection: GORM's statement building and scanner cost more than the upsert.
	rows, err := s.db.Statement.ConnPool.QueryContext(ctx, s.takeSQL(len(takes)), args...)
	if err != nil {
		return nil, fmt.Errorf("rate limit %d bucket(s): %w", len(takes), err)
	}
	defer rows.Close()
	res := make(map[string]BucketResult, len(takes))
	for rows.Next() {
		var key string
		var r BucketResult
		if err := rows.Scan(&key, &r.Left, &r.Granted); err != nil {
			return nil, fmt.Errorf("rate limit: %w", err)
		}
		res[key] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rate limit %d bucket(s): %w", len(takes), err)
	}
	if len(res) != len(takes) {
		return nil, fmt.Errorf("rate limit: %d bucket(s) answered for %d", len(res), len(takes))
	}
	return res, nil
}

// valueRows is n rows of width placeholders for a VALUES list, in the dialect's bind syntax (the
// statement goes to the connection without GORM, which would rewrite "?" for Postgres).
func (s *Store) valueRows(n, width int) string {
	var b strings.Builder
	for i := range n * width {
		switch {
		case i%width == 0 && i > 0:
			b.WriteString("), (")
		case i%width != 0:
			b.WriteString(", ")
		}
		if s.dialect == Postgres {
			b.WriteString("$" + strconv.Itoa(i+1))
		} else {
			b.WriteString("?")
		}
	}
	return "(" + b.String() + ")"
}
