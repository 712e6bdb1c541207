package expert

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// CheckCreate reports every problem that would make Create refuse in, plus warnings, without
// saving anything.
func (s *Service) CheckCreate(ctx context.Context, c Caller, in CreateInput) (errs, warns []fault.Field, err error) {
	errs = adminOnly(c, in.IsPublic != nil && *in.IsPublic, in.AllowFreeTierUse != nil && *in.AllowFreeTierUse, in.OwnerEmail != nil)
	cfg := in.Config
	cfg.normalize()
	errs = append(errs, checkFiles(in.ContextFiles)...)
	names := map[string]bool{}
	for _, f := range in.ContextFiles {
		names[f.Name] = true
	}
	more, err := s.validate(ctx, c.AccountID, cfg, names)
	if err != nil {
		return nil, nil, err
	}
	status := store.ExpertActive
	if in.Status != nil {
		status = *in.Status
	}
	return append(errs, more...), warnings(cfg, status), nil
}

// CheckUpdate reports every problem that would make Update of ref refuse p, judged against the
// merged configuration, plus warnings, without saving anything. An expert the caller may not edit
// is an error, as it is for Update.
func (s *Service) CheckUpdate(ctx context.Context, c Caller, ref string, p Patch) (errs, warns []fault.Field, err error) {
	if _, ok := s.registry.Get(ref); ok {
		return nil, nil, fmt.Errorf("built-in experts are read-only: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return nil, nil, err
	}
	if !t.canEdit(c) {
		return nil, nil, fmt.Errorf("only the owner and editors may change the expert: %w", ErrForbidden)
	}
	errs = adminOnly(c, p.IsPublic != nil, p.AllowFreeTierUse != nil, p.OwnerEmail != nil)
	if t.row.ArchivedAt != nil {
		errs = append(errs, fault.Field{Field: "expert_id", Message: ErrArchived.Error()})
	}
	cfg, err := decodeConfig(t.row.Config)
	if err != nil {
		return nil, nil, err
	}
	p.apply(&cfg)
	status := t.row.Status
	if p.Status != nil {
		if *p.Status == store.ExpertBuilding && status != store.ExpertBuilding {
			errs = append(errs, fault.Field{Field: "status", Message: ErrInvalidTransition.Error()})
		}
		status = *p.Status
	}
	var files []FileInput
	if v, err := p.ContextFiles.Get(); err == nil {
		files = v
	}
	errs = append(errs, checkFiles(files)...)
	existing, err := s.st.ExpertContextFiles(ctx, t.row.ID)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]bool{}
	for _, f := range existing {
		names[f.Name] = true
	}
	for _, f := range files {
		names[f.Name] = true
	}
	more, err := s.validate(ctx, t.row.OwnerID, cfg, names)
	if err != nil {
		return nil, nil, err
	}
	return append(errs, more...), warnings(cfg, status), nil
}

func adminOnly(c Caller, public, freeTier, owner bool) []fault.Field {
	if c.IsAdmin {
		return nil
	}
	var errs []fault.Field
	for i, set := range []bool{public, freeTier, owner} {
		if set {
			errs = append(errs, fault.Field{Field: []string{"is_public", "allow_free_tier_use", "owner_email"}[i], Message: "service administrators only"})
		}
	}
	return errs
}

var planPlaceholder = regexp.MustCompile(`\{\{\s*([^}]+?)\s*\}\}`)

// warnings are accepted but probably unintended choices.
func warnings(c Config, status string) []fault.Field {
	var w []fault.Field
	if status == store.ExpertBuilding {
		w = append(w, fault.Field{Field: "status", Message: "a building draft cannot run jobs until it is finalized with status active"})
	}
	if len(strings.TrimSpace(c.SystemPrompt)) < 40 {
		w = append(w, fault.Field{Field: "system_prompt", Message: "a very short system prompt gives runs little to follow"})
	}
	if _, hasProps := c.OutputSchema["properties"]; hasProps {
		if req, _ := c.OutputSchema["required"].([]any); len(req) == 0 {
			w = append(w, fault.Field{Field: "output_schema", Message: "no required fields: structured output may come back empty"})
		}
	}
	if c.OutputTemplateFile != nil && c.OutputTemplate != nil {
		w = append(w, fault.Field{Field: "output_template", Message: "output_template_file is set too; the file is what runs fill"})
	}
	w = append(w, unusedFormFields(c)...)
	return w
}

// unusedFormFields: with a campaign plan, an input-form field its placeholders never name is
// collected from users for nothing.
func unusedFormFields(c Config) []fault.Field {
	if c.CampaignPlan == nil || len(c.InputForm) == 0 {
		return nil
	}
	b, err := jsonMarshal(c.CampaignPlan)
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	for _, m := range planPlaceholder.FindAllStringSubmatch(b, -1) {
		used[strings.ToLower(m[1])] = true
	}
	var w []fault.Field
	for i, f := range c.InputForm {
		if !used[strings.ToLower(f.Label)] && !used[strings.ToLower(f.Key)] {
			w = append(w, fault.Field{Field: fmt.Sprintf("input_form/%d", i), Message: fmt.Sprintf("campaign_plan never uses {{%s}}", f.Label)})
		}
	}
	return w
}
