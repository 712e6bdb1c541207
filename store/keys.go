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

// APIKeysByPrefix returns the keys whose first 8 characters are prefix; the caller compares hashes.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]APIKey, error) {
	var keys []APIKey
	if err := s.with(ctx).Where("prefix = ?", prefix).Find(&keys).Error; err != nil {
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
	var k APIKey
	err := s.with(ctx).Where("id = ? AND account_id = ?", keyID, accountID).Take(&k).Error
	if err != nil {
		return notFound(err, "api key "+keyID)
	}
	if k.RevokedAt != nil {
		return nil
	}
	return s.with(ctx).Model(&APIKey{}).Where("id = ? AND revoked_at IS NULL", keyID).Update("revoked_at", at).Error
}

// TouchAPIKey records use of a key, at most once a minute so hot keys do not write on every request.
func (s *Store) TouchAPIKey(ctx context.Context, keyID string, at time.Time) error {
	return s.with(ctx).Model(&APIKey{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", keyID, at.Add(-time.Minute)).
		Update("last_used_at", at).Error
}

// ScopeList splits a stored scope string.
func (k APIKey) ScopeList() []string { return strings.Fields(k.Scopes) }
