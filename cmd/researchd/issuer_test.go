package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net"
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
	c.env["RESEARCH_PUBLIC_URL"] = "https://research.example.com"
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
	c.env["RESEARCH_PUBLIC_URL"] = "https://research.example.com"
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

// TestDevelopmentExposureWarning: development on anything but loopback logs a warning naming the
// address; loopback, and production, do not.
func TestDevelopmentExposureWarning(t *testing.T) {
	t.Parallel()
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 8080} }
	tests := []struct {
		name, env string
		addr      net.Addr
		warn      bool
	}{
		{"all IPv4 interfaces", "development", tcp("0.0.0.0"), true},
		{"all IPv6 interfaces", "development", tcp("::"), true},
		{"a LAN address", "development", tcp("192.168.1.20"), true},
		{"a public IPv6 address", "development", tcp("2001:db8::1"), true},
		{"IPv4 loopback", "development", tcp("127.0.0.1"), false},
		{"another IPv4 loopback", "development", tcp("127.0.0.2"), false},
		{"IPv6 loopback", "development", tcp("::1"), false},
		{"production on all interfaces", "production", tcp("0.0.0.0"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			warnIfExposed(newLogger(&buf, "info", logFormatAuto), tc.env, tc.addr)
			if !tc.warn {
				require.Empty(t, buf.String())
				return
			}
			var entry struct{ Level, Msg, Addr string }
			require.NoError(t, json.Unmarshal(buf.Bytes(), &entry))
			require.Equal(t, "WARN", entry.Level)
			require.Contains(t, entry.Msg, "RESEARCH_ENV=development")
			require.Equal(t, tc.addr.String(), entry.Addr)
		})
	}

	// The real start on loopback stays quiet.
	c := newCLI(t, store.SQLite)
	c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
	c.env["RESEARCH_LOG_LEVEL"] = "info" // startServe waits for the "listening" line
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, c.getenv, &bytes.Buffer{}, errOut) }()
	for !strings.Contains(errOut.String(), "researchd listening") {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	require.NoError(t, <-done)
	require.NotContains(t, errOut.String(), "non-loopback")
}
