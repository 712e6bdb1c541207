package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BuiltinServer is the server name of the engine's own tools.
const BuiltinServer = "builtin"

// DefaultCategory is the category of a server tool whose _meta names none.
const DefaultCategory = "mcp"

// Tool is a grantable tool.
type Tool struct {
	Name        string // what mcp_tool_names holds: the built-in name, or "<server>.<tool>"
	Server      string
	Category    string
	Description string
	AlwaysOn    bool           // available to every run without a grant (the built-in tools)
	InputSchema map[string]any // the JSON Schema of the arguments (server tools)
}

// BuiltinTools are the tools the openai engine gives every run (engine/llm/openai.go); fetch says
// whether fetch_url is offered (the engine has a fetch client).
func BuiltinTools(fetch bool) []Tool {
	tools := []Tool{
		{Name: "search_files", Category: "files", Description: "Rank passages of the job's files (input files and expert context files) by relevance to a query (BM25); returns passages with their file path and line range."},
		{Name: "read_file", Category: "files", Description: "Read numbered lines of one of the job's files."},
		{Name: "write_file", Category: "workspace", Description: "Write a text file into the job's workspace (not under input_files/); it is committed with the run's checkpoints."},
	}
	if fetch {
		tools = append(tools, Tool{Name: "fetch_url", Category: "web", Description: "Fetch a public http(s) URL (private and loopback addresses refused) and return its text; HTML and PDF are converted to text."})
	}
	for i := range tools {
		tools[i].Server, tools[i].AlwaysOn = BuiltinServer, true
	}
	return tools
}

// WithWebSearch adds the web_search built-in to a tool list (when a search provider is configured
// and the engine offers it as a tool).
func WithWebSearch(tools []Tool) []Tool {
	return append(tools, Tool{Name: "web_search", Category: "web", Server: BuiltinServer, AlwaysOn: true,
		Description: "Search the web through the operator's search provider (SearXNG, Brave or Tavily); returns titles, URLs and snippets to fetch."})
}

// Config configures a Registry.
type Config struct {
	Builtin []Tool         // listed as they are (BuiltinTools)
	Servers []ServerConfig // RESEARCH_MCP_SERVERS
	// TTL is how long a server's tool list is reused (0: 5 minutes); a failed fetch is retried
	// after at most RetryAfter (0: 30 seconds) so a server that is down is not asked on every request.
	TTL, RetryAfter time.Duration
	// Timeout bounds each exchange with a server: connecting plus listing, or one call (0: 10 seconds).
	Timeout    time.Duration
	HTTPClient *http.Client // for streamable HTTP servers (nil: a client with Timeout)
	Logger     *slog.Logger
	Now        func() time.Time
}

// Registry is the tool list and the way to call server tools. Safe for concurrent use.
type Registry struct {
	cfg     Config
	client  *mcp.Client
	servers map[string]*server
	order   []string
}

// server is one configured MCP server with its cached tool list.
type server struct {
	cfg ServerConfig
	// mu serialises refreshes so concurrent requests wait for one fetch instead of each starting one.
	mu        sync.Mutex
	tools     []Tool
	nextFetch time.Time // when the cache is stale (after a success) or worth retrying (after a failure)
}

// New returns a registry; nothing is fetched until the first list.
func New(cfg Config) *Registry {
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Minute
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 30 * time.Second
	}
	cfg.RetryAfter = min(cfg.RetryAfter, cfg.TTL)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		// The client's own timeout also bounds what the SDK sends outside our contexts (closing a
		// session), so a server that stops answering cannot hold a request longer than Timeout.
		cfg.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	}
	r := &Registry{
		cfg:     cfg,
		client:  mcp.NewClient(&mcp.Implementation{Name: "researchd", Version: "2"}, nil),
		servers: map[string]*server{},
	}
	for _, sc := range cfg.Servers {
		r.servers[sc.Name] = &server{cfg: sc}
		r.order = append(r.order, sc.Name)
	}
	return r
}

// Filter narrows a list: Query is a case-insensitive substring of name or description; Server and
// Category are exact; Limit caps the items (the total counts every match).
type Filter struct {
	Query, Server, Category string
	Limit                   int
}

// List returns the tools matching f, sorted by server then name, and how many match. A server that
// cannot be reached contributes its last good list, or nothing; it never fails the list.
func (r *Registry) List(ctx context.Context, f Filter) ([]Tool, int) {
	q := strings.ToLower(f.Query)
	var hits []Tool
	for _, t := range r.all(ctx, f.Server) {
		if f.Server != "" && t.Server != f.Server || f.Category != "" && t.Category != f.Category {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(t.Name), q) && !strings.Contains(strings.ToLower(t.Description), q) {
			continue
		}
		hits = append(hits, t)
	}
	slices.SortFunc(hits, func(a, b Tool) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	total := len(hits)
	if f.Limit > 0 && len(hits) > f.Limit {
		hits = hits[:f.Limit]
	}
	return hits, total
}

// Lookup returns the tools among names that exist (built-in or of a reachable server), by name.
func (r *Registry) Lookup(ctx context.Context, names []string) map[string]Tool {
	want := map[string]bool{}
	servers := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if s, _, ok := strings.Cut(n, "."); ok {
			servers[s] = true
		}
	}
	out := map[string]Tool{}
	for _, t := range r.cfg.Builtin {
		if want[t.Name] {
			out[t.Name] = t
		}
	}
	for s := range servers {
		for _, t := range r.serverTools(ctx, s) {
			if want[t.Name] {
				out[t.Name] = t
			}
		}
	}
	return out
}

// Unknown returns the names (in the order given, once each) that are not tools of this registry.
// A tool of a server that is down and was never listed counts as unknown.
func (r *Registry) Unknown(ctx context.Context, names []string) ([]string, error) {
	known := r.Lookup(ctx, names)
	var out []string
	for _, n := range names {
		if _, ok := known[n]; !ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// all is the built-in tools plus every server's (or only the named server's) tools, fetched in parallel.
func (r *Registry) all(ctx context.Context, only string) []Tool {
	out := slices.Clone(r.cfg.Builtin)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range r.order {
		if only != "" && name != only {
			continue
		}
		wg.Go(func() {
			tools := r.serverTools(ctx, name)
			mu.Lock()
			out = append(out, tools...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// serverTools returns a server's tools from the cache, refreshing it when stale.
func (r *Registry) serverTools(ctx context.Context, name string) []Tool {
	s := r.servers[name]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := r.cfg.Now()
	if now.Before(s.nextFetch) {
		return s.tools
	}
	tools, err := r.fetch(ctx, s.cfg)
	if err != nil {
		if ctx.Err() == nil { // the caller going away says nothing about the server
			r.cfg.Logger.WarnContext(ctx, "MCP server tool list unavailable; using the last good list", "server", name,
				"cached_tools", len(s.tools), "error", err)
			s.nextFetch = now.Add(r.cfg.RetryAfter)
		}
		return s.tools
	}
	s.tools, s.nextFetch = tools, now.Add(r.cfg.TTL)
	return s.tools
}

// fetch connects to a server and lists all its tools (every page) within the timeout.
func (r *Registry) fetch(ctx context.Context, sc ServerConfig) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	cs, err := r.connect(ctx, sc)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var out []Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools of MCP server %s: %w", sc.Name, err)
		}
		out = append(out, toolOf(sc.Name, t))
	}
	return out, nil
}

func toolOf(server string, t *mcp.Tool) Tool {
	category := DefaultCategory
	if c, ok := t.Meta["category"].(string); ok && strings.TrimSpace(c) != "" {
		category = c
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	var schema map[string]any
	if m, ok := t.InputSchema.(map[string]any); ok {
		schema = m
	}
	return Tool{Name: server + "." + t.Name, Server: server, Category: category, Description: desc, InputSchema: schema}
}

func (r *Registry) connect(ctx context.Context, sc ServerConfig) (*mcp.ClientSession, error) {
	var t mcp.Transport
	switch sc.Transport {
	case TransportHTTP:
		// Request/response only: a standing SSE stream would outlive this short exchange.
		t = &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: r.cfg.HTTPClient, DisableStandaloneSSE: true, MaxRetries: -1}
	case TransportStdio:
		// A fresh process per exchange: exec.Cmd runs once, and no process lingers between runs.
		t = &mcp.CommandTransport{Command: exec.Command(sc.Command[0], sc.Command[1:]...), TerminateDuration: 2 * time.Second}
	default:
		return nil, fmt.Errorf("MCP server %s: unknown transport %q", sc.Name, sc.Transport)
	}
	cs, err := r.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to MCP server %s: %w", sc.Name, err)
	}
	return cs, nil
}

// ErrUnknownTool: the name is not a tool of a configured MCP server.
var ErrUnknownTool = errors.New("unknown MCP tool")

// Call runs a server tool ("<server>.<tool>") with args. result is the tool's text (its text
// content, else its structured content as JSON); isError is the tool's own failure report, which
// belongs to the model like any result. err is for everything else: an unknown tool, a server that
// cannot be reached, a protocol error.
func (r *Registry) Call(ctx context.Context, name string, args map[string]any) (result string, isError bool, err error) {
	srv, tool, ok := strings.Cut(name, ".")
	s := r.servers[srv]
	if !ok || s == nil || tool == "" {
		return "", false, fmt.Errorf("%q: %w", name, ErrUnknownTool)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	cs, err := r.connect(ctx, s.cfg)
	if err != nil {
		return "", false, err
	}
	defer cs.Close()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, fmt.Errorf("call %s: %w", name, err)
	}
	return resultText(res), res.IsError, nil
}

// resultText flattens a tool result for a model: text parts as they are, other parts described.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", v.Name, v.URI))
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", v.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}
