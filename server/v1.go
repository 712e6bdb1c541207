package server

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
)

// Legacy v1 (docs/api.md: Legacy v1): POST /v1/grep/research creates an ordinary research job (same billing, same
// job under /api/v2/research) and waits for it within its depth's budget.

// V1Budgets is how long POST /v1/grep/research waits per depth before answering in_progress. A
// depth missing from a non-nil map waits not at all; nil: DefaultV1Budgets.
type V1Budgets map[string]time.Duration

// DefaultV1Budgets are the document's budgets: ultra_fast about 15 s, deep about 3 min, ultra_deep
// about 15 min (below the server's 20-minute write timeout).
func DefaultV1Budgets() V1Budgets {
	return V1Budgets{"ultra_fast": 15 * time.Second, "deep": 3 * time.Minute, "ultra_deep": 15 * time.Minute}
}

// v1Efforts maps v1 depths to v2 efforts (clamped to the tier by jobs.Service like any effort).
var v1Efforts = map[gen.V1ResearchRequestDepth]string{"ultra_fast": "low", "deep": "medium", "ultra_deep": "high"}

// CreateV1Research creates the job and waits for it up to the depth's budget.
func (s *Server) CreateV1Research(ctx context.Context, req gen.CreateV1ResearchRequestObject) (gen.CreateV1ResearchResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	depth := gen.V1ResearchRequestDepth("deep")
	if b.Depth != nil {
		depth = *b.Depth
	}
	if b.McpTools != nil && len(*b.McpTools) > 0 {
		unknown, err := s.tools.Unknown(ctx, *b.McpTools)
		if err != nil {
			return nil, err
		}
		if len(unknown) > 0 {
			return nil, errValidation("unknown MCP tools: "+strings.Join(unknown, ", "),
				gen.FieldError{Field: "mcp_tools", Message: "unknown tools: " + strings.Join(unknown, ", ")})
		}
	}
	c, err := s.research.Create(ctx, jobs.CreateRequest{
		AccountID: p.AccountID, Tier: p.Tier, APIKey: p.Secret, Question: b.Question,
		Effort: v1Efforts[depth], RequestID: requestID(ctx),
		// v1 webhooks sign with the legacy header and correlate by the body alone.
		WebhookURL: b.WebhookUrl, APIVersion: jobs.APIv1,
	})
	if err != nil {
		return nil, err
	}
	j := c.Job
	if budget := s.v1Budgets[string(depth)]; budget > 0 {
		if j, err = s.awaitJob(ctx, j.ID, budget); err != nil {
			return nil, err
		}
	}
	out := v1View(j)
	if out.Status == "in_progress" {
		return gen.CreateV1Research202JSONResponse(out), nil
	}
	return gen.CreateV1Research200JSONResponse(out), nil
}

// GetV1Research answers the caller's job at once; another account's job is 404, public or not.
func (s *Server) GetV1Research(ctx context.Context, req gen.GetV1ResearchRequestObject) (gen.GetV1ResearchResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.research.JobByID(ctx, req.JobId.String())
	if err == nil && j.AccountID != p.AccountID && !p.IsAdmin {
		return nil, errNotFound("research job")
	}
	if err != nil {
		return nil, err
	}
	return gen.GetV1Research200JSONResponse(v1View(j)), nil
}

// awaitJob follows the job (woken by its writes, through the process's follower) until it is
// terminal, the budget is spent or the client leaves; it returns the job as last read.
func (s *Server) awaitJob(ctx context.Context, id string, budget time.Duration) (jobs.Job, error) {
	wait, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var j jobs.Job
	read := false
	err := s.research.Follow(wait, id, math.MaxInt64, 0, func(p jobs.Progress) error {
		j, read = p.Job, true
		return nil
	})
	switch {
	case err != nil:
		return j, err
	case ctx.Err() != nil:
		return j, ctx.Err()
	case !read:
		// The budget ended before the first read.
		return s.research.JobByID(ctx, id)
	}
	return j, nil
}
