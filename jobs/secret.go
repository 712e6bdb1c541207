package jobs

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SecretFileName is the server secret generated in RESEARCH_DATA_DIR when RESEARCH_SECRET_KEY is unset.
const SecretFileName = "research-secret.key"

// Sealer encrypts the API keys that sign a job's webhooks and the accounts' webhook secrets. The
// specification signs webhooks with the caller's API key, but keys are otherwise stored only as
// hashes; so the key is kept sealed with AES-256-GCM under a server secret, bound to its job id
// (associated data), opened only by the webhook worker and deleted once the job's deliveries are
// final. Losing or changing the secret makes pending webhooks unsignable (they are dropped and
// recorded as such) and the accounts' webhook secrets unreadable (deliveries go without
// webhook-signature until the account rotates), nothing else.
type Sealer struct{ aead cipher.AEAD }

// NewSealer derives the AES-256 key from secret (SHA-256, so any non-empty string works).
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) == 0 {
		return nil, errors.New("sealer: empty secret")
	}
	key := sha256.Sum256(secret)
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// LoadSealer uses secret when set (RESEARCH_SECRET_KEY), else the file at secretFile when set
// (RESEARCH_SECRET_KEY_FILE: a file outside the data folder, such as a mounted secret; trailing
// whitespace is ignored), else the key file in dataDir, generating it (32 random bytes, mode 0600)
// on first use. Several processes sharing dataDir agree on one file.
func LoadSealer(secret, secretFile, dataDir string) (*Sealer, error) {
	switch {
	case secret != "" && secretFile != "":
		return nil, errors.New("set RESEARCH_SECRET_KEY or RESEARCH_SECRET_KEY_FILE, not both")
	case secret != "":
		return NewSealer([]byte(secret))
	case secretFile != "":
		b, err := os.ReadFile(secretFile)
		if err != nil {
			return nil, fmt.Errorf("RESEARCH_SECRET_KEY_FILE: %w", err)
		}
		b = bytes.TrimRight(b, " \t\r\n")
		if len(b) == 0 {
			return nil, fmt.Errorf("RESEARCH_SECRET_KEY_FILE: %s is empty", secretFile)
		}
		return NewSealer(b)
	}
	path := filepath.Join(dataDir, SecretFileName)
	if b, err := os.ReadFile(path); err == nil {
		return NewSealer(b)
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate server secret: %w", err)
	}
	key := []byte(base64.RawURLEncoding.EncodeToString(raw))
	// Write a temporary file and hard-link it into place: the link fails if another process won the
	// race, and then its complete file is read instead of a half-written one.
	tmp, err := os.CreateTemp(dataDir, SecretFileName+".*")
	if err != nil {
		return nil, fmt.Errorf("write server secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write server secret: %w", err)
	}
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write server secret: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write server secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !os.IsExist(err) {
		return nil, fmt.Errorf("install server secret: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return NewSealer(b)
}

// Seal encrypts plaintext bound to context (the job id); the result is base64url(nonce || ciphertext).
func (s *Sealer) Seal(plaintext, context string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, []byte(plaintext), []byte(context))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open reverses Seal; a wrong secret, context or tampered value is an error.
func (s *Sealer) Open(sealed, context string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("open sealed value: malformed")
	}
	n := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, b[:n], b[n:], []byte(context))
	if err != nil {
		return "", fmt.Errorf("open sealed value: %w", err)
	}
	return string(pt), nil
}
