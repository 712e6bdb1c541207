package expert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/researchd/researchd/store"
)

// editable resolves an expert the caller may change (owner, editors, administrators).
func (s *Service) editable(ctx context.Context, c Caller, ref string) (target, error) {
	if _, ok := s.registry.Get(ref); ok {
		return target{}, fmt.Errorf("built-in experts have no versions: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return target{}, err
	}
	if !t.canEdit(c) {
		return target{}, fmt.Errorf("only the owner and editors may read versions: %w", ErrForbidden)
	}
	return t, nil
}

// Version is one recorded configuration of an expert, as the API lists it.
type Version = store.ExpertVersion

// Versions pages an expert's versions, newest first (editors only).
func (s *Service) Versions(ctx context.Context, c Caller, ref string, req store.PageRequest) (store.Page[Version], error) {
	t, err := s.editable(ctx, c, ref)
	if err != nil {
		return store.Page[Version]{}, err
	}
	return s.st.ListExpertVersions(ctx, t.row.ID, req)
}

// Version reads one version with its snapshot (editors only).
func (s *Service) Version(ctx context.Context, c Caller, ref string, num int) (Version, map[string]any, error) {
	t, err := s.editable(ctx, c, ref)
	if err != nil {
		return Version{}, nil, err
	}
	v, err := s.st.ExpertVersionByNum(ctx, t.row.ID, num)
	if errors.Is(err, store.ErrNotFound) {
		return v, nil, fmt.Errorf("version %d: %w", num, ErrVersionNotFound)
	} else if err != nil {
		return v, nil, err
	}
	var snap map[string]any
	if err := json.Unmarshal([]byte(v.Snapshot), &snap); err != nil {
		return v, nil, fmt.Errorf("decode snapshot: %w", err)
	}
	return v, snap, nil
}

// Restored is the outcome of a restore.
type Restored struct {
	ExpertID      string
	RestoredFrom  int
	NewVersionNum int
}

// Restore brings back the configuration of version num as a new version. The current
// configuration is already the latest version, so it stays restorable. Status, visibility, shares
// and context files are not changed.
func (s *Service) Restore(ctx context.Context, c Caller, ref string, num int) (Restored, error) {
	t, err := s.editable(ctx, c, ref)
	if err != nil {
		return Restored{}, err
	}
	if t.row.ArchivedAt != nil {
		return Restored{}, ErrArchived
	}
	var out Restored
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		row, err := tx.ExpertByID(ctx, t.row.ID, true)
		if err != nil {
			return err
		}
		if row.ArchivedAt != nil {
			return ErrArchived
		}
		v, err := tx.ExpertVersionByNum(ctx, row.ID, num)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("version %d: %w", num, ErrVersionNotFound)
		} else if err != nil {
			return err
		}
		cfg, err := decodeConfig(v.Snapshot) // a snapshot is an Expert; its configuration fields decode as a Config
		if err != nil {
			return err
		}
		if cfg.OutputTemplateFile != nil {
			if _, err := tx.ExpertContextFile(ctx, row.ID, *cfg.OutputTemplateFile); errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%q: %w", *cfg.OutputTemplateFile, ErrContextFileMissing)
			} else if err != nil {
				return err
			}
		}
		if row.Config, err = cfg.encode(); err != nil {
			return err
		}
		row.Name, row.Handle = cfg.Name, Handle(cfg.Name)
		row.VersionNum++
		row.UpdatedAt = s.now()
		if err := tx.SaveExpert(ctx, &row); err != nil {
			return err
		}
		out = Restored{ExpertID: row.ID, RestoredFrom: num, NewVersionNum: row.VersionNum}
		return s.snapshot(ctx, tx, row, SourceRestore, &c.AccountID)
	})
	return out, err
}
