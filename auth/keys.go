// Package auth owns credentials: API key minting and hashing, the principal of a request, and OAuth
// access-token verification (the built-in development issuer or an external issuer's JWKS).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// KeyPrefix starts every API key.
const KeyPrefix = "rsk-"

// NewKey is a freshly minted API key: the secret for the caller and what the store keeps.
type NewKey struct {
	Secret string // rsk- + 43 base64url characters; shown once
	Prefix string // first 8 characters
	Last4  string
	Hash   string // hex SHA-256 of Secret
}

// MintKey makes a key from 32 random bytes.
func MintKey() NewKey {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	secret := KeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return NewKey{Secret: secret, Prefix: secret[:8], Last4: secret[len(secret)-4:], Hash: HashKey(secret)}
}

// HashKey is what the store keeps of a secret. Keys carry 256 random bits, so a fast hash is enough.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeKey reports whether a bearer token has the API key shape (rsk- + 43 base64url characters).
func LooksLikeKey(token string) bool {
	if !strings.HasPrefix(token, KeyPrefix) || len(token) != len(KeyPrefix)+43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token[len(KeyPrefix):])
	return err == nil
}

// HashMatches compares a secret against a stored hash in constant time.
func HashMatches(secret, storedHash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashKey(secret)), []byte(storedHash)) == 1
}
