package server

import (
	"context"
	"errors"
	"strings"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/skill"
)

// catalogLimit is the `limit` of the skill and tool lists (ExpertsCatalogLimit: default 50).
func catalogLimit(l *gen.ExpertsCatalogLimit) int {
	if l == nil {
		return 50
	}
	return *l
}

// ListSkills lists the catalogue plus the caller's own skills.
func (s *Server) ListSkills(ctx context.Context, req gen.ListSkillsRequestObject) (gen.ListSkillsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	items, total, err := s.skills.List(ctx, p.AccountID, skill.Filter{
		Query: orZero(req.Params.Query), Category: orZero(req.Params.Category), Limit: catalogLimit(req.Params.Limit),
	})
	if err != nil {
		return nil, err
	}
	out := gen.SkillList{Items: make([]gen.SkillSummary, len(items)), Total: total}
	for i, it := range items {
		out.Items[i] = gen.SkillSummary{Name: it.Name, Description: it.Description, Category: it.Category, Owner: gen.SkillSummaryOwner(it.Owner)}
	}
	return gen.ListSkills200JSONResponse(out), nil
}

// CreateSkill writes one of the caller's skills: 201 for a new name, 200 when it replaced theirs.
func (s *Server) CreateSkill(ctx context.Context, req gen.CreateSkillRequestObject) (gen.CreateSkillResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	name, created, err := s.skills.Write(ctx, p.AccountID, skill.WriteRequest{
		Name: b.Name, Description: b.Description, Category: orZero(valueOf(b.Category)), Content: b.Content,
	})
	if errors.Is(err, skill.ErrNameTaken) {
		return nil, errConflict("skill_name_taken", "a catalogue skill is named "+b.Name+"; choose another name")
	}
	if fields, ok := skill.IsInvalid(err); ok {
		return nil, errValidation("the skill is not a valid SKILL.md", skillFieldErrors(fields)...)
	}
	if err != nil {
		return nil, err
	}
	if created {
		return gen.CreateSkill201JSONResponse{Name: name, Created: true}, nil
	}
	return gen.CreateSkill200JSONResponse{Name: name, Created: false}, nil
}

// skillFieldErrors points SKILL.md problems at the request body: front-matter problems belong to
// `content` and say which front-matter key is wrong.
func skillFieldErrors(fields []skill.FieldError) []gen.FieldError {
	out := make([]gen.FieldError, len(fields))
	for i, f := range fields {
		switch {
		case strings.HasPrefix(f.Field, "front_matter."):
			out[i] = gen.FieldError{Field: "content", Message: "front matter " + strings.TrimPrefix(f.Field, "front_matter.") + ": " + f.Message}
		case f.Field == "front_matter":
			out[i] = gen.FieldError{Field: "content", Message: "front matter " + f.Message}
		default:
			out[i] = gen.FieldError{Field: f.Field, Message: f.Message}
		}
	}
	return out
}

// GetSkill reads a skill with its SKILL.md: the caller's own first, then the catalogue.
func (s *Server) GetSkill(ctx context.Context, req gen.GetSkillRequestObject) (gen.GetSkillResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	sk, err := s.skills.Get(ctx, p.AccountID, req.SkillName)
	if errors.Is(err, skill.ErrNotFound) {
		return nil, errNotFound("skill")
	}
	if err != nil {
		return nil, err
	}
	return gen.GetSkill200JSONResponse{Name: sk.Name, Description: sk.Description, Category: sk.Category, Content: sk.Content,
		Owner: gen.SkillOwner(sk.Owner)}, nil
}

// ListMcpTools lists the grantable tools. A configured MCP server that is down contributes its
// cached list or nothing; it never fails the list.
func (s *Server) ListMcpTools(ctx context.Context, req gen.ListMcpToolsRequestObject) (gen.ListMcpToolsResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	items, total := s.tools.List(ctx, mcptool.Filter{
		Query: orZero(req.Params.Query), Server: orZero(req.Params.Server), Category: orZero(req.Params.Category),
		Limit: catalogLimit(req.Params.Limit),
	})
	out := gen.McpToolList{Items: make([]gen.McpTool, len(items)), Total: total}
	for i, t := range items {
		out.Items[i] = gen.McpTool{Name: t.Name, Server: t.Server, Category: t.Category, Description: t.Description, AlwaysOn: t.AlwaysOn}
	}
	return gen.ListMcpTools200JSONResponse(out), nil
}

// orZero is the value of an optional parameter, or its zero value when absent.
func orZero[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}
