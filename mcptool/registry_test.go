package mcptool_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/mcptool"
)

const stdioServerArg = "mcptool-stdio-server"

// TestMain doubles as a stdio MCP server: the stdio tests run this test binary with stdioServerArg.
func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if a == stdioServerArg {
			if err := newMCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// newMCPServer is a real MCP server with three tools: echo (text), fail (a tool error) and lookup
// (structured output, with a category in _meta).
func newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the upstream is closed")
		})
	type filing struct {
		Ticker string `json:"ticker"`
		Form   string `json:"form"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sec_filings", Description: "Fetch SEC EDGAR filings by ticker.", Meta: mcp.Meta{"category": "finance"}},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Ticker string `json:"ticker"`
		}) (*mcp.CallToolResult, filing, error) {
			return nil, filing{Ticker: in.Ticker, Form: "10-K"}, nil
		})
	return s
}

// serveHTTP serves s over streamable HTTP on loopback.
func serveHTTP(t *testing.T, s *mcp.Server) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// clock is a fake clock for the cache.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func names(tools []mcptool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestParseServers(t *testing.T) {
	t.Parallel()
	got, err := mcptool.ParseServers(" sec=https://mcp.example.com/mcp , local=stdio:/usr/bin/tool --flag x,, ")
	require.NoError(t, err)
	require.Equal(t, []mcptool.ServerConfig{
		{Name: "sec", Transport: mcptool.TransportHTTP, URL: "https://mcp.example.com/mcp"},
		{Name: "local", Transport: mcptool.TransportStdio, Command: []string{"/usr/bin/tool", "--flag", "x"}},
	}, got)
	none, err := mcptool.ParseServers("")
	require.NoError(t, err)
	require.Empty(t, none)
	for _, bad := range []string{
		"sec", "sec=", "=https://x", "Sec=https://x", "a.b=https://x", "builtin=https://x",
		"a=https://x,a=https://y", "a=ftp://x", "a=stdio:", "a=stdio:relative/cmd", "a=https://",
	} {
		_, err := mcptool.ParseServers(bad)
		require.Error(t, err, bad)
	}
}

func TestListAndCall(t *testing.T) {
	t.Parallel()
	mcpServer := newMCPServer()
	ts := serveHTTP(t, mcpServer)
	clk := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	reg := mcptool.New(mcptool.Config{
		Builtin: mcptool.BuiltinTools(true),
		Servers: []mcptool.ServerConfig{{Name: "sec", Transport: mcptool.TransportHTTP, URL: ts.URL}},
		TTL:     time.Minute, Logger: quiet(), Now: clk.Now,
	})
	ctx := context.Background()

	all, total := reg.List(ctx, mcptool.Filter{})
	require.Equal(t, 7, total)
	require.Equal(t, []string{"fetch_url", "read_file", "search_files", "write_file", "sec.echo", "sec.fail", "sec.sec_filings"}, names(all))
	require.True(t, all[0].AlwaysOn)
	require.Equal(t, mcptool.Tool{Name: "sec.sec_filings", Server: "sec", Category: "finance", Description: "Fetch SEC EDGAR filings by ticker.",
		InputSchema: all[6].InputSchema}, all[6])
	require.Equal(t, "object", all[6].InputSchema["type"])
	require.Equal(t, mcptool.DefaultCategory, all[4].Category)
	require.False(t, all[4].AlwaysOn)

	for _, tc := range []struct {
		f     mcptool.Filter
		want  []string
		total int
	}{
		{mcptool.Filter{Server: "sec"}, []string{"sec.echo", "sec.fail", "sec.sec_filings"}, 3},
		{mcptool.Filter{Category: "finance"}, []string{"sec.sec_filings"}, 1},
		{mcptool.Filter{Query: "EDGAR"}, []string{"sec.sec_filings"}, 1},
		{mcptool.Filter{Query: "file"}, []string{"read_file", "search_files", "write_file"}, 3},
		{mcptool.Filter{Query: "ECHO"}, []string{"sec.echo"}, 1},
		{mcptool.Filter{Server: "builtin", Limit: 2}, []string{"fetch_url", "read_file"}, 4},
		{mcptool.Filter{Server: "nope"}, []string{}, 0},
	} {
		got, total := reg.List(ctx, tc.f)
		require.Equal(t, tc.want, names(got), "%+v", tc.f)
		require.Equal(t, tc.total, total, "%+v", tc.f)
	}

	unknown, err := reg.Unknown(ctx, []string{"fetch_url", "sec.echo", "echo", "other.echo", "sec.nope", "echo"})
	require.NoError(t, err)
	require.Equal(t, []string{"echo", "other.echo", "sec.nope"}, unknown)

	out, isErr, err := reg.Call(ctx, "sec.echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	require.False(t, isErr)
	require.Equal(t, "echo: hi", out)
	out, isErr, err = reg.Call(ctx, "sec.fail", nil)
	require.NoError(t, err)
	require.True(t, isErr)
	require.Contains(t, out, "the upstream is closed")
	out, isErr, err = reg.Call(ctx, "sec.sec_filings", map[string]any{"ticker": "ACME"})
	require.NoError(t, err)
	require.False(t, isErr)
	require.JSONEq(t, `{"ticker":"ACME","form":"10-K"}`, out)
	for _, name := range []string{"fetch_url", "other.echo", "sec.", "sec"} {
		_, _, err = reg.Call(ctx, name, nil)
		require.ErrorIs(t, err, mcptool.ErrUnknownTool, name)
	}

	// The list is cached until the TTL passes.
	mcpServer.AddTool(&mcp.Tool{Name: "added", Description: "Added later.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	_, total = reg.List(ctx, mcptool.Filter{Server: "sec"})
	require.Equal(t, 3, total)
	clk.Add(time.Minute)
	_, total = reg.List(ctx, mcptool.Filter{Server: "sec"})
	require.Equal(t, 4, total)

	// A server that goes down keeps its last good list; calls fail with an error.
	ts.Close()
	clk.Add(time.Hour)
	got, total := reg.List(ctx, mcptool.Filter{Server: "sec"})
	require.Equal(t, 4, total)
	require.Equal(t, "sec.added", got[0].Name)
	_, _, err = reg.Call(ctx, "sec.echo", map[string]any{"text": "hi"})
	require.Error(t, err)
	require.NotErrorIs(t, err, mcptool.ErrUnknownTool)
}

func TestUnreachableServers(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	// A server that accepts the request and never answers: the per-server timeout ends the wait.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	reg := mcptool.New(mcptool.Config{
		Builtin: mcptool.BuiltinTools(false),
		Servers: []mcptool.ServerConfig{
			{Name: "down", Transport: mcptool.TransportHTTP, URL: down.URL},
			{Name: "hang", Transport: mcptool.TransportHTTP, URL: hang.URL},
			{Name: "gone", Transport: mcptool.TransportStdio, Command: []string{filepath.Join(t.TempDir(), "missing")}},
		},
		Timeout: 200 * time.Millisecond, Logger: quiet(),
	})
	got, total := reg.List(context.Background(), mcptool.Filter{})
	require.Equal(t, []string{"read_file", "search_files", "write_file"}, names(got))
	require.Equal(t, 3, total)
	unknown, err := reg.Unknown(context.Background(), []string{"down.x", "read_file"})
	require.NoError(t, err)
	require.Equal(t, []string{"down.x"}, unknown)
}

func TestStdioServer(t *testing.T) {
	t.Parallel()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	reg := mcptool.New(mcptool.Config{
		Servers: []mcptool.ServerConfig{{Name: "local", Transport: mcptool.TransportStdio, Command: []string{self, stdioServerArg}}},
		Logger:  quiet(),
	})
	ctx := context.Background()
	got, total := reg.List(ctx, mcptool.Filter{})
	require.Equal(t, 3, total)
	require.Equal(t, []string{"local.echo", "local.fail", "local.sec_filings"}, names(got))
	out, isErr, err := reg.Call(ctx, "local.echo", map[string]any{"text": "over stdio"})
	require.NoError(t, err)
	require.False(t, isErr)
	require.Equal(t, "echo: over stdio", out)
}
