package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Path is the JSON-RPC endpoint's path; CardPath the agent card's.
const (
	Path     = "/api/v2/a2a"
	CardPath = a2asrv.WellKnownAgentCardPath
)

// Config wires the endpoint.
type Config struct {
	// Tasks keep the protocol's side of each task (NewTaskStore; app.Build builds it).
	Tasks *TaskStore
	Jobs  Jobs
	// Logger: nil is slog.Default().
	Logger *slog.Logger
	// RequestID returns the X-Request-ID of a request's context, kept on the job it creates.
	RequestID func(context.Context) string
	// KeepAlive is the interval of keep-alive comments on a quiet stream; 0: 15s.
	KeepAlive time.Duration
	// Limits bound the tasks this process follows at once; zero fields: the defaults.
	Limits Limits
}

// New returns the JSON-RPC endpoint (v1.0 and v0.3 method names on one URL). Requests must carry the
// caller (auth.WithPrincipal) in their context.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	tasks := cfg.Tasks
	// Executions and streams follow jobs through the process's one follower (Jobs.Follow), woken
	// by the writes: none of them polls the database.
	exec := &Executor{jobs: cfg.Jobs, requestID: cfg.RequestID, slots: newSlots(cfg.Limits)}
	caps := Capabilities
	h := &handler{
		RequestHandler: a2asrv.NewHandler(exec, a2asrv.WithTaskStore(tasks), a2asrv.WithCapabilityChecks(&caps), a2asrv.WithLogger(cfg.Logger)),
		jobs:           cfg.Jobs, tasks: tasks, follow: cfg.Jobs, log: cfg.Logger,
	}
	keepAlive := a2asrv.WithTransportKeepAlive(cfg.KeepAlive)
	return &endpoint{v1: a2asrv.NewJSONRPCHandler(h, keepAlive), v0: a2av0.NewJSONRPCHandler(h, keepAlive), log: cfg.Logger}
}

// CardHandler serves the public agent card built per request (its URLs follow the request's base),
// in the union of the v1.0 and v0.3 formats so clients of either version read it.
func CardHandler(card func(context.Context) *a2a.AgentCard) http.Handler {
	return a2asrv.NewAgentCardHandler(unionCard{a2av0.NewAgentCardProducer(a2asrv.AgentCardProducerFn(
		func(ctx context.Context) (*a2a.AgentCard, error) { return card(ctx), nil }))})
}

// unionCard completes the library's union card (v2.4.0): its security schemes carry the v0.3 fields
// and the v1.0 scheme under "http", where a v1.0 card (and a2a-go's own v1.0 card parser) has
// "httpAuthSecurityScheme"; both keys are served.
type unionCard struct{ a2asrv.AgentCardProducer }

func (u unionCard) CardJSON(ctx context.Context) ([]byte, error) {
	b, err := u.AgentCardProducer.(a2asrv.AgentCardJSONProducer).CardJSON(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	var card map[string]json.RawMessage
	if err := json.Unmarshal(b, &card); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	var schemes map[string]map[string]json.RawMessage
	if err := json.Unmarshal(card["securitySchemes"], &schemes); err != nil {
		return nil, fmt.Errorf("agent card security schemes: %w", err)
	}
	for _, s := range schemes {
		if v1, ok := s["http"]; ok {
			s["httpAuthSecurityScheme"] = v1
		}
	}
	if card["securitySchemes"], err = json.Marshal(schemes); err != nil {
		return nil, fmt.Errorf("agent card security schemes: %w", err)
	}
	return json.MarshalIndent(card, "", "  ")
}

// Card describes the agent whose JSON-RPC endpoint is at url: one research skill, API keys as
// bearer tokens, streaming, and both protocol versions on the same URL.
func Card(url, version string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "researchd",
		Description: "Runs research jobs and returns a sourced Markdown report with optional structured output. Each task is a research job of the caller, also visible under /api/v2/research.",
		Version:     version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       Capabilities,
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/markdown", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "research", Name: "Research",
			Description: "Researches the question in the message's text and writes a sourced Markdown report. Request metadata may set effort (low, medium, high, build), expert_id and json_schema as in POST /api/v2/research.",
			Tags:        []string{"research", "report", "web"},
			Examples:    []string{"Which EU member states subsidise heat pumps in 2025?"},
		}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"apiKey": a2a.HTTPAuthSecurityScheme{
			Scheme: "bearer", BearerFormat: "rsk-<43 base64url characters>",
			Description: "An API key with the research scope: Authorization: Bearer rsk-...",
		}},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"apiKey": a2a.SecuritySchemeScopes{}}},
	}
}
