package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/store"
)

// runContextDir is where a run's expert context files are copied: outside the workspace, so they
// are read as sources but never committed, and removed when the run ends.
func (s *Service) runContextDir(runID string) string {
	return filepath.Join(s.cfg.DataDir, "run-context", runID)
}

// applyExpert gives a run the expert its job runs as: instructions, skills, granted tools and
// required tool calls, context files (copied into a per-run folder), the output schema when the
// caller sent none, and the spend ceiling; it records the expert's version on the job. The
// returned cleanup removes the copied files. A job's expert that is gone (archived, unshared) fails
// the run with expert_unavailable.
func (s *Service) applyExpert(ctx context.Context, j store.ResearchJob, runID string, in *engine.Input, sk *sink) (func(), error) {
	noop := func() {}
	if j.ExpertID == nil {
		return noop, nil
	}
	if s.experts == nil {
		return noop, &engine.Error{Code: "expert_unavailable", Message: "experts are not available on this server"}
	}
	ex, err := s.experts.Resolve(ctx, j.AccountID, expertRef(j))
	var te *ExpertTierError
	switch {
	case errors.Is(err, ErrExpertNotFound):
		return noop, &engine.Error{Code: "expert_unavailable", Message: fmt.Sprintf("the expert %q can no longer be run (archived, a draft, or no longer shared)", *j.ExpertID)}
	case errors.As(err, &te):
		// The account's tier or the expert's allow_free_tier_use changed after the job was accepted.
		return noop, &engine.Error{Code: CodeForbidden, Message: te.Error()}
	case err != nil:
		return noop, err
	}
	in.Expert = &engine.ExpertInfo{ID: ex.ID, Name: ex.Name, Version: ex.Version}
	in.SystemPrompt, in.Skills, in.MaxCostUSD, in.RequiredTools = ex.SystemPrompt, ex.Skills, ex.MaxCostUSD, ex.RequiredTools
	if in.JSONSchema == nil {
		in.JSONSchema = ex.OutputSchema // the caller's json_schema wins
	}
	if len(ex.ToolNames) > 0 {
		unavailable := ex.ToolNames
		if s.tools != nil {
			in.Tools, unavailable = s.tools.Granted(ctx, ex.ToolNames)
			in.ToolCaller = s.tools
		}
		if len(unavailable) > 0 {
			err := sk.Event(ctx, engine.Event{Kind: engine.KindStatus, Title: "Tools unavailable",
				Content: "Granted tools that cannot be offered to this run (unknown, or their MCP server is unreachable): " + strings.Join(unavailable, ", "),
				Data:    map[string]any{"tools": unavailable}})
			if err != nil {
				return noop, err
			}
		}
	}
	cleanup := noop
	if len(ex.ContextFiles) > 0 {
		dir := s.runContextDir(runID)
		cleanup = func() {
			if err := os.RemoveAll(dir); err != nil {
				s.log.Warn("remove run context files", "dir", dir, "error", err)
			}
		}
		if err := s.copyContext(ctx, dir, ex.ContextFiles); err != nil {
			cleanup()
			return noop, err
		}
		in.ContextDirs = append(in.ContextDirs, dir)
	}
	in.ContextDirs = append(in.ContextDirs, ex.ContextDirs...)
	if err := s.st.SetJobExpert(ctx, statuses, j.ID, ex.ID, ex.Version); err != nil {
		cleanup()
		return noop, err
	}
	return cleanup, nil
}

// expertRef is how a job's runs find its expert: the canonical id its first run recorded, else the
// expert_id as sent.
func expertRef(j store.ResearchJob) string {
	if j.ExpertRef != nil {
		return *j.ExpertRef
	}
	return *j.ExpertID
}

// checkExpertTier refuses a continuation whose job's expert the account's tier may no longer run, so
// it is refused at the request (403) rather than accepted and failed at dispatch. An expert that is
// gone is left to the run, which fails with expert_unavailable as it always has.
func (s *Service) checkExpertTier(ctx context.Context, j store.ResearchJob) error {
	if j.ExpertID == nil || s.experts == nil {
		return nil
	}
	_, err := s.experts.Resolve(ctx, j.AccountID, expertRef(j))
	if errors.Is(err, ErrExpertNotFound) {
		return nil
	}
	return err
}

// copyContext writes the expert's context files into dir, afresh (a resumed run rewrites them).
func (s *Service) copyContext(ctx context.Context, dir string, files []InputFile) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("reset run context folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("run context folder: %w", err)
	}
	for _, f := range files {
		if f.Name == "" || filepath.Base(f.Name) != f.Name || f.Name == "." || f.Name == ".." {
			return fmt.Errorf("expert context file %q: not a plain file name", f.Name)
		}
		b, err := readInput(ctx, f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), b, 0o440); err != nil {
			return fmt.Errorf("copy expert context file %s: %w", f.Name, err)
		}
	}
	return nil
}

// RequiredToolCalls is the stored outcome of a run's required-tool monitor (job detail
// required_tool_calls).
type RequiredToolCalls struct {
	Required  []string `json:"required"`
	Succeeded []string `json:"succeeded"`
	Missing   []string `json:"missing"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
