package engine

import (
	"context"
	"slices"
	"strings"
)

// ToolCaller calls the MCP tools granted to a run (mcptool.Registry satisfies it). isError is the
// tool's own failure report; err is for everything else (server unreachable, protocol error).
type ToolCaller interface {
	Call(ctx context.Context, name string, args map[string]any) (result string, isError bool, err error)
}

// GrantedTool is an MCP tool a run may call, as the tool list describes it.
type GrantedTool struct {
	Name        string // as in mcp_tool_names, e.g. "sec.filings"
	Description string
	InputSchema map[string]any // JSON Schema of the arguments; nil: any object
}

// RequiredToolsOutcome is what the required-tool monitor saw in a run.
type RequiredToolsOutcome struct {
	Required  []string // required_tool_calls, as given
	Succeeded []string // those that returned a successful result at least once
	Missing   []string // those that did not
}

// Met reports whether every required tool succeeded.
func (o RequiredToolsOutcome) Met() bool { return len(o.Missing) == 0 }

// ReportRequired records which of required returned a successful result (succeeded, by tool
// name); nil without any required tools.
func ReportRequired(ctx context.Context, em Emitter, required []string, succeeded map[string]bool) (*RequiredToolsOutcome, error) {
	if len(required) == 0 {
		return nil, nil
	}
	o := &RequiredToolsOutcome{Required: slices.Clone(required)}
	for _, name := range required {
		if succeeded[name] {
			o.Succeeded = append(o.Succeeded, name)
		} else {
			o.Missing = append(o.Missing, name)
		}
	}
	title, content := "Required tool calls met", "Every required tool returned a successful result: "+strings.Join(o.Succeeded, ", ")
	if !o.Met() {
		title, content = "Required tool calls missed", "No successful result from: "+strings.Join(o.Missing, ", ")
	}
	data := map[string]any{"required": o.Required, "succeeded": nonNil(o.Succeeded), "missing": nonNil(o.Missing), "met": o.Met()}
	if err := em.Event(ctx, KindStatus, title, content, data); err != nil {
		return nil, err
	}
	return o, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
