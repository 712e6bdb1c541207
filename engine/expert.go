package engine

import (
	"context"
	"fmt"
	"strings"
)

// ExpertInfo names the expert a run runs as, for the timeline.
type ExpertInfo struct {
	ID      string // registry id or UUID
	Name    string
	Version *int // nil for the unversioned built-in registry experts
}

// Skill is a linked skill given to a run: its SKILL.md in full.
type Skill struct {
	Name, Description string
	Content           string // the whole SKILL.md
}

// RecordExpert tells the timeline which expert and version the run runs as and which skills and
// tools it was given; nothing when the run has no expert.
func RecordExpert(ctx context.Context, em Emitter, in Input) error {
	if in.Expert == nil {
		return nil
	}
	skills := make([]string, 0, len(in.Skills))
	for _, s := range in.Skills {
		skills = append(skills, s.Name)
	}
	tools := make([]string, 0, len(in.Tools))
	for _, t := range in.Tools {
		tools = append(tools, t.Name)
	}
	data := map[string]any{
		"expert_id": in.Expert.ID, "expert_name": in.Expert.Name, "skills": skills, "tools": tools,
		"required_tool_calls": nonNil(in.RequiredTools), "context_files": len(in.ContextDirs) > 0,
		"system_prompt": in.SystemPrompt != "",
	}
	version := "built-in"
	if in.Expert.Version != nil {
		data["expert_version"] = *in.Expert.Version
		version = fmt.Sprintf("version %d", *in.Expert.Version)
	}
	content := fmt.Sprintf("Running as %s (%s, %s).", in.Expert.Name, in.Expert.ID, version)
	if len(skills) > 0 {
		content += " Skills: " + strings.Join(skills, ", ") + "."
	}
	if len(tools) > 0 {
		content += " Tools: " + strings.Join(tools, ", ") + "."
	}
	if len(in.RequiredTools) > 0 {
		content += " Required tool calls: " + strings.Join(in.RequiredTools, ", ") + "."
	}
	return em.Event(ctx, KindStatus, "Expert", content, data)
}
