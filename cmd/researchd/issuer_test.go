package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
)

// TestProductionNeedsAnExternalIssuer: production refuses to serve on the development issuer unless
// told to, and the refusal names the variables that fix it.
func TestProductionNeedsAnExternalIssuer(t *testing.T) {
	t.Parallel()
	c := newCLI(t, store.SQLite)
	c.env["RESEARCH_ENV"] = "production"
	c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
	c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve"}, c.getenv, &out, &errOut)
	require.Error(t, err)
	for _, name := range []string{"RESEARCH_OAUTH_ISSUER", "RESEARCH_OAUTH_JWKS_URL", "RESEARCH_OAUTH_AUDIENCE", "RESEARCH_ALLOW_DEV_ISSUER"} {
		require.Contains(t, err.Error(), name)
	}
	require.Empty(t, out.String(), "no development account is bootstrapped")

	// Administrative commands still work: only serving is refused.
	_, _, err = c.run(context.Background(), "migrate")
	require.NoError(t, err)

	c.env["RESEARCH_ALLOW_DEV_ISSUER"] = "true"
	_, _, stop := startServe(t, c)
	require.NoError(t, stop())
}

// TestExternalIssuerConfiguration: RESEARCH_OAUTH_AUDIENCE reaches the verifier, so a token for
// another audience is refused while one for this service mints a key.
func TestExternalIssuerConfiguration(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	const kid = "test-key"
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{
			"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": kid, "x": base64.RawURLEncoding.EncodeToString(pub),
		}}})
	}))
	t.Cleanup(jwks.Close)
	const issuer, audience = "https://login.example", "researchd-test"

	c := newCLI(t, store.SQLite)
	c.env["RESEARCH_ENV"] = "production"
	c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
	c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
	c.env["RESEARCH_OAUTH_ISSUER"] = issuer
	c.env["RESEARCH_OAUTH_JWKS_URL"] = jwks.URL
	c.env["RESEARCH_OAUTH_AUDIENCE"] = audience
	_, addr, stop := startServe(t, c)
	t.Cleanup(func() { _ = stop() })

	sign := func(aud string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{
			"iss": issuer, "aud": aud, "sub": "u1", "email": "ext@example.com", "email_verified": true,
			"scope": "keys", "exp": time.Now().Add(time.Hour).Unix(),
		})
		tok.Header["kid"] = kid
		s, err := tok.SignedString(priv)
		require.NoError(t, err)
		return s
	}
	for _, tc := range []struct {
		aud    string
		status int
	}{{"another-app", http.StatusUnauthorized}, {audience, http.StatusCreated}} {
		req, err := http.NewRequest("POST", "http://"+addr+"/api/v2/keys", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+sign(tc.aud))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Equal(t, tc.status, res.StatusCode, "aud %q", tc.aud)
	}
}
