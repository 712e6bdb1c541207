package auth

import (
	"context"
	"slices"
)

// AllScopes are the scopes an API key or token may carry.
var AllScopes = []string{"research", "batches", "campaigns", "experts", "attachments", "billing", "keys", "admin"}

// Method says how a request authenticated.
type Method string

const (
	MethodAPIKey Method = "api_key"
	MethodOAuth  Method = "oauth"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	AccountID string
	Email     string
	Tier      string
	IsAdmin   bool
	Method    Method
	KeyID     string   // with MethodAPIKey
	Scopes    []string // the key's or the token's
	Secret    string   // the API key itself: webhooks are signed with it
}

// HasScope reports whether the principal may act in scope; the admin scope allows everything.
func (p Principal) HasScope(scope string) bool {
	return slices.Contains(p.Scopes, scope) || slices.Contains(p.Scopes, "admin")
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the request's principal, if it authenticated.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
