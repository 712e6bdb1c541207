package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// CreateAPIKey stores a new key row (its ID and CreatedAt are filled in when empty).
func (s *Store) CreateAPIKey(ctx context.Context, k *APIKey) error {
	if err := s.with(ctx).Create(k).Error; err != nil {
		return notFound(err, "create api key")
	}
	return nil
}

// KeyWithAccount is an API key read together with the account it belongs to.
type KeyWithAccount struct {
	APIKey
	Account Account `gorm:"foreignKey:AccountID"`
}

// TableName keeps KeyWithAccount on the api_keys table.
func (KeyWithAccount) TableName() string { return "api_keys" }

// APIKeysByPrefix returns the keys whose first 8 characters are prefix, each with its account, in one
// query (authentication runs it on every request); the caller compares hashes.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]KeyWithAccount, error) {
	var keys []KeyWithAccount
	if err := s.with(ctx).InnerJoins("Account").Where("api_keys.prefix = ?", prefix).Find(&keys).Error; err != nil {
		return nil, fmt.Errorf("keys by prefix: %w", err)
	}
	return keys, nil
}

// ListAPIKeys pages an account's keys newest first.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, req PageRequest) (Page[APIKey], error) {
	q := s.with(ctx).Model(&APIKey{}).Where("account_id = ?", accountID)
	page, err := paginate(q, req, func(k APIKey) Cursor { return Cursor{CreatedAt: k.CreatedAt, ID: k.ID} })
	if err != nil {
		return page, fmt.Errorf("list api keys: %w", err)
	}
	return page, nil
}

// RevokeAPIKey revokes an account's key; revoking twice keeps the first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID string, at time.Time) error {
	res := s.with(ctx).Model(&APIKey{}).Where("id = ? AND account_id = ? AND revoked_at IS NULL", keyID, accountID).
		Update("revoked_at", at)
	if res.Error != nil {
		return fmt.Errorf("revoke api key %s: %w", keyID, res.Error)
	}
	if res.RowsAffected == 1 {
		return nil
	}
	// Nothing changed: revoked already, or not a key of this account.
	var k APIKey
	err := s.with(ctx).Select("id").Where("id = ? AND account_id = ?", keyID, accountID).Take(&k).Error
	return notFound(err, "api key "+keyID)
}

// APIKeyUsable reports whether the key with this hash may still be used: it exists and is not
// revoked. Webhooks check it before signing with a key sealed earlier.
func (s *Store) APIKeyUsable(ctx context.Context, hash string) (bool, error) {
	var n int64
	err := s.with(ctx).Model(&APIKey{}).Where("hash = ? AND revoked_at IS NULL", hash).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("api key usable: %w", err)
	}
	return n > 0, nil
}

// KeyTouchInterval is how stale last_used_at may get: a hot key writes at most once per interval.
const KeyTouchInterval = time.Minute

// TouchDue reports whether a use of k at at is worth recording: its last_used_at (as k was read) is
// unset or older than KeyTouchInterval. TouchAPIKey writes only then; a cache of last_used_at
// (the server's key cache) follows the write by the same rule.
func (k APIKey) TouchDue(at time.Time) bool {
	return k.LastUsedAt == nil || k.LastUsedAt.Before(at.Add(-KeyTouchInterval))
}

// TouchAPIKey records use of a key at at. A key used within KeyTouchInterval (as k was read) costs no
// query at all; otherwise the update is conditional, so concurrent requests write at most once.
func (s *Store) TouchAPIKey(ctx context.Context, k APIKey, at time.Time) error {
	if !k.TouchDue(at) {
		return nil
	}
	err := s.with(ctx).Model(&APIKey{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", k.ID, at.Add(-KeyTouchInterval)).
		Update("last_used_at", at).Error
	if err != nil {
		return fmt.Errorf("touch api key %s: %w", k.ID, err)
	}
	return nil
}

// ScopeList splits a stored scope string.
func (k APIKey) ScopeList() []string { return strings.Fields(k.Scopes) }
