package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestAuthentication walks the credential rules: who gets 401, who gets 403, and who gets through.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			ctx := context.Background()
			acct := env.NewAccount(t, store.TierPro, false, 10)
			researchOnly := env.Key(t, acct.ID, "research")
			adminOnly := env.Key(t, acct.ID, "admin")
			revoked := env.Key(t, acct.ID, "keys")
			revokedID := keyIDOf(t, env, acct.Key, revoked)
			require.NoError(t, env.Store.RevokeAPIKey(ctx, acct.ID, revokedID, time.Now()))
			token := env.Token(t, acct.Email, "keys", "research")
			expired, err := env.Dev.Mint(acct.Email, []string{"keys"}, -time.Hour)
			require.NoError(t, err)
			otherIssuer, err := auth.LoadDevIssuer(t.TempDir())
			require.NoError(t, err)
			foreign, err := otherIssuer.Mint(acct.Email, []string{"keys"}, time.Hour)
			require.NoError(t, err)
			unsigned, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{
				"iss": auth.DevIssuerName, "sub": acct.Email, "scope": "keys", "exp": time.Now().Add(time.Hour).Unix(),
			}).SignedString(jwt.UnsafeAllowNoneSignatureType)
			require.NoError(t, err)

			bearer := func(v string) http.Header { return http.Header{"Authorization": {v}} }
			tests := []struct {
				name   string
				req    servertest.Req
				status int
				code   string
			}{
				{"no credentials", servertest.Req{Method: "GET", Path: "/api/v2/keys"}, 401, "unauthenticated"},
				{"basic auth", servertest.Req{Method: "GET", Path: "/api/v2/keys", Header: bearer("Basic dXNlcjpwYXNz")}, 401, "unauthenticated"},
				{"bearer without a token", servertest.Req{Method: "GET", Path: "/api/v2/keys", Header: bearer("Bearer")}, 401, "unauthenticated"},
				{"unknown key", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: auth.MintKey().Secret}, 401, "unauthenticated"},
				{"key with a changed character", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: flipLast(acct.Key)}, 401, "unauthenticated"},
				{"key-like garbage", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: "rsk-" + strings.Repeat("!", 43)}, 401, "unauthenticated"},
				{"revoked key", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: revoked}, 401, "unauthenticated"},
				{"key lacking the scope", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: researchOnly}, 403, "forbidden"},
				{"admin scope allows everything", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: adminOnly}, 200, ""},
				{"key with the scope", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: acct.Key}, 200, ""},
				{"token where a token is accepted", servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: token}, 200, ""},
				{"token on an API-key-only operation", servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: token}, 401, "unauthenticated"},
				{"API key on POST /keys", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: acct.Key, Body: map[string]any{}}, 403, "oauth_required"},
				{"expired token", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: expired, Body: map[string]any{}}, 401, "unauthenticated"},
				{"token signed by another key", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: foreign, Body: map[string]any{}}, 401, "unauthenticated"},
				{"unsigned token", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: unsigned, Body: map[string]any{}}, 401, "unauthenticated"},
				{"not a JWT", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: "hello", Body: map[string]any{}}, 401, "unauthenticated"},
				{"good token", servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: token, Body: map[string]any{}}, 201, ""},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					r := env.Do(t, tc.req)
					require.Equal(t, tc.status, r.Status, "%s", r.Body)
					if tc.code != "" {
						require.Equal(t, tc.code, r.Problem(t).Code)
					}
					if tc.status == http.StatusUnauthorized {
						require.True(t, strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer"), "401 needs WWW-Authenticate: Bearer, got %q", r.Header.Get("WWW-Authenticate"))
					}
				})
			}
		})
	}
}

// TestPublicOperationsNeedNoCredentials: the catalogue, the agent card and public job reads answer
// without credentials, and a stale or foreign credential does not turn them into a 401.
func TestPublicOperationsNeedNoCredentials(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			paths := []string{"/api/v2/experts", "/api/v2/agents", "/.well-known/agent-card.json", "/healthz"}
			creds := map[string]http.Header{
				"none":          nil,
				"unknown key":   {"Authorization": {"Bearer " + auth.MintKey().Secret}},
				"garbage token": {"Authorization": {"Bearer not-a-token"}},
				"basic auth":    {"Authorization": {"Basic dXNlcjpwYXNz"}},
			}
			for _, path := range paths {
				for name, h := range creds {
					t.Run(path+" "+name, func(t *testing.T) {
						t.Parallel()
						r := env.Do(t, servertest.Req{Method: "GET", Path: path, Header: h})
						require.NotEqual(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
						require.NotEqual(t, http.StatusForbidden, r.Status, "%s", r.Body)
					})
				}
			}
			// A public job read (API key or anonymous) runs without credentials: whatever it answers, it
			// is not an authentication failure.
			r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/some-public-slug"})
			require.NotEqual(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
		})
	}
}

// TestExternalIssuer runs the server against an external OAuth issuer's JWKS, served over HTTP.
func TestExternalIssuer(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			priv, issuer := issuerWithKnownKey(t)
			jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(issuer.JWKS())
			}))
			t.Cleanup(jwks.Close)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			const audience = "https://research.example/api"
			verifier, err := auth.NewJWKSVerifier(ctx, auth.DevIssuerName, audience, jwks.URL+"/.well-known/jwks.json")
			require.NoError(t, err)
			env := servertest.New(t, d, func(c *servertest.Config) { c.OAuth, c.DevIssuer = verifier, nil })

			email := storetest.Name("ext") + "@example.com"
			stranger, err := auth.LoadDevIssuer(t.TempDir())
			require.NoError(t, err)
			// The stranger's key signs claims that would pass, had it been the issuer's.
			strangers, err := stranger.Mint(email, []string{"keys"}, time.Hour)
			require.NoError(t, err)
			sign := func(claims jwt.MapClaims) string {
				tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
				pub := priv.Public().(ed25519.PublicKey)
				tok.Header["kid"] = base64.RawURLEncoding.EncodeToString(pub[:8])
				s, err := tok.SignedString(priv)
				require.NoError(t, err)
				return s
			}
			exp := time.Now().Add(time.Hour).Unix()
			// claims are the right claims with some changed (nil deletes).
			claims := func(change map[string]any) jwt.MapClaims {
				c := jwt.MapClaims{"iss": auth.DevIssuerName, "aud": audience, "sub": "user-123", "email": email, "email_verified": true, "scope": "keys research", "exp": exp}
				for k, v := range change {
					if v == nil {
						delete(c, k)
					} else {
						c[k] = v
					}
				}
				return c
			}
			good := sign(claims(nil))
			// The issuer's own minted tokens are right in every way but carry no audience.
			noAudience, err := issuer.Mint(email, []string{"keys"}, time.Hour)
			require.NoError(t, err)

			tests := []struct {
				name   string
				token  string
				status int
			}{
				{"token from the issuer", good, 201},
				{"audience among several", sign(claims(map[string]any{"aud": []string{"https://other.example", audience}})), 201},
				{"email_verified as the string true", sign(claims(map[string]any{"email_verified": "true"})), 201},
				{"email in sub, verified", sign(claims(map[string]any{"sub": email, "email": nil})), 201},
				{"token from another issuer's key", strangers, 401},
				{"the development issuer's own token (no audience)", noAudience, 401},
				{"wrong issuer", sign(claims(map[string]any{"iss": "https://evil.example"})), 401},
				{"no expiry", sign(claims(map[string]any{"exp": nil})), 401},
				{"expired", sign(claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), 401},
				{"no identity", sign(claims(map[string]any{"email": nil})), 401},
				{"no audience", sign(claims(map[string]any{"aud": nil})), 401},
				{"another application's audience", sign(claims(map[string]any{"aud": "https://other.example"})), 401},
				{"email not verified", sign(claims(map[string]any{"email_verified": false})), 401},
				{"email_verified missing", sign(claims(map[string]any{"email_verified": nil})), 401},
				{"email_verified as the string false", sign(claims(map[string]any{"email_verified": "false"})), 401},
				{"email in sub, not verified", sign(claims(map[string]any{"sub": email, "email": nil, "email_verified": nil})), 401},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tc.token, Body: map[string]any{"label": tc.name}})
					require.Equal(t, tc.status, r.Status, "%s", r.Body)
				})
			}
			// The key minted through the external issuer works, and the development issuer is not published.
			r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: good, Body: map[string]any{"scopes": []string{"keys"}}})
			require.Equal(t, http.StatusCreated, r.Status)
			var created gen.ApiKeyCreated
			r.JSON(t, &created)
			require.Equal(t, http.StatusOK, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: created.Key}).Status)
			require.Equal(t, http.StatusNotFound, env.Do(t, servertest.Req{Method: "GET", Path: "/.well-known/jwks.json"}).Status)
		})
	}
}

// issuerWithKnownKey writes an Ed25519 key where LoadDevIssuer finds it, so the test can both use the
// issuer and sign arbitrary claims with its key.
func issuerWithKnownKey(t *testing.T) (ed25519.PrivateKey, *auth.DevIssuer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "oauth-dev-issuer.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	issuer, err := auth.LoadDevIssuer(dir)
	require.NoError(t, err)
	return priv, issuer
}

var keyPattern = regexp.MustCompile(`^rsk-[A-Za-z0-9_-]{43}$`)

// TestKeySecrets: the secret is shown once, stored only as its hash, and use is recorded.
func TestKeySecrets(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			email := storetest.Name("secret") + "@example.com"
			tok := env.Token(t, email, "keys", "research")

			r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": "ci"}})
			require.Equal(t, http.StatusCreated, r.Status)
			var created gen.ApiKeyCreated
			r.JSON(t, &created)
			require.Regexp(t, keyPattern, created.Key)
			require.Equal(t, created.Key[:8], created.Prefix)
			require.Equal(t, created.Key[len(created.Key)-4:], created.Last4)
			require.True(t, created.LastUsedAt.IsNull())
			require.True(t, created.RevokedAt.IsNull())

			// The account was created on the token's first use.
			acct, err := env.Store.AccountByEmail(context.Background(), email)
			require.NoError(t, err)
			require.Equal(t, store.TierFree, acct.Tier)

			// Only the hash is stored: no column of any key row holds the secret.
			sum := sha256.Sum256([]byte(created.Key))
			rows := rawRows(t, env, "SELECT * FROM api_keys")
			require.Len(t, rows, 1)
			for col, v := range rows[0] {
				require.NotContains(t, v, created.Key, "column %s holds the secret", col)
				require.NotContains(t, v, created.Key[8:len(created.Key)-4], "column %s holds part of the secret", col)
			}
			require.Equal(t, hex.EncodeToString(sum[:]), rows[0]["hash"])

			// Listing never shows it; using the key records last_used_at.
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: tok})
			require.Equal(t, http.StatusOK, r.Status)
			require.NotContains(t, string(r.Body), created.Key)
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: created.Key})
			require.Equal(t, http.StatusOK, r.Status)
			require.NotContains(t, string(r.Body), created.Key)
			var page gen.ApiKeyPage
			r.JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.False(t, page.Items[0].LastUsedAt.IsNull(), "last_used_at is set once the key is used")
			used, err := page.Items[0].LastUsedAt.Get()
			require.NoError(t, err)
			require.WithinDuration(t, time.Now(), used, time.Minute)
			stored, err := env.Store.APIKeysByPrefix(context.Background(), created.Prefix)
			require.NoError(t, err)
			require.Len(t, stored, 1)
			require.NotNil(t, stored[0].LastUsedAt)
		})
	}
}

// TestOwnership: another account's key is 404 (its existence is never revealed) and is left alone.
func TestOwnership(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			owner := env.NewAccount(t, store.TierFree, false, 0)
			other := env.NewAccount(t, store.TierFree, false, 0)
			ownerKeyID := keyIDOf(t, env, owner.Key, owner.Key)

			tests := []struct {
				name   string
				req    servertest.Req
				status int
			}{
				{"another account's key, by API key", servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + ownerKeyID, Token: other.Key}, 404},
				{"another account's key, by token", servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + ownerKeyID, Token: env.Token(t, other.Email, "keys")}, 404},
				{"a key that does not exist", servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + "00000000-0000-4000-8000-000000000000", Token: owner.Key}, 404},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					r := env.Do(t, tc.req)
					require.Equal(t, tc.status, r.Status, "%s", r.Body)
					require.Equal(t, "not_found", r.Problem(t).Code)
				})
			}
			// The other account's list does not show it, and the owner's key still works.
			r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: other.Key})
			require.NotContains(t, string(r.Body), ownerKeyID)
			require.Equal(t, http.StatusOK, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: owner.Key}).Status)
		})
	}
}

// keyIDOf finds the key_id of secret by listing with lister (a key of the same account).
func keyIDOf(t *testing.T, env *servertest.Env, lister, secret string) string {
	t.Helper()
	r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys?limit=100", Token: lister})
	require.Equal(t, http.StatusOK, r.Status)
	var page gen.ApiKeyPage
	r.JSON(t, &page)
	for _, k := range page.Items {
		if k.Prefix == secret[:8] && k.Last4 == secret[len(secret)-4:] {
			return k.KeyId.String()
		}
	}
	t.Fatalf("key %s... not listed", secret[:8])
	return ""
}

// rawRows reads rows as column → text, bypassing the models.
func rawRows(t *testing.T, env *servertest.Env, query string) []map[string]string {
	t.Helper()
	rows, err := env.Store.DB().Raw(query).Rows()
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []map[string]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := map[string]string{}
		for i, c := range cols {
			switch v := vals[i].(type) {
			case nil:
				row[c] = ""
			case []byte:
				row[c] = string(v)
			default:
				row[c] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}

func flipLast(key string) string {
	last := key[len(key)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return key[:len(key)-1] + string(repl)
}
