package expert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
)

// SkillLoader gives a run the full SKILL.md of an expert's linked skills. *skill.Service
// implements it; a SkillCatalog passed in Options that does not gives runs skill names only.
type SkillLoader interface {
	Load(ctx context.Context, accountID string, names []string) ([]skill.Skill, error)
}

// depthEffort maps a custom expert's default_depth to the effort a run uses when the caller names none.
var depthEffort = map[string]string{"quick": "low", "thorough": "medium", "ultra_deep": "high"}

// Runner adapts the service to jobs.Experts: it resolves an expert_id of POST /research.
type Runner struct{ svc *Service }

var _ jobs.Experts = Runner{}

// Runner returns the jobs seam of the service.
func (s *Service) Runner() Runner { return Runner{svc: s} }

// Resolve finds the expert accountID may run by registry id, UUID, slug or handle: built-in
// experts, and active, unarchived custom experts it owns, is granted, or that are public.
// Drafts (building) and archived experts are not runnable: jobs.ErrExpertNotFound. A custom expert
// the account may see but whose tier may not run it is jobs.TierRefusal (tierAllows). Every
// path that runs an expert (research, batches and their rows, loops, campaigns and their workers,
// A2A, and every run at dispatch) resolves it here, so this is the one place the rule is kept.
// Context files are listed, not read: each is read when the run copies it.
func (r Runner) Resolve(ctx context.Context, accountID, id string) (jobs.Expert, error) {
	s := r.svc
	if b, ok := s.registry.Get(id); ok {
		ex := runConfig(b.ID, nil, b.Config)
		ex.DefaultEffort = b.DefaultEffort
		// Registry skills are the catalogue's: a caller's own skill of the same name does not replace them.
		if err := s.loadSkills(ctx, "", b.SkillNames, &ex); err != nil {
			return jobs.Expert{}, err
		}
		return ex, nil
	}
	a, err := s.st.AccountByID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return jobs.Expert{}, fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return jobs.Expert{}, err
	}
	t, err := s.find(ctx, Caller{AccountID: a.ID, Email: a.Email, IsAdmin: a.IsAdmin}, id)
	if errors.Is(err, ErrNotFound) {
		return jobs.Expert{}, fmt.Errorf("expert %q: %w", id, jobs.ErrExpertNotFound)
	} else if err != nil {
		return jobs.Expert{}, err
	}
	if t.row.ArchivedAt != nil || t.row.Status != store.ExpertActive {
		return jobs.Expert{}, fmt.Errorf("expert %q is archived or a draft: %w", id, jobs.ErrExpertNotFound)
	}
	if !tierAllows(a, t) {
		return jobs.Expert{}, jobs.TierRefusal(id, a.Tier)
	}
	cfg, err := decodeConfig(t.row.Config)
	if err != nil {
		return jobs.Expert{}, err
	}
	version := t.row.VersionNum
	ex := runConfig(t.row.ID, &version, cfg)
	if cfg.DefaultDepth != nil {
		ex.DefaultEffort = depthEffort[*cfg.DefaultDepth]
	}
	// Skills were validated against the owner's own skills and the catalogue: load them as the owner.
	if err := s.loadSkills(ctx, t.row.OwnerID, cfg.SkillNames, &ex); err != nil {
		return jobs.Expert{}, err
	}
	files, err := s.st.ExpertContextFiles(ctx, t.row.ID)
	if err != nil {
		return jobs.Expert{}, err
	}
	for _, f := range files {
		expertID, name := t.row.ID, f.Name
		ex.ContextFiles = append(ex.ContextFiles, jobs.InputFile{Name: name, Open: func(ctx context.Context) (io.ReadCloser, error) {
			full, err := s.st.ExpertContextFile(ctx, expertID, name)
			if err != nil {
				return nil, fmt.Errorf("expert context file %s: %w", name, err)
			}
			return io.NopCloser(bytes.NewReader(full.Content)), nil
		}})
	}
	return ex, nil
}

// tierAllows applies allow_free_tier_use: a free-tier account may run a custom expert only when the
// flag is on, unless the expert is its own work (owner or editor) or it is a service administrator
// (who sets the flag). Built-in experts have no flag and are open to every tier.
func tierAllows(a store.Account, t target) bool {
	return a.Tier != store.TierFree || t.row.AllowFreeTierUse || a.IsAdmin || t.role == RoleOwner || t.role == RoleEditor
}

// runConfig is the part of a run's expert that comes straight from its configuration.
func runConfig(id string, version *int, cfg Config) jobs.Expert {
	return jobs.Expert{
		ID: id, Name: cfg.Name, Version: version, SystemPrompt: cfg.SystemPrompt,
		ToolNames: cfg.MCPToolNames, RequiredTools: cfg.RequiredToolCalls,
		OutputSchema: cfg.OutputSchema, MaxCostUSD: cfg.MaxCostUSD,
	}
}

func (s *Service) loadSkills(ctx context.Context, accountID string, names []string, ex *jobs.Expert) error {
	if len(names) == 0 {
		return nil
	}
	if s.skillLoader == nil {
		// Only a service wired without the skill service (tests with a name-only catalogue): the
		// engine still learns which skills are linked.
		for _, n := range names {
			ex.Skills = append(ex.Skills, engine.Skill{Name: n})
		}
		return nil
	}
	// A linked skill can disappear after the expert was saved (its owner deleted it); the run goes
	// on with the others rather than not at all.
	var unknown []string
	if s.skills != nil {
		var err error
		if unknown, err = s.skills.Unknown(ctx, accountID, names); err != nil {
			return fmt.Errorf("expert %s skills: %w", ex.ID, err)
		}
	}
	known := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(unknown, n) })
	if len(unknown) > 0 {
		s.log.WarnContext(ctx, "linked skills no longer exist; running without them", "expert_id", ex.ID, "skills", unknown)
	}
	got, err := s.skillLoader.Load(ctx, accountID, known)
	if err != nil {
		return fmt.Errorf("expert %s skills: %w", ex.ID, err)
	}
	for _, sk := range got {
		ex.Skills = append(ex.Skills, engine.Skill{Name: sk.Name, Description: sk.Description, Content: sk.Content})
	}
	return nil
}
