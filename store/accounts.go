package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"
)

// Tiers, lowest first.
const (
	TierFree       = "free"
	TierPro        = "pro"
	TierEnterprise = "enterprise"
)

// AccountByID loads an account.
func (s *Store) AccountByID(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.with(ctx).Where("id = ?", id).Take(&a).Error
	return a, notFound(err, "account "+id)
}

// AccountByEmail loads an account by its (case-insensitive) email.
func (s *Store) AccountByEmail(ctx context.Context, email string) (Account, error) {
	var a Account
	err := s.with(ctx).Where("email = ?", normalizeEmail(email)).Take(&a).Error
	return a, notFound(err, "account "+email)
}

// EnsureAccount returns the account for email, creating it with tier and admin when missing.
// Concurrent callers for one email all get the same account. It reads first: every OAuth request
// calls it, and only the first one for an email should write.
func (s *Store) EnsureAccount(ctx context.Context, email, tier string, admin bool) (Account, bool, error) {
	email = normalizeEmail(email)
	if email == "" {
		return Account{}, false, errors.New("ensure account: empty email")
	}
	if a, err := s.AccountByEmail(ctx, email); !errors.Is(err, ErrNotFound) {
		return a, false, err
	}
	if tier == "" {
		tier = TierFree
	}
	a := Account{ID: uuid.NewString(), Email: email, Tier: tier, IsAdmin: admin}
	res := s.with(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoNothing: true}).Create(&a)
	if res.Error != nil {
		return Account{}, false, fmt.Errorf("create account %s: %w", email, res.Error)
	}
	if res.RowsAffected == 1 {
		return a, true, nil
	}
	existing, err := s.AccountByEmail(ctx, email)
	return existing, false, err
}

// UpdateAccount sets the tier and admin flag of an account.
func (s *Store) UpdateAccount(ctx context.Context, id, tier string, admin bool) error {
	err := s.with(ctx).Model(&Account{}).Where("id = ?", id).Updates(map[string]any{"tier": tier, "is_admin": admin}).Error
	return notFound(err, "update account")
}

// CountAccounts reports how many accounts exist (zero on a fresh database).
func (s *Store) CountAccounts(ctx context.Context) (int64, error) {
	var n int64
	if err := s.with(ctx).Model(&Account{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count accounts: %w", err)
	}
	return n, nil
}

func normalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }
