package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// ResearchRevisionFile is one file of a published revision: its manifest entry. The content is in
// the blob store under its SHA-256; BlobID is the git blob id in the runner's working copy.
// LastCommitSHA and LastModified name the revision that last changed the file.
type ResearchRevisionFile struct {
	JobID         string `gorm:"type:varchar(36);primaryKey"`
	CommitSHA     string `gorm:"column:commit_sha;type:varchar(40);primaryKey"`
	Seq           int    `gorm:"primaryKey;autoIncrement:false"`
	Path          string `gorm:"type:text;not null"`
	Size          int64  `gorm:"not null"`
	ContentType   string `gorm:"type:varchar(255);not null"`
	BlobID        string `gorm:"type:varchar(40);not null"`
	SHA256        string `gorm:"column:sha256;type:varchar(64);not null"`
	LastCommitSHA string `gorm:"column:last_commit_sha;type:varchar(40);not null"`
	LastModified  time.Time
}

// AddRevisionFiles records a revision's manifest; rows already recorded are left as they are, so a
// retried checkpoint or two processes backfilling the same revision agree.
func (s *Store) AddRevisionFiles(ctx context.Context, files []ResearchRevisionFile) error {
	if len(files) == 0 {
		return nil
	}
	if err := s.with(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(files, 200).Error; err != nil {
		return fmt.Errorf("add revision files of %s: %w", files[0].JobID, err)
	}
	return nil
}

// StoreRevisionFiles records the manifest of a revision recorded earlier without one and marks it
// stored, in one transaction.
func (s *Store) StoreRevisionFiles(ctx context.Context, jobID, sha string, files []ResearchRevisionFile) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.AddRevisionFiles(ctx, files); err != nil {
			return err
		}
		err := tx.with(ctx).Model(&ResearchRevision{}).Where("job_id = ? AND sha = ?", jobID, sha).Update("files_stored", true).Error
		if err != nil {
			return fmt.Errorf("mark revision %s of %s stored: %w", sha, jobID, err)
		}
		return nil
	})
}

// RevisionFiles lists a revision's files in path order.
func (s *Store) RevisionFiles(ctx context.Context, jobID, sha string) ([]ResearchRevisionFile, error) {
	var files []ResearchRevisionFile
	if err := s.with(ctx).Where("job_id = ? AND commit_sha = ?", jobID, sha).Order("seq").Find(&files).Error; err != nil {
		return nil, fmt.Errorf("files of revision %s of %s: %w", sha, jobID, err)
	}
	return files, nil
}

// RevisionFile is one file of a revision; ErrNotFound when the revision has no file at path.
func (s *Store) RevisionFile(ctx context.Context, jobID, sha, path string) (ResearchRevisionFile, error) {
	var f ResearchRevisionFile
	err := s.with(ctx).Where("job_id = ? AND commit_sha = ? AND path = ?", jobID, sha, path).Take(&f).Error
	return f, notFound(err, "file "+path+" of revision "+sha)
}

// LatestRevision is a job's newest revision; ErrNotFound when it has none.
func (s *Store) LatestRevision(ctx context.Context, jobID string) (ResearchRevision, error) {
	var r ResearchRevision
	err := s.with(ctx).Where("job_id = ?", jobID).Order("ordinal DESC").Take(&r).Error
	return r, notFound(err, "latest revision of "+jobID)
}

// RevisionsWithPrefix lists up to limit revisions of a job whose commit id starts with prefix (hex
// digits only: the caller checks, so the prefix holds no LIKE wildcard).
func (s *Store) RevisionsWithPrefix(ctx context.Context, jobID, prefix string, limit int) ([]ResearchRevision, error) {
	q := s.with(ctx).Where("job_id = ?", jobID)
	if len(prefix) == 40 {
		q = q.Where("sha = ?", prefix)
	} else {
		q = q.Where("sha LIKE ?", prefix+"%")
	}
	var revs []ResearchRevision
	if err := q.Order("ordinal").Limit(limit).Find(&revs).Error; err != nil {
		return nil, fmt.Errorf("revisions of %s starting %s: %w", jobID, prefix, err)
	}
	return revs, nil
}
