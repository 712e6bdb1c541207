// Package idempotency makes a create safe to retry with an Idempotency-Key: the same key from the
// same account answers what the first request created and creates nothing; the same key with
// another body is ErrKeyReused; concurrent duplicates create exactly one resource. Every create
// that takes the header (research jobs, batches, campaigns, loops, experts, expert builds) goes
// through Create; the records are the store's (store.IdempotencyKey, kept store.IdempotencyTTL).
package idempotency

import (
	"context"
	"errors"
	"time"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// ErrKeyReused: the key was sent before with a different body.
var ErrKeyReused = &fault.Error{Kind: fault.Conflict, Code: "idempotency_key_reused", Msg: "idempotency key reused",
	Detail: "this Idempotency-Key was used with a different request body"}

// Key is a create's Idempotency-Key and what it is remembered with.
type Key struct {
	AccountID string
	// Scope keeps creates of different resources apart in the shared records ("batch:"); research
	// jobs, the first to take keys, use none.
	Scope string
	// Key is the header's value; "" means the request sent none and Create just creates.
	Key string
	// RequestHash is a hash of the body: a retry must send the same.
	RequestHash string
	// StatusCode is what the create answers (201 or 202); a replay answers it again.
	StatusCode int
	// Now is the time of the request (records younger than store.IdempotencyTTL are live).
	Now time.Time
}

// Claim records the key for the new resource id in the create's transaction tx. It must be the
// transaction's first write: when a concurrent request with the same key won, Claim fails, the
// transaction rolls back, and Create answers what the winner created.
type Claim func(ctx context.Context, tx *store.Store, id string) error

// Create runs create(ctx, in, claim) at most once per key. A live record of the key answers at
// once: replay of the record when the body hash matches (replayed true), ErrKeyReused when it does
// not. Otherwise create runs and must call claim first in the transaction that writes the resource;
// without a key its claim does nothing. in is only passed on, so that a method (s.create) serves.
func Create[In, T any](ctx context.Context, st *store.Store, k Key, in In,
	replay func(ctx context.Context, rec store.IdempotencyKey) (T, error),
	create func(ctx context.Context, in In, claim Claim) (T, error),
) (v T, replayed bool, err error) {
	if k.Key == "" {
		v, err = create(ctx, in, func(context.Context, *store.Store, string) error { return nil })
		return v, false, err
	}
	if v, ok, err := lookup(ctx, st, k, replay); ok || err != nil {
		return v, ok, err
	}
	errRace := errors.New("idempotency race")
	v, err = create(ctx, in, func(ctx context.Context, tx *store.Store, id string) error {
		rec := store.IdempotencyKey{AccountID: k.AccountID, IdemKey: k.Scope + k.Key, RequestHash: k.RequestHash, JobID: id, StatusCode: k.StatusCode}
		if err := tx.ClaimIdempotencyKey(ctx, &rec, k.Now); errors.Is(err, store.ErrConflict) {
			return errRace
		} else if err != nil {
			return err
		}
		return nil
	})
	if !errors.Is(err, errRace) {
		return v, false, err
	}
	// A concurrent request with the same key won; answer what it created.
	v, ok, err := lookup(ctx, st, k, replay)
	if err == nil && !ok {
		err = errors.New("idempotency key vanished after a conflict")
	}
	return v, true, err
}

// lookup answers a key that has a live record (ok true), or reports that it has none.
func lookup[T any](ctx context.Context, st *store.Store, k Key, replay func(context.Context, store.IdempotencyKey) (T, error)) (v T, ok bool, err error) {
	rec, err := st.IdempotencyKeyFor(ctx, k.AccountID, k.Scope+k.Key, k.Now)
	if errors.Is(err, store.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if rec.RequestHash != k.RequestHash {
		return v, true, ErrKeyReused
	}
	v, err = replay(ctx, rec)
	return v, true, err
}
