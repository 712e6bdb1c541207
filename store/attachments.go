package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Attachment statuses.
const (
	AttachmentPending = "pending_upload"
	AttachmentReady   = "ready"
)

// Attachment is a set of uploaded input files owned by one account. A pending_upload attachment is a
// reservation for a direct upload: it carries the SHA-256 of its one-time upload token (never the
// token) and expires; once the bytes land it is ready, without token or expiry.
type Attachment struct {
	ID              string     `gorm:"type:varchar(36);primaryKey"`
	AccountID       string     `gorm:"type:varchar(36);not null;index:idx_attachments_account_created,priority:1"`
	Status          string     `gorm:"type:varchar(16);not null"`
	UploadTokenHash *string    `gorm:"type:char(64);uniqueIndex"`
	ExpiresAt       *time.Time `gorm:"index"`
	CreatedAt       time.Time  `gorm:"not null;index:idx_attachments_account_created,priority:2"`
	UpdatedAt       time.Time  `gorm:"not null"`

	Files []AttachmentFile `gorm:"foreignKey:AttachmentID"`
}

// AttachmentFile is one file of an attachment; its bytes live in blob storage under BlobKey (empty
// while the attachment is pending_upload).
type AttachmentFile struct {
	ID           string    `gorm:"type:varchar(36);primaryKey"`
	AttachmentID string    `gorm:"type:varchar(36);not null"`
	Position     int       `gorm:"not null"`
	Filename     string    `gorm:"type:varchar(255);not null"`
	ContentType  string    `gorm:"type:varchar(255);not null"`
	SizeBytes    int64     `gorm:"not null"`
	BlobKey      string    `gorm:"type:varchar(200);not null"`
	CreatedAt    time.Time `gorm:"not null"`
}

// Usable reports whether jobs may use the attachment: only once its bytes have landed.
func (a Attachment) Usable() bool { return a.Status == AttachmentReady }

// Expired reports whether a pending reservation has run out at now (ready attachments never expire).
func (a Attachment) Expired(now time.Time) bool {
	return a.Status == AttachmentPending && a.ExpiresAt != nil && !now.Before(*a.ExpiresAt)
}

// CreateAttachment stores an attachment with its files (a.Files), in one transaction: GORM inserts
// the files with it inside its default write transaction.
func (s *Store) CreateAttachment(ctx context.Context, a *Attachment) error {
	return notFound(s.with(ctx).Create(a).Error, "create attachment")
}

// withFiles loads attachments with their files in upload order.
func (s *Store) withFiles(ctx context.Context) *gorm.DB {
	return s.with(ctx).Preload("Files", func(db *gorm.DB) *gorm.DB { return db.Order("position") })
}

// AttachmentByID returns an attachment with its files in upload order.
func (s *Store) AttachmentByID(ctx context.Context, id string) (Attachment, error) {
	var a Attachment
	err := s.withFiles(ctx).Where("id = ?", id).Take(&a).Error
	return a, notFound(err, "attachment "+id)
}

// AttachmentsByIDs returns the attachments among ids that exist, with their files, keyed by id.
func (s *Store) AttachmentsByIDs(ctx context.Context, ids []string) (map[string]Attachment, error) {
	var rows []Attachment
	if len(ids) == 0 {
		return map[string]Attachment{}, nil
	}
	err := s.withFiles(ctx).Where("id IN ?", ids).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("attachments by ids: %w", err)
	}
	out := make(map[string]Attachment, len(rows))
	for _, a := range rows {
		out[a.ID] = a
	}
	return out, nil
}

// ListAttachments returns one page of an account's attachments with their files, newest first.
// Pending reservations whose time ran out at now are left out: they are gone, only not yet purged.
func (s *Store) ListAttachments(ctx context.Context, accountID string, now time.Time, req PageRequest) (Page[Attachment], error) {
	q := s.withFiles(ctx).Model(&Attachment{}).Where("account_id = ?", accountID).
		Where("status <> ? OR expires_at IS NULL OR expires_at > ?", AttachmentPending, now)
	page, err := paginate(q, req, func(a Attachment) Cursor { return Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
	if err != nil {
		return page, fmt.Errorf("list attachments: %w", err)
	}
	return page, nil
}

// AttachmentByUploadToken returns the attachment holding the token hash (pending or not).
func (s *Store) AttachmentByUploadToken(ctx context.Context, tokenHash string) (Attachment, error) {
	var a Attachment
	err := s.with(ctx).Where("upload_token_hash = ?", tokenHash).Take(&a).Error
	return a, notFound(err, "attachment by upload token")
}

// CompleteUpload marks a pending attachment ready and consumes its token, recording where the bytes
// of its single file are. It succeeds for exactly one caller per token: ErrConflict when the
// attachment is no longer pending with that token (consumed meanwhile, or deleted).
func (s *Store) CompleteUpload(ctx context.Context, id, tokenHash, blobKey string, at time.Time) error {
	return s.InTx(ctx, func(tx *Store) error {
		res := tx.with(ctx).Model(&Attachment{}).
			Where("id = ? AND status = ? AND upload_token_hash = ?", id, AttachmentPending, tokenHash).
			Updates(map[string]any{"status": AttachmentReady, "upload_token_hash": nil, "expires_at": nil, "updated_at": at})
		if res.Error != nil {
			return fmt.Errorf("complete upload %s: %w", id, res.Error)
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("complete upload %s: %w", id, ErrConflict)
		}
		if err := tx.with(ctx).Model(&AttachmentFile{}).Where("attachment_id = ?", id).Update("blob_key", blobKey).Error; err != nil {
			return fmt.Errorf("complete upload %s: %w", id, err)
		}
		return nil
	})
}

// DeleteAttachment removes an attachment and its file rows, returning the rows so the caller can
// delete their bytes. ErrNotFound when it does not exist.
func (s *Store) DeleteAttachment(ctx context.Context, id string) ([]AttachmentFile, error) {
	var files []AttachmentFile
	err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.with(ctx).Where("attachment_id = ?", id).Order("position").Find(&files).Error; err != nil {
			return fmt.Errorf("delete attachment %s: %w", id, err)
		}
		if err := tx.with(ctx).Where("attachment_id = ?", id).Delete(&AttachmentFile{}).Error; err != nil {
			return fmt.Errorf("delete attachment %s files: %w", id, err)
		}
		res := tx.with(ctx).Where("id = ?", id).Delete(&Attachment{})
		if res.Error != nil {
			return fmt.Errorf("delete attachment %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("attachment %s: %w", id, ErrNotFound)
		}
		return nil
	})
	return files, err
}

// PurgeExpiredUploads discards pending_upload reservations whose time ran out before now; reserved
// uploads have no stored bytes yet, so there is nothing to delete in blob storage.
func (s *Store) PurgeExpiredUploads(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.InTx(ctx, func(tx *Store) error {
		expired := tx.with(ctx).Model(&Attachment{}).Select("id").Where("status = ? AND expires_at <= ?", AttachmentPending, now)
		if err := tx.with(ctx).Where("attachment_id IN (?)", expired).Delete(&AttachmentFile{}).Error; err != nil {
			return fmt.Errorf("purge expired uploads: %w", err)
		}
		res := tx.with(ctx).Where("status = ? AND expires_at <= ?", AttachmentPending, now).Delete(&Attachment{})
		if res.Error != nil {
			return fmt.Errorf("purge expired uploads: %w", res.Error)
		}
		n = res.RowsAffected
		return nil
	})
	return n, err
}
