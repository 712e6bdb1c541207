package expert

import (
	"encoding/json"
	"fmt"
	"time"
)

// InputField is one field of an expert's input form.
type InputField struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Options  []string `json:"options,omitempty"`
}

// FileInput is a text context file sent inline.
type FileInput struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// FileSummary describes an attached context file.
type FileSummary struct {
	Name         string `json:"name"`
	CharCount    int64  `json:"char_count"`
	SizeBytes    int64  `json:"size_bytes"`
	InRepository bool   `json:"in_repository"`
	TextMirrored bool   `json:"text_mirrored"`
}

// Config is an expert's configuration: what a version snapshots and a restore brings back. Field
// names are the API's, so a snapshot reads like the Expert resource. Nil pointers, maps and the
// nullable lists (required_tool_calls, input_form) are JSON null.
type Config struct {
	Name                 string         `json:"name"`
	SystemPrompt         string         `json:"system_prompt"`
	Description          string         `json:"description"`
	Domain               *string        `json:"domain"`
	ExpertiseAreas       []string       `json:"expertise_areas"`
	Tags                 []string       `json:"tags"`
	Icon                 *string        `json:"icon"`
	SkillNames           []string       `json:"skill_names"`
	MCPToolNames         []string       `json:"mcp_tool_names"`
	RequiredToolCalls    []string       `json:"required_tool_calls"`
	DefaultDepth         *string        `json:"default_depth"`
	DefaultMode          *string        `json:"default_mode"`
	DefaultModel         *string        `json:"default_model"`
	DefaultRuntime       *string        `json:"default_runtime"`
	MaxCostUSD           *float64       `json:"max_cost_usd"`
	OutputType           *string        `json:"output_type"`
	OutputSchema         map[string]any `json:"output_schema"`
	OutputSOP            map[string]any `json:"output_sop"`
	OutputTemplate       *string        `json:"output_template"`
	OutputTemplateSample map[string]any `json:"output_template_sample"`
	OutputTemplateFile   *string        `json:"output_template_file"`
	InputForm            []InputField   `json:"input_form"`
	CampaignPlan         map[string]any `json:"campaign_plan"`
	RunMode              *string        `json:"run_mode"`
	PinnedWorkflow       map[string]any `json:"pinned_workflow"`
	RegistryExpertID     *string        `json:"registry_expert_id"`
}

// normalize makes the non-nullable lists empty rather than null.
func (c *Config) normalize() {
	for _, l := range []*[]string{&c.ExpertiseAreas, &c.Tags, &c.SkillNames, &c.MCPToolNames} {
		if *l == nil {
			*l = []string{}
		}
	}
}

func (c Config) encode() (string, error) {
	c.normalize()
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode expert configuration: %w", err)
	}
	return string(b), nil
}

func decodeConfig(s string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return Config{}, fmt.Errorf("decode expert configuration: %w", err)
	}
	c.normalize()
	return c, nil
}

// Expert is an expert as a caller sees it: its configuration plus identity, state and access.
type Expert struct {
	ID   string `json:"expert_id"`
	Slug string `json:"slug"`
	Config
	Status           string        `json:"status"`
	ContextFiles     []FileSummary `json:"context_files"`
	IsPublic         bool          `json:"is_public"`
	AllowFreeTierUse bool          `json:"allow_free_tier_use"`
	OwnerID          *string       `json:"owner_user_id"`
	IsBuiltin        bool          `json:"is_builtin"`
	ArchivedAt       *time.Time    `json:"archived_at"`
	VersionNum       *int          `json:"version_num"`
	CreatedAt        *time.Time    `json:"created_at"`
	UpdatedAt        *time.Time    `json:"updated_at"`
	// CallerRole is owner, editor or viewer; nil when the caller reads it only as public or built-in.
	CallerRole *string `json:"caller_role,omitempty"`
}

// Summary is an expert as lists show it.
type Summary struct {
	ID             string     `json:"expert_id"`
	Slug           string     `json:"slug"`
	Name           string     `json:"name"`
	Description    string     `json:"description"`
	Domain         *string    `json:"domain"`
	ExpertiseAreas []string   `json:"expertise_areas"`
	Tags           []string   `json:"tags"`
	Icon           *string    `json:"icon"`
	Status         string     `json:"status"`
	IsBuiltin      bool       `json:"is_builtin"`
	IsPublic       bool       `json:"is_public"`
	OutputType     *string    `json:"output_type"`
	DefaultDepth   *string    `json:"default_depth"`
	RunMode        *string    `json:"run_mode"`
	UpdatedAt      *time.Time `json:"updated_at"`
}

// Summary shortens the expert for lists.
func (e Expert) Summary() Summary {
	e.normalize()
	return Summary{
		ID: e.ID, Slug: e.Slug, Name: e.Name, Description: e.Description, Domain: e.Domain,
		ExpertiseAreas: e.ExpertiseAreas, Tags: e.Tags, Icon: e.Icon, Status: e.Status, IsBuiltin: e.IsBuiltin,
		IsPublic: e.IsPublic, OutputType: e.OutputType, DefaultDepth: e.DefaultDepth, RunMode: e.RunMode, UpdatedAt: e.UpdatedAt,
	}
}
