package jobs

import (
	"regexp"
	"strings"
)

// Timeline sanitizing (getResearchTimeline in openapi/v2.json): secrets, raw shell commands and cost/token fields are removed or
// redacted before an event is stored, and again before a response is built (so rows written by an
// older version are covered too).

const redacted = "[REDACTED]"

var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Private key blocks first: they span lines.
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), redacted},
	// Authorization-style headers and assignments, whatever the scheme.
	{regexp.MustCompile(`(?i)\b(authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|secret|password|passwd)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;]+`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`), "Bearer " + redacted},
	// Our API keys, OpenAI-style provider keys, and other well-known token shapes.
	{regexp.MustCompile(`rsk-[A-Za-z0-9_-]{8,}`), "rsk-" + redacted},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{12,}`), "sk-" + redacted},
	{regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})`), redacted},
	// JSON Web Tokens.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`), redacted},
	// URLs with credentials in them.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`), "${1}" + redacted + "@"},
}

// shellPrompt matches a line that shows a raw shell command ("$ rm -rf ..."). Only "$": "#" and
// ">" start Markdown headings and quotes.
var shellPrompt = regexp.MustCompile(`(?m)^(\s*)(\$)\s+\S.*$`)

// shellFence matches a fenced code block of shell commands.
var shellFence = regexp.MustCompile("(?s)```[ \t]*(?:bash|sh|shell|console|zsh|powershell|ps1|cmd)[ \t]*\n.*?(?:```|$)")

// RedactText removes secrets and raw shell commands (prompt lines, shell code blocks) from free text.
func RedactText(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	s = shellFence.ReplaceAllString(s, "```\n[shell commands redacted]\n```")
	return shellPrompt.ReplaceAllString(s, "${1}${2} [command redacted]")
}

// droppedKey reports whether a data field is removed outright: cost and token accounting, raw shell
// commands and anything holding credentials.
func droppedKey(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "command", "commands", "cmd", "shell", "script", "bash", "sh", "argv", "exec", "command_line", "cmdline",
		"cost", "costs", "cost_usd", "total_cost", "price", "usage", "billing", "credits", "tokens", "token_count",
		"authorization", "headers", "api_key", "apikey", "password", "secret", "token", "access_token", "env":
		return true
	}
	for _, part := range strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch part {
		case "cost", "costs", "tokens", "usd", "price", "secret", "password", "apikey":
			return true
		}
	}
	return false
}

// shellTools are tool names whose calls carry raw shell commands.
var shellTools = map[string]bool{"shell": true, "bash": true, "sh": true, "exec": true, "run_command": true, "terminal": true, "command": true, "run_shell": true}

// SanitizeEvent returns the event's title, content and data with secrets, shell commands and
// cost/token fields removed or redacted.
func SanitizeEvent(kind, title, content string, data map[string]any) (string, string, map[string]any) {
	title, content = RedactText(title), RedactText(content)
	if (kind == "tool_call" || kind == "tool_result") && (shellTools[strings.ToLower(title)] || shellTools[toolName(data)]) {
		content = "[shell command redacted]"
	}
	if data == nil {
		return title, content, nil
	}
	clean, _ := sanitizeValue(data).(map[string]any)
	return title, content, clean
}

func toolName(data map[string]any) string {
	if data == nil {
		return ""
	}
	s, _ := data["tool"].(string)
	return strings.ToLower(s)
}

func sanitizeValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if droppedKey(k) {
				continue
			}
			out[k] = sanitizeValue(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = sanitizeValue(x)
		}
		return out
	case string:
		return RedactText(t)
	default:
		return v
	}
}
