package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Skill is a SKILL.md authored by an account; names are unique per account. Content is the full
// SKILL.md; Description and Category repeat its front matter so lists need not parse it.
type Skill struct {
	ID          string    `gorm:"type:varchar(36);primaryKey"`
	AccountID   string    `gorm:"type:varchar(36);not null"`
	Name        string    `gorm:"type:varchar(64);not null"`
	Description string    `gorm:"type:varchar(1024);not null"`
	Category    string    `gorm:"type:varchar(100);not null"`
	Content     string    `gorm:"type:text;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// SkillSummaries returns an account's skills without their content, by name.
func (s *Store) SkillSummaries(ctx context.Context, accountID string) ([]Skill, error) {
	var rows []Skill
	err := s.with(ctx).Select("id", "account_id", "name", "description", "category", "created_at", "updated_at").
		Where("account_id = ?", accountID).Order("name").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("skills of account: %w", err)
	}
	return rows, nil
}

// SkillsByNames returns the account's skills among names, with their content, keyed by name.
func (s *Store) SkillsByNames(ctx context.Context, accountID string, names []string) (map[string]Skill, error) {
	out := map[string]Skill{}
	if len(names) == 0 {
		return out, nil
	}
	var rows []Skill
	if err := s.with(ctx).Where("account_id = ? AND name IN ?", accountID, names).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("skills by names: %w", err)
	}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out, nil
}

// PutSkill writes the account's skill of sk.Name: it replaces the one of that name (created false)
// or inserts it (created true). Concurrent writers of one new name end with one row: the loser of
// the insert race overwrites instead.
func (s *Store) PutSkill(ctx context.Context, sk Skill, now time.Time) (created bool, err error) {
	for attempt := 0; ; attempt++ {
		created, err = s.putSkill(ctx, sk, now)
		if errors.Is(err, ErrConflict) && attempt == 0 {
			continue
		}
		return created, err
	}
}

func (s *Store) putSkill(ctx context.Context, sk Skill, now time.Time) (bool, error) {
	res := s.with(ctx).Model(&Skill{}).Where("account_id = ? AND name = ?", sk.AccountID, sk.Name).
		Updates(map[string]any{"description": sk.Description, "category": sk.Category, "content": sk.Content, "updated_at": now})
	if res.Error != nil {
		return false, fmt.Errorf("update skill %s: %w", sk.Name, res.Error)
	}
	if res.RowsAffected > 0 {
		return false, nil
	}
	sk.ID, sk.CreatedAt, sk.UpdatedAt = uuid.NewString(), now, now
	if err := s.with(ctx).Create(&sk).Error; err != nil {
		return false, notFound(err, "create skill "+sk.Name)
	}
	return true, nil
}
