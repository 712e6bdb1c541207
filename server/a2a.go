package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
)

// Agent-to-agent (spec 4.6): JSON-RPC 2.0 over POST /api/v2/a2a with the document's v0.3 methods.
// An A2A task IS a research job of the caller (task id = job_id): created through jobs.Service,
// read from the jobs table with the owner enforced, so it is durable and visible through REST.

const (
	a2aPath        = "/api/v2/a2a"
	a2aOperationID = "a2aJsonRpc"

	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcInternal       = -32603
	rpcTaskNotFound   = -32001
	rpcNotCancelable  = -32002
	rpcNoCredits      = -32010
)

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// A2aJsonRpc is never reached: the route is served by a2aRPC, which must see malformed bodies the
// generated strict handler would refuse before any handler runs.
func (s *Server) A2aJsonRpc(context.Context, gen.A2aJsonRpcRequestObject) (gen.A2aJsonRpcResponseObject, error) {
	return nil, errors.New("a2a: served by a2aRPC")
}

// a2aRPC answers every JSON-RPC outcome with HTTP 200 and a JSON-RPC body, errors included.
func (s *Server) a2aRPC(c echo.Context) error {
	ctx := c.Request().Context()
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	null := json.RawMessage("null")
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return c.JSON(http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: null, Error: &rpcError{Code: rpcParseError, Message: "parse error"}})
	}
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return c.JSON(http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: null, Error: &rpcError{Code: rpcInvalidRequest, Message: "invalid request: not a JSON-RPC request object"}})
	}
	id := req.ID
	if !validRPCID(id) {
		id = null
	}
	resp := rpcResponse{JSONRPC: "2.0", ID: id}
	if req.JSONRPC != "2.0" || req.Method == "" || !validRPCID(req.ID) {
		resp.Error = &rpcError{Code: rpcInvalidRequest, Message: "invalid request: jsonrpc must be \"2.0\" with a method and an id"}
		return c.JSON(http.StatusOK, resp)
	}
	result, err := s.a2aDispatch(ctx, req.Method, req.Params)
	var re *rpcError
	switch {
	case errors.As(err, &re):
		resp.Error = re
	case err != nil:
		s.log.ErrorContext(ctx, "a2a", "method", req.Method, "error", err)
		resp.Error = &rpcError{Code: rpcInternal, Message: "internal error"}
	default:
		resp.Result = result
	}
	return c.JSON(http.StatusOK, resp)
}

// validRPCID: a string or a number (null is allowed by JSON-RPC for responses only).
func validRPCID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

func (s *Server) a2aDispatch(ctx context.Context, method string, params json.RawMessage) (any, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	switch method {
	case "message/send":
		return s.a2aSend(ctx, p, params)
	case "tasks/get":
		j, err := s.a2aTask(ctx, p, params)
		if err != nil {
			return nil, err
		}
		return a2aTaskOf(j), nil
	case "tasks/cancel":
		j, err := s.a2aTask(ctx, p, params)
		if err != nil {
			return nil, err
		}
		switch {
		case j.Status == store.JobCancelled:
		case store.JobTerminal(j.Status):
			return nil, &rpcError{Code: rpcNotCancelable, Message: "task not cancelable: it is " + j.Status}
		default:
			if j, err = s.research.Cancel(ctx, j.ID); err != nil {
				return nil, err
			}
		}
		return a2aTaskOf(j), nil
	}
	return nil, &rpcError{Code: rpcMethodNotFound, Message: "method not found: " + method}
}

func invalidParams(msg string) *rpcError {
	return &rpcError{Code: rpcInvalidParams, Message: "invalid params: " + msg}
}

func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return invalidParams("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams(err.Error())
	}
	return nil
}

// a2aTask loads the caller's task; anything else (unknown, not a UUID, another account's job,
// public or not) is "task not found".
func (s *Server) a2aTask(ctx context.Context, p auth.Principal, params json.RawMessage) (store.ResearchJob, error) {
	var q struct {
		ID string `json:"id"`
	}
	if err := decodeParams(params, &q); err != nil {
		return store.ResearchJob{}, err
	}
	if q.ID == "" {
		return store.ResearchJob{}, invalidParams("id is required")
	}
	notFound := &rpcError{Code: rpcTaskNotFound, Message: "task not found"}
	j, err := s.store.ResearchJobByID(ctx, q.ID)
	if errors.Is(err, store.ErrNotFound) || err == nil && j.AccountID != p.AccountID && !p.IsAdmin {
		return store.ResearchJob{}, notFound
	}
	return j, err
}

func (s *Server) a2aSend(ctx context.Context, p auth.Principal, params json.RawMessage) (any, error) {
	var q struct {
		Message *struct {
			Role  string `json:"role"`
			Parts []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
		Metadata struct {
			Effort     *string        `json:"effort"`
			ExpertID   *string        `json:"expert_id"`
			JSONSchema map[string]any `json:"json_schema"`
		} `json:"metadata"`
	}
	if err := decodeParams(params, &q); err != nil {
		return nil, err
	}
	if q.Message == nil {
		return nil, invalidParams("message is required")
	}
	var texts []string
	for _, part := range q.Message.Parts {
		if part.Kind == "text" && strings.TrimSpace(part.Text) != "" {
			texts = append(texts, part.Text)
		}
	}
	if len(texts) == 0 {
		return nil, invalidParams("the message has no text part")
	}
	r := jobs.CreateRequest{AccountID: p.AccountID, Tier: p.Tier, APIKey: p.Secret, Question: strings.Join(texts, "\n\n"),
		ExpertID: q.Metadata.ExpertID, JSONSchema: q.Metadata.JSONSchema, RequestID: requestID(ctx)}
	if q.Metadata.Effort != nil {
		r.Effort = *q.Metadata.Effort
	}
	c, err := s.research.Create(ctx, r)
	if err != nil {
		return nil, a2aCreateError(err)
	}
	return a2aTaskOf(c.Job), nil
}

// a2aCreateError maps what POST /research answers as 4xx onto JSON-RPC codes.
func a2aCreateError(err error) error {
	var ve *jobs.ValidationError
	var ce *jobs.CreditsError
	switch {
	case errors.As(err, &ve):
		return &rpcError{Code: rpcInvalidParams, Message: "invalid params: " + ve.Error(), Data: map[string]string{"code": "validation_error", "field": "metadata." + ve.Field}}
	case errors.As(err, &ce), errors.Is(err, billing.ErrInsufficientCredits):
		return &rpcError{Code: rpcNoCredits, Message: "insufficient credits", Data: map[string]string{"code": "insufficient_credits"}}
	case errors.Is(err, jobs.ErrExpertNotFound):
		return &rpcError{Code: rpcInvalidParams, Message: "invalid params: expert not found", Data: map[string]string{"code": "not_found", "field": "metadata.expert_id"}}
	}
	return err
}

// a2aStates maps job statuses to A2A task states (the document's table).
var a2aStates = map[string]string{
	store.JobQueued: "submitted", store.JobInProgress: "working", store.JobPaused: "working",
	store.JobCompleted: "completed", store.JobFailed: "failed", store.JobBlocked: "failed", store.JobCancelled: "canceled",
}

func a2aTaskOf(j store.ResearchJob) map[string]any {
	artifacts := []any{}
	if j.ReportMarkdown != nil {
		parts := []any{map[string]any{"kind": "text", "text": *j.ReportMarkdown}}
		if j.StructuredOutput != nil {
			var so any
			if json.Unmarshal([]byte(*j.StructuredOutput), &so) == nil {
				parts = append(parts, map[string]any{"kind": "data", "data": map[string]any{"structured_output": so}})
			}
		}
		artifactID := j.ID
		if j.ReportSHA != nil {
			artifactID = *j.ReportSHA
		}
		artifacts = append(artifacts, map[string]any{"artifactId": artifactID, "name": "report.md", "parts": parts})
	}
	return map[string]any{
		"kind": "task", "id": j.ID, "contextId": j.ID,
		"status":    map[string]any{"state": a2aStates[j.Status], "timestamp": j.UpdatedAt.UTC()},
		"artifacts": artifacts,
		"metadata":  map[string]any{"slug": j.Slug, "status": j.Status, "effort": j.Effort, "requested_effort": j.RequestedEffort},
	}
}

// GetAgentCard describes the A2A endpoint.
func (s *Server) GetAgentCard(ctx context.Context, _ gen.GetAgentCardRequestObject) (gen.GetAgentCardResponseObject, error) {
	examples := []string{"Which EU member states subsidise heat pumps in 2025?"}
	return gen.GetAgentCard200JSONResponse{
		Name:               "researchd",
		Description:        "Runs asynchronous research jobs and returns a Markdown report with optional structured output.",
		Url:                s.linkBase(ctx) + a2aPath,
		Version:            s.doc.Info.Version,
		ProtocolVersion:    "0.3.0",
		Capabilities:       gen.AgentCardCapabilities{Streaming: false, PushNotifications: false},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/markdown", "application/json"},
		Skills: []gen.AgentCardSkill{{
			Id: "research", Name: "Research", Description: "Researches a question on the web and writes a sourced Markdown report.",
			Tags: []string{"research", "report", "web"}, Examples: &examples,
		}},
		SecuritySchemes: map[string]any{"apiKey": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "rsk-<43 base64url characters>"}},
		Security:        []map[string]any{{"apiKey": []string{}}},
	}, nil
}
