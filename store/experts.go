package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Expert statuses.
const (
	ExpertActive   = "active"
	ExpertBuilding = "building"
)

// Expert is a custom expert. Its configuration (prompt, tools, schemas, forms...) is one JSON
// document in Config, owned by package expert; the columns beside it are what queries filter on.
type Expert struct {
	ID               string `gorm:"type:varchar(36);primaryKey"`
	OwnerID          string `gorm:"type:varchar(36);not null"`
	Slug             string `gorm:"type:varchar(120);not null"` // global, fixed at creation
	Handle           string `gorm:"type:varchar(120);not null"` // the current name as a slug, per owner
	Name             string `gorm:"type:varchar(255);not null"`
	Status           string `gorm:"type:varchar(16);not null"`
	IsPublic         bool   `gorm:"not null;default:false"`
	AllowFreeTierUse bool   `gorm:"not null;default:false"`
	Config           string `gorm:"type:text;not null"`
	VersionNum       int    `gorm:"not null"`
	ArchivedAt       *time.Time
	CreatedAt        time.Time `gorm:"not null"`
	UpdatedAt        time.Time `gorm:"not null"`
}

// ExpertVersion is one restorable snapshot of an expert's configuration.
type ExpertVersion struct {
	ID         string    `gorm:"type:varchar(36);primaryKey"`
	ExpertID   string    `gorm:"type:varchar(36);not null"`
	VersionNum int       `gorm:"not null"`
	Source     string    `gorm:"type:varchar(16);not null"`
	CreatedBy  *string   `gorm:"type:varchar(36)"`
	Snapshot   string    `gorm:"type:text;not null"`
	CreatedAt  time.Time `gorm:"not null"`
}

// ExpertShare grants a user (email), an email domain or a team a role on an expert.
type ExpertShare struct {
	ID            string    `gorm:"type:varchar(36);primaryKey"`
	ExpertID      string    `gorm:"type:varchar(36);not null"`
	PrincipalType string    `gorm:"type:varchar(16);not null"`
	Principal     string    `gorm:"type:varchar(320);not null"`
	Role          string    `gorm:"type:varchar(16);not null"`
	CreatedBy     *string   `gorm:"type:varchar(36)"`
	CreatedAt     time.Time `gorm:"not null"`
	UpdatedAt     time.Time `gorm:"not null"`
}

// ExpertContextFile is a document attached to an expert. Content holds the bytes; CharCount and
// TextMirrored describe the text given to the engine: MirrorText when it was extracted from a
// binary (PDF, Office), else the content itself.
type ExpertContextFile struct {
	ID           string    `gorm:"type:varchar(36);primaryKey"`
	ExpertID     string    `gorm:"type:varchar(36);not null"`
	Name         string    `gorm:"type:varchar(512);not null"`
	Content      []byte    `gorm:"not null"`
	MirrorText   *string   `gorm:"type:text"`
	MediaType    string    `gorm:"type:varchar(255);not null"`
	SizeBytes    int64     `gorm:"not null"`
	CharCount    int64     `gorm:"not null"`
	TextMirrored bool      `gorm:"not null"`
	InRepository bool      `gorm:"not null;default:false"`
	CreatedAt    time.Time `gorm:"not null"`
	UpdatedAt    time.Time `gorm:"not null"`
}

// TeamMember puts an account in a team (share grants to principal_type team match members).
type TeamMember struct {
	TeamID    string    `gorm:"type:varchar(100);primaryKey"`
	AccountID string    `gorm:"type:varchar(36);primaryKey"`
	CreatedAt time.Time `gorm:"not null"`
}

// Grantee is who a caller is for share matching.
type Grantee struct {
	AccountID string
	Email     string // lowercase
	Domain    string // the part after @, lowercase
	Teams     []string
}

// CreateExpert inserts an expert row.
func (s *Store) CreateExpert(ctx context.Context, e *Expert) error {
	// A savepoint when inside a transaction, so a slug collision does not poison the caller's tx.
	return notFound(s.with(ctx).Transaction(func(tx *gorm.DB) error { return tx.Create(e).Error }), "create expert")
}

// SaveExpert writes every column of an existing expert.
func (s *Store) SaveExpert(ctx context.Context, e *Expert) error {
	res := s.with(ctx).Model(&Expert{}).Where("id = ?", e.ID).Select("*").Updates(e)
	if res.Error != nil {
		return notFound(res.Error, "save expert "+e.ID)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("save expert %s: %w", e.ID, ErrNotFound)
	}
	return nil
}

// ExpertByID loads an expert; forUpdate locks its row until the transaction ends (Postgres).
func (s *Store) ExpertByID(ctx context.Context, id string, forUpdate bool) (Expert, error) {
	var e Expert
	q := s.with(ctx)
	if forUpdate {
		q = s.forUpdate(ctx)
	}
	err := q.Where("id = ?", id).Take(&e).Error
	return e, notFound(err, "expert "+id)
}

// ExpertBySlug loads an expert by its global slug.
func (s *Store) ExpertBySlug(ctx context.Context, slug string) (Expert, error) {
	var e Expert
	err := s.with(ctx).Where("slug = ?", slug).Take(&e).Error
	return e, notFound(err, "expert "+slug)
}

// ExpertsByHandle lists an owner's experts whose handle (current name as a slug) is handle, live
// ones first, newest first.
func (s *Store) ExpertsByHandle(ctx context.Context, ownerID, handle string) ([]Expert, error) {
	var es []Expert
	err := s.with(ctx).Where("owner_id = ? AND handle = ?", ownerID, handle).
		Order("CASE WHEN archived_at IS NULL THEN 0 ELSE 1 END").Order("created_at DESC").Find(&es).Error
	if err != nil {
		return nil, fmt.Errorf("experts by handle: %w", err)
	}
	return es, nil
}

// ExpertSlugTaken reports whether an expert already has slug.
func (s *Store) ExpertSlugTaken(ctx context.Context, slug string) (bool, error) {
	var n int64
	if err := s.with(ctx).Model(&Expert{}).Where("slug = ?", slug).Count(&n).Error; err != nil {
		return false, fmt.Errorf("check slug: %w", err)
	}
	return n > 0, nil
}

// sharedWith selects the ids of experts granted to g (user, domain or team grants).
func (s *Store) sharedWith(ctx context.Context, g Grantee) *gorm.DB {
	q := s.with(ctx).Model(&ExpertShare{}).Select("expert_id").
		Where("(principal_type = 'user' AND principal = ?) OR (principal_type = 'domain' AND principal = ?)", g.Email, g.Domain)
	if len(g.Teams) > 0 {
		q = q.Or("principal_type = 'team' AND principal IN ?", g.Teams)
	}
	return q
}

// ListAccessibleExperts pages the live (not archived) experts g owns or is granted, newest first.
func (s *Store) ListAccessibleExperts(ctx context.Context, g Grantee, req PageRequest) (Page[Expert], error) {
	q := s.with(ctx).Model(&Expert{}).Where("archived_at IS NULL").
		Where(s.with(ctx).Where("owner_id = ?", g.AccountID).Or("id IN (?)", s.sharedWith(ctx, g)))
	page, err := paginate(q, req, func(e Expert) Cursor { return Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
	if err != nil {
		return page, fmt.Errorf("list experts: %w", err)
	}
	return page, nil
}

// ListPublicExperts lists every public, active, live expert.
func (s *Store) ListPublicExperts(ctx context.Context) ([]Expert, error) {
	var es []Expert
	err := s.with(ctx).Where("is_public = ? AND status = ? AND archived_at IS NULL", true, ExpertActive).
		Order("created_at DESC").Find(&es).Error
	if err != nil {
		return nil, fmt.Errorf("list public experts: %w", err)
	}
	return es, nil
}

// CreateExpertVersion appends a snapshot.
func (s *Store) CreateExpertVersion(ctx context.Context, v *ExpertVersion) error {
	return notFound(s.with(ctx).Create(v).Error, "create expert version")
}

// ExpertVersionByNum loads one version of an expert.
func (s *Store) ExpertVersionByNum(ctx context.Context, expertID string, num int) (ExpertVersion, error) {
	var v ExpertVersion
	err := s.with(ctx).Where("expert_id = ? AND version_num = ?", expertID, num).Take(&v).Error
	return v, notFound(err, fmt.Sprintf("expert %s version %d", expertID, num))
}

// ListExpertVersions pages an expert's versions, newest (highest number) first. The cursor's ID is
// the last version number shown: numbers, unlike timestamps, never tie.
func (s *Store) ListExpertVersions(ctx context.Context, expertID string, req PageRequest) (Page[ExpertVersion], error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	q := s.with(ctx).Select("id, expert_id, version_num, source, created_by, created_at").Where("expert_id = ?", expertID)
	if req.Cursor != nil {
		n, err := strconv.Atoi(req.Cursor.ID)
		if err != nil {
			return Page[ExpertVersion]{}, fmt.Errorf("%w: not a version cursor", ErrInvalidCursor)
		}
		q = q.Where("version_num < ?", n)
	}
	var rows []ExpertVersion
	if err := q.Order("version_num DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return Page[ExpertVersion]{}, fmt.Errorf("list expert versions: %w", err)
	}
	page := Page[ExpertVersion]{Items: rows}
	if len(rows) > limit {
		page.Items = rows[:limit]
		last := rows[limit-1]
		page.Next = &Cursor{CreatedAt: last.CreatedAt, ID: strconv.Itoa(last.VersionNum)}
	}
	return page, nil
}

// ExpertSharesFor lists an expert's grants, oldest first.
func (s *Store) ExpertSharesFor(ctx context.Context, expertID string) ([]ExpertShare, error) {
	var out []ExpertShare
	if err := s.with(ctx).Where("expert_id = ?", expertID).Order("created_at").Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list expert shares: %w", err)
	}
	return out, nil
}

// UpsertExpertShare creates a grant or changes the role of an existing one; created says which.
func (s *Store) UpsertExpertShare(ctx context.Context, sh *ExpertShare) (created bool, err error) {
	var existing ExpertShare
	err = s.with(ctx).Where("expert_id = ? AND principal_type = ? AND principal = ?", sh.ExpertID, sh.PrincipalType, sh.Principal).Take(&existing).Error
	switch {
	case err == nil:
		existing.Role, existing.UpdatedAt = sh.Role, sh.UpdatedAt
		if err := s.with(ctx).Model(&ExpertShare{}).Where("id = ?", existing.ID).
			Updates(map[string]any{"role": sh.Role, "updated_at": sh.UpdatedAt}).Error; err != nil {
			return false, fmt.Errorf("update expert share: %w", err)
		}
		*sh = existing
		return false, nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return false, fmt.Errorf("read expert share: %w", err)
	}
	if err := s.with(ctx).Create(sh).Error; err != nil {
		return false, notFound(err, "create expert share")
	}
	return true, nil
}

// DeleteExpertShare removes a grant; a missing grant is not an error.
func (s *Store) DeleteExpertShare(ctx context.Context, expertID, principalType, principal string) error {
	err := s.with(ctx).Where("expert_id = ? AND principal_type = ? AND principal = ?", expertID, principalType, principal).Delete(&ExpertShare{}).Error
	if err != nil {
		return fmt.Errorf("delete expert share: %w", err)
	}
	return nil
}

// ExpertContextFiles lists an expert's files by name, without their content.
func (s *Store) ExpertContextFiles(ctx context.Context, expertID string) ([]ExpertContextFile, error) {
	var out []ExpertContextFile
	err := s.with(ctx).Omit("content", "mirror_text").Where("expert_id = ?", expertID).Order("name").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list expert context files: %w", err)
	}
	return out, nil
}

// ExpertContextFile loads one file with its content.
func (s *Store) ExpertContextFile(ctx context.Context, expertID, name string) (ExpertContextFile, error) {
	var f ExpertContextFile
	err := s.with(ctx).Where("expert_id = ? AND name = ?", expertID, name).Take(&f).Error
	return f, notFound(err, "expert context file "+name)
}

// UpsertExpertContextFile adds a file or replaces the content of the file with the same name.
func (s *Store) UpsertExpertContextFile(ctx context.Context, f *ExpertContextFile) error {
	err := s.with(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "expert_id"}, {Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"content", "mirror_text", "media_type", "size_bytes", "char_count", "text_mirrored", "in_repository", "updated_at"}),
	}).Create(f).Error
	return notFound(err, "save expert context file "+f.Name)
}

// AddTeamMember puts an account in a team (idempotent).
func (s *Store) AddTeamMember(ctx context.Context, teamID, accountID string, now time.Time) error {
	err := s.with(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&TeamMember{TeamID: teamID, AccountID: accountID, CreatedAt: now}).Error
	if err != nil {
		return fmt.Errorf("add team member: %w", err)
	}
	return nil
}

// TeamIDsOf lists the teams an account belongs to.
func (s *Store) TeamIDsOf(ctx context.Context, accountID string) ([]string, error) {
	var ids []string
	if err := s.with(ctx).Model(&TeamMember{}).Where("account_id = ?", accountID).Order("team_id").Pluck("team_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("teams of account: %w", err)
	}
	return ids, nil
}
