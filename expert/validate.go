package expert

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/fault"
)

// textExtensions are the context file types accepted inline (binaries go through the upload
// endpoint).
var textExtensions = map[string]string{
	"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "tsv": "text/tab-separated-values",
	"json": "application/json", "jsonl": "application/jsonl", "xml": "application/xml", "html": "text/html",
	"htm": "text/html", "yaml": "application/yaml", "yml": "application/yaml",
}

// placeholderPattern finds {{field_label}} placeholders in a campaign plan.
var placeholderPattern = regexp.MustCompile(`\{\{\s*([^{}]+?)\s*\}\}`)

// checkStatic applies the rules that need nothing but the configuration itself (the document's
// schema already bounds lengths, enums and patterns).
func checkStatic(c Config) []fault.Field {
	var errs []fault.Field
	add := func(field, format string, args ...any) {
		errs = append(errs, fault.Field{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(c.Name) == "" {
		add("name", "must not be blank")
	}
	if strings.TrimSpace(c.SystemPrompt) == "" {
		add("system_prompt", "must not be blank")
	}
	if len(c.Tags) > 20 {
		add("tags", "at most 20 tags")
	}
	if c.MaxCostUSD != nil && (*c.MaxCostUSD < 0.5 || *c.MaxCostUSD > 1000) {
		add("max_cost_usd", "must be between 0.5 and 1000")
	}
	for i, name := range c.RequiredToolCalls {
		if !slices.Contains(c.MCPToolNames, name) {
			add("required_tool_calls/"+strconv.Itoa(i), "%q is not in mcp_tool_names", name)
		}
	}
	if c.OutputSchema != nil {
		if err := checkObjectSchema(c.OutputSchema); err != nil {
			add("output_schema", "%s", err.Error())
		}
	}
	keys := map[string]int{}
	labels := map[string]bool{}
	for i, f := range c.InputForm {
		at := "input_form/" + strconv.Itoa(i)
		if j, dup := keys[f.Key]; dup {
			add(at+"/key", "duplicate key %q (also input_form/%d)", f.Key, j)
		} else {
			keys[f.Key] = i
		}
		labels[strings.ToLower(strings.TrimSpace(f.Label))] = true
		if f.Type == "select" && len(f.Options) == 0 {
			add(at+"/options", "a select field needs at least one option")
		}
	}
	if c.CampaignPlan != nil {
		raw, err := json.Marshal(c.CampaignPlan)
		if err != nil {
			add("campaign_plan", "not JSON: %v", err)
		}
		for _, m := range placeholderPattern.FindAllStringSubmatch(string(raw), -1) {
			if !labels[strings.ToLower(m[1])] {
				add("campaign_plan", "placeholder {{%s}} names no input_form label", m[1])
			}
		}
	}
	if c.RunMode != nil && *c.RunMode == "campaign" && c.CampaignPlan == nil {
		add("campaign_plan", "run_mode campaign needs a campaign_plan")
	}
	return errs
}

// checkFiles checks inline context files: path-safe names with an accepted text extension,
// each name once.
func checkFiles(files []FileInput) []fault.Field {
	var errs []fault.Field
	seen := map[string]bool{}
	for i, f := range files {
		at := "context_files/" + strconv.Itoa(i) + "/name"
		switch {
		case strings.ContainsAny(f.Name, "/\\") || f.Name == "." || f.Name == ".." || strings.TrimSpace(f.Name) != f.Name || f.Name == "":
			errs = append(errs, fault.Field{Field: at, Message: fmt.Sprintf("%q is not a path-safe file name", f.Name)})
		case textExtensions[strings.ToLower(strings.TrimPrefix(path.Ext(f.Name), "."))] == "":
			errs = append(errs, fault.Field{Field: at, Message: fmt.Sprintf("%q: inline context files must be text (.md, .txt, .csv, .json, ...); upload binaries with POST /experts/{expert_id}/context-files", f.Name)})
		case seen[f.Name]:
			errs = append(errs, fault.Field{Field: at, Message: fmt.Sprintf("%q appears twice", f.Name)})
		}
		seen[f.Name] = true
	}
	return errs
}

// validate applies every persistence-side rule to a merged configuration. fileNames are the
// context files the expert will have (attached plus this request's).
func (s *Service) validate(ctx context.Context, accountID string, c Config, fileNames map[string]bool) ([]fault.Field, error) {
	errs := checkStatic(c)
	unknownSkills, err := s.unknownSkills(ctx, accountID, c.SkillNames)
	if err != nil {
		return nil, err
	}
	for i, n := range c.SkillNames {
		if slices.Contains(unknownSkills, n) {
			errs = append(errs, fault.Field{Field: "skill_names/" + strconv.Itoa(i), Message: fmt.Sprintf("unknown skill %q; see GET /api/v2/experts/skills", n)})
		}
	}
	unknownTools, err := s.unknownTools(ctx, c.MCPToolNames)
	if err != nil {
		return nil, err
	}
	for i, n := range c.MCPToolNames {
		if slices.Contains(unknownTools, n) {
			errs = append(errs, fault.Field{Field: "mcp_tool_names/" + strconv.Itoa(i), Message: fmt.Sprintf("unknown tool %q; see GET /api/v2/experts/mcp-tools", n)})
		}
	}
	if c.OutputTemplateFile != nil && !fileNames[*c.OutputTemplateFile] {
		errs = append(errs, fault.Field{Field: "output_template_file", Message: fmt.Sprintf("%q names no attached context file", *c.OutputTemplateFile)})
	}
	if c.RegistryExpertID != nil {
		if _, ok := s.registry.Get(*c.RegistryExpertID); !ok {
			errs = append(errs, fault.Field{Field: "registry_expert_id", Message: fmt.Sprintf("%q is not a built-in expert; see GET /api/v2/experts", *c.RegistryExpertID)})
		}
	}
	return errs, nil
}

func (s *Service) unknownSkills(ctx context.Context, accountID string, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if s.skills == nil {
		return names, nil
	}
	u, err := s.skills.Unknown(ctx, accountID, names)
	if err != nil {
		return nil, fmt.Errorf("check skill names: %w", err)
	}
	return u, nil
}

func (s *Service) unknownTools(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if s.tools == nil {
		return names, nil
	}
	u, err := s.tools.Unknown(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("check tool names: %w", err)
	}
	return u, nil
}
