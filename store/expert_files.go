package store

import (
	"context"
	"fmt"
)

// ExpertContextFilesWithContent lists an expert's files by name, content included.
func (s *Store) ExpertContextFilesWithContent(ctx context.Context, expertID string) ([]ExpertContextFile, error) {
	var out []ExpertContextFile
	if err := s.with(ctx).Where("expert_id = ?", expertID).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("read expert context files: %w", err)
	}
	return out, nil
}

// DeleteExpertContextFile removes one file; ErrNotFound when no file has the name.
func (s *Store) DeleteExpertContextFile(ctx context.Context, expertID, name string) error {
	res := s.with(ctx).Where("expert_id = ? AND name = ?", expertID, name).Delete(&ExpertContextFile{})
	if res.Error != nil {
		return fmt.Errorf("delete expert context file %s: %w", name, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("expert context file %s: %w", name, ErrNotFound)
	}
	return nil
}

// MarkExpertContextFilesInRepository records that the named files are committed to the expert's
// repository.
func (s *Store) MarkExpertContextFilesInRepository(ctx context.Context, expertID string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	err := s.with(ctx).Model(&ExpertContextFile{}).Where("expert_id = ? AND name IN ?", expertID, names).
		UpdateColumn("in_repository", true).Error
	if err != nil {
		return fmt.Errorf("mark expert context files committed: %w", err)
	}
	return nil
}
