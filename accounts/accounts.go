// Package accounts is who may call the API: accounts, their API keys, and the authentication of
// either credential (an API key, or the verified claims of an OAuth access token) to the
// auth.Principal a request runs as. The HTTP layer authenticates every request through it, so the
// one read per key it costs is bounded by a short cache of verified keys (keycache.go).
package accounts

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Service manages keys and authenticates callers.
type Service struct {
	st   *store.Store
	now  func() time.Time
	log  *slog.Logger
	keys *keyCache
}

// Options configure a Service; the zero value works.
type Options struct {
	Now    func() time.Time // nil: the wall clock, in microseconds (what the databases keep)
	Logger *slog.Logger     // nil: slog.Default()
}

// New returns the service over st. It is cheap: the CLI builds one inside its transaction to
// create a key there.
func New(st *store.Store, o Options) *Service {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{st: st, now: o.Now, log: o.Logger, keys: newKeyCache()}
}

// Key is an API key's metadata as its owner lists it; the secret itself is never kept.
type Key = store.APIKey

// Keys pages an account's keys newest first.
func (s *Service) Keys(ctx context.Context, accountID string, req store.PageRequest) (store.Page[Key], error) {
	return s.st.ListAPIKeys(ctx, accountID, req)
}

// CreateKey mints and stores a key for an account; the secret is returned once and never stored.
func (s *Service) CreateKey(ctx context.Context, accountID string, label *string, scopes []string) (Key, string, error) {
	nk := auth.MintKey()
	k := Key{
		ID: uuid.NewString(), AccountID: accountID, Label: label, Prefix: nk.Prefix, Last4: nk.Last4,
		Hash: nk.Hash, Scopes: strings.Join(scopes, " "),
	}
	if err := s.st.CreateAPIKey(ctx, &k); err != nil {
		return Key{}, "", err
	}
	return k, nk.Secret, nil
}

// RevokeKey revokes one of an account's keys; repeating it is harmless. The key stops
// authenticating in this process at once, and in the deployment's others within keyCacheTTL.
func (s *Service) RevokeKey(ctx context.Context, accountID, keyID string) error {
	if err := s.st.RevokeAPIKey(ctx, accountID, keyID, s.now()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fault.Missing("API key")
		}
		return err
	}
	s.keys.forget(keyID)
	return nil
}

// AuthenticateKey is the caller an API key secret stands for. An unknown or revoked key is an
// Unauthenticated refusal; scopes are the caller's to check against the operation.
func (s *Service) AuthenticateKey(ctx context.Context, secret string) (auth.Principal, error) {
	if len(secret) < 8 { // the stored prefix's length; auth.LooksLikeKey keeps real callers well past it
		return auth.Principal{}, unauthenticated("invalid API key")
	}
	now := s.now()
	hash := auth.HashKey(secret)
	cached, gen, ok := s.keys.get(hash)
	if ok {
		s.touch(ctx, hash, Key{ID: cached.principal.KeyID, LastUsedAt: cached.lastUsed}, now)
		return cached.principal, nil
	}
	candidates, err := s.st.APIKeysByPrefix(ctx, secret[:8])
	if err != nil {
		return auth.Principal{}, err
	}
	for _, c := range candidates {
		k, acct := c.APIKey, c.Account
		if !auth.HashMatches(secret, k.Hash) {
			continue
		}
		if k.RevokedAt != nil {
			return auth.Principal{}, unauthenticated("this API key was revoked")
		}
		p := auth.Principal{
			AccountID: acct.ID, Email: acct.Email, Tier: acct.Tier, IsAdmin: acct.IsAdmin,
			Method: auth.MethodAPIKey, KeyID: k.ID, Scopes: k.ScopeList(), Secret: secret,
		}
		s.keys.put(hash, gen, p, k.LastUsedAt)
		s.touch(ctx, hash, k, now)
		return p, nil
	}
	return auth.Principal{}, unauthenticated("invalid API key")
}

// touch records the key's use (at most once a minute, see store.TouchAPIKey). A failed write
// only leaves last_used_at stale, which must not refuse the request.
func (s *Service) touch(ctx context.Context, hash string, k Key, now time.Time) {
	if err := s.st.TouchAPIKey(ctx, k, now); err != nil {
		s.log.WarnContext(ctx, "record key use", "key_id", k.ID, "error", err)
		return
	}
	if k.TouchDue(now) {
		s.keys.touched(hash, now)
	}
}

// AuthenticateToken is the caller a verified OAuth access token names: the account of its email,
// made on first sign-in (free tier, not an administrator), with the token's scopes.
func (s *Service) AuthenticateToken(ctx context.Context, claims auth.Claims) (auth.Principal, error) {
	acct, _, err := s.st.EnsureAccount(ctx, claims.Email, store.TierFree, false)
	if err != nil {
		return auth.Principal{}, err
	}
	return auth.Principal{
		AccountID: acct.ID, Email: acct.Email, Tier: acct.Tier, IsAdmin: acct.IsAdmin,
		Method: auth.MethodOAuth, Scopes: claims.Scopes,
	}, nil
}

func unauthenticated(detail string) error {
	return &fault.Error{Kind: fault.Unauthenticated, Msg: detail, Detail: detail}
}
