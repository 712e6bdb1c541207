package server

import (
	"context"
	"errors"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/auth"
)

// authenticate resolves the bearer credential against the operation's security schemes and puts the
// principal in the request context. Order of refusals: no or bad credentials 401, wrong kind of
// credential or missing scope 403.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		op := s.routes.lookup(c)
		// Public operations (health, docs, the expert catalogue...) ignore any Authorization header:
		// a stale or foreign credential must not turn a public read into a 401.
		if op == nil || op.allows("uploadToken") || !op.takesCredentials() {
			return next(c)
		}
		token, present, err := bearer(c)
		if err != nil {
			return err
		}
		if !present {
			if op.allowsAnonymous() {
				return next(c)
			}
			return errUnauthenticated("credentials required: Authorization: Bearer rsk-...")
		}
		var p auth.Principal
		if auth.LooksLikeKey(token) {
			if !op.allows("apiKey") {
				if op.allows("oauth") {
					return errForbidden("oauth_required", "this operation needs an OAuth access token; an API key cannot mint keys")
				}
				return next(c)
			}
			p, err = s.accounts.AuthenticateKey(c.Request().Context(), token)
			if err != nil {
				return err
			}
			if op.scope != "" && !p.HasScope(op.scope) {
				if op.allowsAnonymous() {
					// Where anyone may read (public jobs), a key without the scope reads what anyone
					// may; the handler refuses it (403) on the key's own private resources.
					c.SetRequest(c.Request().WithContext(withScopeless(c.Request().Context(), p)))
					return next(c)
				}
				return errForbidden("forbidden", "this API key lacks the "+op.scope+" scope")
			}
		} else {
			if !op.allows("oauth") {
				return errUnauthenticated("invalid API key")
			}
			p, err = s.principalForToken(c.Request().Context(), token)
			if err != nil {
				return err
			}
		}
		c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), p)))
		return next(c)
	}
}

func bearer(c echo.Context) (token string, present bool, err error) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if h == "" {
		return "", false, nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", true, errUnauthenticated("malformed Authorization header: want Bearer <token>")
	}
	return token, true, nil
}

func (s *Server) principalForToken(ctx context.Context, token string) (auth.Principal, error) {
	if s.oauth == nil {
		return auth.Principal{}, errUnauthenticated("no OAuth issuer is configured")
	}
	claims, err := s.oauth.Verify(ctx, token)
	if errors.Is(err, auth.ErrInvalidToken) {
		return auth.Principal{}, errUnauthenticated("invalid or expired access token")
	}
	if err != nil {
		return auth.Principal{}, err
	}
	return s.accounts.AuthenticateToken(ctx, claims)
}

func principalOf(c echo.Context) (auth.Principal, bool) {
	return auth.FromContext(c.Request().Context())
}

// caller returns the authenticated principal of a handler's request; operations that require
// authentication never reach their handler without one.
func caller(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return auth.Principal{}, errUnauthenticated("credentials required")
	}
	return p, nil
}

// authorizeOwner is the one ownership rule: another account's resource is 404 (its existence is
// never revealed) unless it is public and only being read. Administrators may act on any resource.
func authorizeOwner(ctx context.Context, ownerID string, public bool, what string) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	switch {
	case ok && (p.AccountID == ownerID || p.IsAdmin):
		return p, nil
	case public:
		return p, nil
	default:
		return auth.Principal{}, errNotFound(what)
	}
}

// scopelessKey marks a request whose valid key lacks the operation's scope on an operation that
// anyone may call: it proceeds as anonymous, but handlers can tell the key's own resources.
type scopelessKey struct{}

func withScopeless(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, scopelessKey{}, p)
}

func scopelessCaller(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(scopelessKey{}).(auth.Principal)
	return p, ok
}
