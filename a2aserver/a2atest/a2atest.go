// Package a2atest connects off-the-shelf A2A clients (a2a-go's a2aclient) to a running researchd,
// for tests: one client speaking protocol v1.0 and one speaking v0.3, both found through the
// public agent card.
package a2atest

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// Versions are the protocol versions a test runs under.
var Versions = []a2a.ProtocolVersion{a2a.Version, a2av0.Version}

// bearer adds an API key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// Card fetches the agent card from baseURL (no credentials: it is public).
func Card(ctx context.Context, baseURL string) (*a2a.AgentCard, error) {
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	return card, nil
}

// Client returns a client of the given protocol version for card, authenticated with key.
func Client(ctx context.Context, card *a2a.AgentCard, version a2a.ProtocolVersion, key string) (*a2aclient.Client, error) {
	hc := &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}}
	var transport a2aclient.FactoryOption
	switch version {
	case a2a.Version:
		transport = a2aclient.WithJSONRPCTransport(hc)
	case a2av0.Version:
		transport = a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc})
	default:
		return nil, fmt.Errorf("no client for protocol %s", version)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), transport)
	if err != nil {
		return nil, fmt.Errorf("a2a client %s: %w", version, err)
	}
	return c, nil
}
