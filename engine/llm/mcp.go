package llm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/researchd/researchd/engine"
)

// invalidFunctionChars are what OpenAI function names may not contain (^[a-zA-Z0-9_-]{1,64}$).
var invalidFunctionChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// grantedTools maps the function names offered to the model to the granted MCP tools.
type grantedTools struct {
	byFunc map[string]engine.GrantedTool
	funcs  []string // in the order granted
}

// newGrantedTools names each tool as a function: "sec.filings" becomes "sec__filings"; names that
// collide (with each other or with reserved built-in names) get a numeric suffix.
func newGrantedTools(tools []engine.GrantedTool, reserved []string) *grantedTools {
	g := &grantedTools{byFunc: map[string]engine.GrantedTool{}}
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	for _, t := range tools {
		base := invalidFunctionChars.ReplaceAllString(strings.ReplaceAll(t.Name, ".", "__"), "_")
		base = base[:min(len(base), 60)]
		fn := base
		for i := 2; taken[fn]; i++ {
			fn = fmt.Sprintf("%s_%d", base, i)
		}
		taken[fn] = true
		g.byFunc[fn] = t
		g.funcs = append(g.funcs, fn)
	}
	return g
}

// specs are the granted tools as function tools for the model.
func (g *grantedTools) specs() []toolSpec {
	var out []toolSpec
	for _, fn := range g.funcs {
		t := g.byFunc[fn]
		schema := t.InputSchema
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		desc := t.Description
		if desc == "" {
			desc = "MCP tool " + t.Name
		}
		out = append(out, toolSpec{Name: fn, Desc: desc, Params: schema})
	}
	return out
}

// callMCP runs a granted MCP tool. A tool's own error report goes back to the model as an error,
// like a failing built-in tool.
func (r *agentRun) callMCP(ctx context.Context, t engine.GrantedTool, rawArgs string) (string, error) {
	if r.in.ToolCaller == nil {
		return "", fmt.Errorf("%s is not available", t.Name)
	}
	var args map[string]any
	if strings.TrimSpace(rawArgs) != "" {
		if err := decodeArgs(rawArgs, &args); err != nil {
			return "", err
		}
	}
	out, isError, err := r.in.ToolCaller.Call(ctx, t.Name, args)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s failed: %v", t.Name, err)
	case isError:
		return "", errors.New(out)
	}
	return out, nil
}

// toolName is the name a function call is recorded and monitored under: the MCP tool's name for
// granted tools, the function name for built-in ones.
func (r *agentRun) toolName(fn string) string {
	if t, ok := r.granted.byFunc[fn]; ok {
		return t.Name
	}
	return fn
}

// reportRequired records which required tools returned a successful result; nil without any.
func (r *agentRun) reportRequired(ctx context.Context) (*engine.RequiredToolsOutcome, error) {
	return engine.ReportRequired(ctx, r.em, r.in.RequiredTools, r.succeeded)
}

// builtinToolNames are the openai engine's own function names, which granted tools must not shadow.
var builtinToolNames = []string{"search_files", "read_file", "write_file", "web_search", "fetch_url"}

// requiredFunctions are the required tools as the model knows them (function names).
func (r *agentRun) requiredFunctions() []string {
	out := make([]string, 0, len(r.in.RequiredTools))
	for _, name := range r.in.RequiredTools {
		fn := name
		for f, t := range r.granted.byFunc {
			if t.Name == name {
				fn = f
			}
		}
		out = append(out, fn)
	}
	return out
}
