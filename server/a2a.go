package server

import (
	"context"
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/a2aserver"
	"github.com/researchd/researchd/gen"
)

// Agent-to-agent (POST /a2a) is package a2aserver: the A2A protocol on a2a-go, v1.0 and v0.3 method
// names on one JSON-RPC endpoint, each task a research job of the caller. Both routes replace the
// generated ones: the endpoint answers every outcome, malformed bodies included, as a JSON-RPC body,
// and the card is the library's union of the v1.0 and v0.3 formats.

const a2aPath = a2aserver.Path

// A2aJsonRpc is never reached: registerA2A serves the route.
func (s *Server) A2aJsonRpc(context.Context, gen.A2aJsonRpcRequestObject) (gen.A2aJsonRpcResponseObject, error) {
	return nil, errors.New("a2a: served by a2aserver")
}

// GetAgentCard is never reached: registerA2A serves the route.
func (s *Server) GetAgentCard(context.Context, gen.GetAgentCardRequestObject) (gen.GetAgentCardResponseObject, error) {
	return nil, errors.New("agent card: served by a2aserver")
}

// registerA2A mounts the JSON-RPC endpoint and the agent card over the generated routes. The
// middleware chain (authentication with scope research, rate limits, body limit) runs as for any
// route; request validation skips the JSON-RPC body (validateRequests).
func (s *Server) registerA2A(e *echo.Echo) {
	rpc := a2aserver.New(a2aserver.Config{Tasks: s.a2aTasks, Jobs: s.research, Logger: s.log, RequestID: requestID, Limits: s.a2aLimits})
	e.POST(a2aPath, echo.WrapHandler(rpc))
	card := a2aserver.CardHandler(func(ctx context.Context) *a2a.AgentCard {
		return a2aserver.Card(s.linkBase(ctx)+a2aPath, s.doc.Info.Version)
	})
	e.GET(a2aserver.CardPath, echo.WrapHandler(card))
}
