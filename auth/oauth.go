package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v2"
	"github.com/golang-jwt/jwt/v5"
)

// DevIssuerName is the issuer of tokens from the built-in development issuer.
const DevIssuerName = "researchd-dev"

// ErrInvalidToken covers every reason an access token is refused.
var ErrInvalidToken = errors.New("invalid access token")

// Claims is what researchd reads from an OAuth access token.
type Claims struct {
	Email  string
	Scopes []string
}

// Verifier checks OAuth access tokens.
type Verifier interface {
	Verify(ctx context.Context, token string) (Claims, error)
}

type tokenClaims struct {
	Email         string   `json:"email,omitempty"`
	EmailVerified flexBool `json:"email_verified,omitempty"`
	Scope         string   `json:"scope,omitempty"`
	jwt.RegisteredClaims
}

// flexBool reads email_verified as a JSON boolean or as the strings "true"/"false", which some
// issuers (Cognito, older Azure AD) send; anything else is false.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case "true", `"true"`:
		*b = true
	default:
		*b = false
	}
	return nil
}

// rules are what a verifier demands beyond a valid signature, issuer and expiry.
type rules struct {
	issuer string
	// audience, when set, must appear in the token's aud claim: without it, a token the same issuer
	// minted for any other application would open this one.
	audience string
	// verifiedEmail demands email_verified: true. Accounts are keyed by email, so an issuer that lets
	// anyone claim an address they do not control would hand over that address's account.
	verifiedEmail bool
}

func parse(token string, keyFunc jwt.Keyfunc, r rules) (Claims, error) {
	var c tokenClaims
	opts := []jwt.ParserOption{
		jwt.WithIssuer(r.issuer), jwt.WithExpirationRequired(), jwt.WithLeeway(30 * time.Second),
		jwt.WithValidMethods([]string{"EdDSA", "RS256", "RS384", "RS512", "ES256", "ES384", "PS256"}),
	}
	if r.audience != "" {
		opts = append(opts, jwt.WithAudience(r.audience))
	}
	if _, err := jwt.ParseWithClaims(token, &c, keyFunc, opts...); err != nil {
		return Claims{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	email := c.Email
	if email == "" {
		email = c.Subject
	}
	if !strings.Contains(email, "@") {
		return Claims{}, fmt.Errorf("%w: no email in sub or email claim", ErrInvalidToken)
	}
	if r.verifiedEmail && !bool(c.EmailVerified) {
		return Claims{}, fmt.Errorf("%w: the email is not verified (email_verified is not true)", ErrInvalidToken)
	}
	return Claims{Email: email, Scopes: strings.Fields(c.Scope)}, nil
}

// DevIssuer is the built-in development issuer: an Ed25519 key kept in the data folder, shared by
// `researchd token` (which signs) and `researchd serve` (which verifies and publishes the JWKS).
type DevIssuer struct {
	key ed25519.PrivateKey
	kid string
}

// LoadDevIssuer reads the issuer key from dir, creating it on first use.
func LoadDevIssuer(dir string) (*DevIssuer, error) {
	path := filepath.Join(dir, "oauth-dev-issuer.pem")
	b, err := os.ReadFile(path)
	if err == nil {
		return parseDevIssuer(path, b)
	}
	if !os.IsNotExist(err) {
		return nil, fmt.Errorf("read dev issuer key: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate dev issuer key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode dev issuer key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	// O_EXCL: when two processes start at once, the loser reads the winner's key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if os.IsExist(err) {
		return LoadDevIssuer(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("write dev issuer key: %w", err)
	}
	err = pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A half-written key would fail every later start: leave none.
		_ = os.Remove(path)
		return nil, fmt.Errorf("write dev issuer key: %w", err)
	}
	return newDevIssuer(priv), nil
}

func parseDevIssuer(path string, b []byte) (*DevIssuer, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return newDevIssuer(ek), nil
}

func newDevIssuer(k ed25519.PrivateKey) *DevIssuer {
	pub := k.Public().(ed25519.PublicKey)
	return &DevIssuer{key: k, kid: base64.RawURLEncoding.EncodeToString(pub[:8])}
}

// Mint signs an access token for email with the given scopes.
func (d *DevIssuer) Mint(email string, scopes []string, ttl time.Duration) (string, error) {
	now := time.Now()
	c := tokenClaims{Email: email, EmailVerified: true, Scope: strings.Join(scopes, " "), RegisteredClaims: jwt.RegisteredClaims{
		Issuer: DevIssuerName, Subject: email, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	t.Header["kid"] = d.kid
	s, err := t.SignedString(d.key)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return s, nil
}

// Verify checks a token signed by this issuer. Its tokens carry no audience and need no verified
// email: only the operator of this data folder can mint them, for whatever address they type.
func (d *DevIssuer) Verify(_ context.Context, token string) (Claims, error) {
	pub := d.key.Public()
	return parse(token, func(*jwt.Token) (any, error) { return pub, nil }, rules{issuer: DevIssuerName})
}

// JWKS is the issuer's public key as a JSON Web Key Set.
func (d *DevIssuer) JWKS() map[string]any {
	pub := d.key.Public().(ed25519.PublicKey)
	return map[string]any{"keys": []map[string]any{{
		"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": d.kid,
		"x": base64.RawURLEncoding.EncodeToString(pub),
	}}}
}

// JWKSVerifier checks tokens from an external issuer against its published JWKS, refreshed in the
// background. Tokens must name the configured audience in aud and carry email_verified: true.
type JWKSVerifier struct {
	rules rules
	jwks  *keyfunc.JWKS
}

// NewJWKSVerifier fetches the key set at url and keeps it fresh until ctx ends. audience is
// required: an external issuer serves many applications, and its tokens for them must not open this one.
func NewJWKSVerifier(ctx context.Context, issuer, audience, url string) (*JWKSVerifier, error) {
	if issuer == "" || audience == "" {
		return nil, errors.New("an external OAuth issuer needs both an issuer and an audience")
	}
	jwks, err := keyfunc.Get(url, keyfunc.Options{
		Ctx:               ctx,
		RefreshInterval:   time.Hour,
		RefreshRateLimit:  time.Minute,
		RefreshTimeout:    10 * time.Second,
		RefreshUnknownKID: true,
	})
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", url, err)
	}
	return &JWKSVerifier{rules: rules{issuer: issuer, audience: audience, verifiedEmail: true}, jwks: jwks}, nil
}

// Verify checks a token signed by the external issuer.
func (v *JWKSVerifier) Verify(_ context.Context, token string) (Claims, error) {
	return parse(token, v.jwks.Keyfunc, v.rules)
}
