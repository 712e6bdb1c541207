package expert

import (
	"context"
	"errors"
	"fmt"

	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Patch is a partial update (UpdateExpertRequest). Pointers are "absent or a value"; Nullable
// fields also tell an explicit null (clear) from absent (unchanged).
type Patch struct {
	Name                 *string                           `json:"name"`
	SystemPrompt         *string                           `json:"system_prompt"`
	Description          *string                           `json:"description"`
	Domain               nullable.Nullable[string]         `json:"domain"`
	ExpertiseAreas       *[]string                         `json:"expertise_areas"`
	Tags                 *[]string                         `json:"tags"`
	Icon                 nullable.Nullable[string]         `json:"icon"`
	Status               *string                           `json:"status"`
	SkillNames           *[]string                         `json:"skill_names"`
	MCPToolNames         *[]string                         `json:"mcp_tool_names"`
	RequiredToolCalls    nullable.Nullable[[]string]       `json:"required_tool_calls"`
	DefaultDepth         nullable.Nullable[string]         `json:"default_depth"`
	DefaultMode          nullable.Nullable[string]         `json:"default_mode"`
	DefaultModel         nullable.Nullable[string]         `json:"default_model"`
	DefaultRuntime       nullable.Nullable[string]         `json:"default_runtime"`
	MaxCostUSD           nullable.Nullable[float64]        `json:"max_cost_usd"`
	OutputType           nullable.Nullable[string]         `json:"output_type"`
	OutputSchema         nullable.Nullable[map[string]any] `json:"output_schema"`
	OutputSOP            nullable.Nullable[map[string]any] `json:"output_sop"`
	OutputTemplate       nullable.Nullable[string]         `json:"output_template"`
	OutputTemplateSample nullable.Nullable[map[string]any] `json:"output_template_sample"`
	OutputTemplateFile   nullable.Nullable[string]         `json:"output_template_file"`
	InputForm            nullable.Nullable[[]InputField]   `json:"input_form"`
	ContextFiles         nullable.Nullable[[]FileInput]    `json:"context_files"`
	CampaignPlan         nullable.Nullable[map[string]any] `json:"campaign_plan"`
	RunMode              nullable.Nullable[string]         `json:"run_mode"`
	PinnedWorkflow       nullable.Nullable[map[string]any] `json:"pinned_workflow"`
	RegistryExpertID     nullable.Nullable[string]         `json:"registry_expert_id"`
	IsPublic             *bool                             `json:"is_public"`
	AllowFreeTierUse     *bool                             `json:"allow_free_tier_use"`
	OwnerEmail           *string                           `json:"owner_email"`
}

// set applies a nullable field: absent keeps *dst, null clears it, a value replaces it.
func set[T any](dst **T, n nullable.Nullable[T]) {
	if !n.IsSpecified() {
		return
	}
	if n.IsNull() {
		*dst = nil
		return
	}
	v := n.MustGet()
	*dst = &v
}

// setDirect is set for fields whose nil is their own zero (maps, nullable lists).
func setDirect[T any](dst *T, n nullable.Nullable[T]) {
	if !n.IsSpecified() {
		return
	}
	var zero T
	if n.IsNull() {
		*dst = zero
		return
	}
	*dst = n.MustGet()
}

func replace[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// apply merges the patch into a configuration (context files and admin fields aside).
func (p Patch) apply(c *Config) {
	replace(&c.Name, p.Name)
	replace(&c.SystemPrompt, p.SystemPrompt)
	replace(&c.Description, p.Description)
	set(&c.Domain, p.Domain)
	replace(&c.ExpertiseAreas, p.ExpertiseAreas)
	replace(&c.Tags, p.Tags)
	set(&c.Icon, p.Icon)
	replace(&c.SkillNames, p.SkillNames)
	replace(&c.MCPToolNames, p.MCPToolNames)
	setDirect(&c.RequiredToolCalls, p.RequiredToolCalls)
	set(&c.DefaultDepth, p.DefaultDepth)
	set(&c.DefaultMode, p.DefaultMode)
	set(&c.DefaultModel, p.DefaultModel)
	set(&c.DefaultRuntime, p.DefaultRuntime)
	set(&c.MaxCostUSD, p.MaxCostUSD)
	set(&c.OutputType, p.OutputType)
	setDirect(&c.OutputSchema, p.OutputSchema)
	setDirect(&c.OutputSOP, p.OutputSOP)
	set(&c.OutputTemplate, p.OutputTemplate)
	setDirect(&c.OutputTemplateSample, p.OutputTemplateSample)
	set(&c.OutputTemplateFile, p.OutputTemplateFile)
	if c.OutputTemplateFile != nil && *c.OutputTemplateFile == "" {
		c.OutputTemplateFile = nil // "" clears, like null
	}
	setDirect(&c.InputForm, p.InputForm)
	setDirect(&c.CampaignPlan, p.CampaignPlan)
	set(&c.RunMode, p.RunMode)
	setDirect(&c.PinnedWorkflow, p.PinnedWorkflow)
	set(&c.RegistryExpertID, p.RegistryExpertID)
	c.normalize()
}

// errStale: the expert changed between the read and the write; the update is planned again.
var errStale = errors.New("expert changed concurrently")

// Update applies a patch: validated against the merged state, recorded as a new version when the
// configuration or status changes.
func (s *Service) Update(ctx context.Context, c Caller, ref string, p Patch) (Expert, error) {
	if _, ok := s.registry.Get(ref); ok {
		return Expert{}, fmt.Errorf("built-in experts are read-only: %w", ErrForbidden)
	}
	if !c.IsAdmin && (p.IsPublic != nil || p.AllowFreeTierUse != nil || p.OwnerEmail != nil) {
		return Expert{}, fmt.Errorf("is_public, allow_free_tier_use and owner_email are for service administrators: %w", ErrForbidden)
	}
	for attempt := 0; ; attempt++ {
		t, err := s.find(ctx, c, ref)
		if err != nil {
			return Expert{}, err
		}
		if !t.canEdit(c) {
			return Expert{}, fmt.Errorf("only the owner and editors may change the expert: %w", ErrForbidden)
		}
		if t.row.ArchivedAt != nil {
			return Expert{}, ErrArchived
		}
		row, err := s.updated(ctx, c, t.row, p)
		if err == nil {
			return s.view(ctx, s.st, row, t.role)
		}
		if !errors.Is(err, errStale) || attempt == 2 {
			return Expert{}, err
		}
	}
}

// updated plans the change outside any transaction (validation may consult other services), then
// writes it if the row is still the one planned against.
func (s *Service) updated(ctx context.Context, c Caller, before store.Expert, p Patch) (store.Expert, error) {
	row := before
	cfg, err := decodeConfig(row.Config)
	if err != nil {
		return row, err
	}
	p.apply(&cfg)
	statusChanged := false
	if p.Status != nil && *p.Status != row.Status {
		if *p.Status == store.ExpertBuilding {
			return row, ErrInvalidTransition
		}
		row.Status, statusChanged = *p.Status, true
	}
	var files []FileInput
	if v, err := p.ContextFiles.Get(); err == nil {
		files = v
	}
	errs := checkFiles(files)
	existing, err := s.st.ExpertContextFiles(ctx, row.ID)
	if err != nil {
		return row, err
	}
	names := map[string]bool{}
	for _, f := range existing {
		names[f.Name] = true
	}
	for _, f := range files {
		names[f.Name] = true
	}
	more, err := s.validate(ctx, row.OwnerID, cfg, names)
	if err != nil {
		return row, err
	}
	if errs = append(errs, more...); len(errs) > 0 {
		return row, Invalid(errs...)
	}
	if p.OwnerEmail != nil {
		a, err := s.st.AccountByEmail(ctx, *p.OwnerEmail)
		if errors.Is(err, store.ErrNotFound) {
			return row, Invalid(fault.Field{Field: "owner_email", Message: "no account has this email"})
		} else if err != nil {
			return row, err
		}
		row.OwnerID = a.ID
	}
	replace(&row.IsPublic, p.IsPublic)
	replace(&row.AllowFreeTierUse, p.AllowFreeTierUse)
	encoded, err := cfg.encode()
	if err != nil {
		return row, err
	}
	configChanged := encoded != row.Config
	row.Config, row.Name, row.Handle = encoded, cfg.Name, Handle(cfg.Name)
	if !configChanged && !statusChanged && len(files) == 0 && row == before {
		return row, nil // nothing changed: no version
	}
	row.UpdatedAt = s.now()
	versioned := configChanged || statusChanged
	if versioned {
		row.VersionNum++
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		cur, err := tx.ExpertByID(ctx, row.ID, true)
		if err != nil {
			return err
		}
		if cur.VersionNum != before.VersionNum || !cur.UpdatedAt.Equal(before.UpdatedAt) || cur.ArchivedAt != nil {
			return errStale
		}
		if err := tx.SaveExpert(ctx, &row); err != nil {
			return err
		}
		if err := s.saveFiles(ctx, tx, row.ID, files); err != nil {
			return err
		}
		if !versioned {
			return nil
		}
		return s.snapshot(ctx, tx, row, SourceUpdate, &c.AccountID)
	})
	if err == nil {
		s.commitInline(ctx, row.ID, c.AccountID, files)
	}
	return row, err
}
