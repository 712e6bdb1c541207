// Package mcptool lists the tools an expert can be granted: the engine's built-in tools and the tools
// of the MCP servers the operator configured (RESEARCH_MCP_SERVERS), fetched with the official MCP
// Go SDK and cached per server. It also calls those tools for the engine during a run.
//
// A server's tool is named "<server>.<tool>": server names carry no dot, so the name is unambiguous
// across servers and never collides with a built-in tool.
package mcptool

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Transports of an MCP server.
const (
	TransportHTTP  = "http"  // streamable HTTP
	TransportStdio = "stdio" // a local command speaking MCP on stdin/stdout
)

// ServerConfig is one operator-configured MCP server.
type ServerConfig struct {
	Name      string
	Transport string   // TransportHTTP or TransportStdio
	URL       string   // for TransportHTTP
	Command   []string // for TransportStdio: the program and its arguments
}

var serverName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ParseServers reads RESEARCH_MCP_SERVERS: a comma-separated list of name=https://... (streamable
// HTTP) or name=stdio:/path/to/command [args...] entries. Names are unique, lowercase letters,
// digits, hyphens and underscores, and "builtin" is reserved.
func ParseServers(spec string) ([]ServerConfig, error) {
	var out []ServerConfig
	seen := map[string]bool{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, target, ok := strings.Cut(entry, "=")
		name, target = strings.TrimSpace(name), strings.TrimSpace(target)
		if !ok || target == "" {
			return nil, fmt.Errorf("MCP server %q: want name=https://... or name=stdio:/path/to/command", entry)
		}
		if !serverName.MatchString(name) || name == BuiltinServer {
			return nil, fmt.Errorf("MCP server name %q: want lowercase letters, digits, '-' or '_' (not %q)", name, BuiltinServer)
		}
		if seen[name] {
			return nil, fmt.Errorf("MCP server %q is listed twice", name)
		}
		seen[name] = true
		if cmd, isStdio := strings.CutPrefix(target, "stdio:"); isStdio {
			argv := strings.Fields(cmd)
			if len(argv) == 0 || !strings.HasPrefix(argv[0], "/") {
				return nil, fmt.Errorf("MCP server %q: stdio needs an absolute command path", name)
			}
			out = append(out, ServerConfig{Name: name, Transport: TransportStdio, Command: argv})
			continue
		}
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("MCP server %q: %q is neither an http(s) URL nor stdio:/path", name, target)
		}
		out = append(out, ServerConfig{Name: name, Transport: TransportHTTP, URL: target})
	}
	return out, nil
}
