package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestSkills(t *testing.T) {
	t.Parallel()
	catalog, err := skill.Catalog()
	require.NoError(t, err)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			alice := env.NewAccount(t, store.TierFree, false, 0)
			bob := env.NewAccount(t, store.TierFree, false, 0)
			do := func(tok, method, path string, body any) *servertest.Resp {
				return env.Do(t, servertest.Req{Method: method, Path: path, Token: tok, Body: body})
			}

			// The catalogue alone.
			r := do(alice.Key, "GET", "/api/v2/experts/skills", nil)
			require.Equal(t, http.StatusOK, r.Status)
			var list gen.SkillList
			r.JSON(t, &list)
			require.Equal(t, len(catalog), list.Total)
			require.Len(t, list.Items, len(catalog))
			for _, it := range list.Items {
				require.Equal(t, gen.SkillSummaryOwnerBuiltin, it.Owner)
			}

			// Create: front matter optional, request fields win, category defaults to custom.
			r = do(alice.Key, "POST", "/api/v2/experts/skills", map[string]any{
				"name": "vendor-rubric", "description": "Apply our vendor risk rubric.", "category": "procurement",
				"content": "---\nname: something-else\ndescription: old\nallowed-tools: read_file\n---\n\n# Vendor rubric\n\nHigh risk when...\n",
			})
			require.Equal(t, http.StatusCreated, r.Status)
			var wrote gen.SkillWriteResponse
			r.JSON(t, &wrote)
			require.Equal(t, gen.SkillWriteResponse{Name: "vendor-rubric", Created: true}, wrote)
			r = do(alice.Key, "POST", "/api/v2/experts/skills", map[string]any{
				"name": "weekly-digest", "description": "Format findings as a weekly digest.", "content": "# Weekly digest\n\nGroup findings by theme.",
			})
			require.Equal(t, http.StatusCreated, r.Status)

			r = do(alice.Key, "GET", "/api/v2/experts/skills/vendor-rubric", nil)
			require.Equal(t, http.StatusOK, r.Status)
			var got gen.Skill
			r.JSON(t, &got)
			require.Equal(t, gen.Skill{Name: "vendor-rubric", Description: "Apply our vendor risk rubric.", Category: "procurement", Owner: gen.SkillOwnerOwn,
				Content: "---\nname: vendor-rubric\ndescription: Apply our vendor risk rubric.\nallowed-tools: read_file\nmetadata:\n  category: procurement\n---\n\n# Vendor rubric\n\nHigh risk when...\n"}, got)

			// Same name: overwritten, 200 created false.
			r = do(alice.Key, "POST", "/api/v2/experts/skills", map[string]any{
				"name": "vendor-rubric", "description": "Our rubric, v2.", "category": nil, "content": "# v2\n\nMedium risk when...",
			})
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &wrote)
			require.Equal(t, gen.SkillWriteResponse{Name: "vendor-rubric", Created: false}, wrote)
			r = do(alice.Key, "GET", "/api/v2/experts/skills/vendor-rubric", nil)
			r.JSON(t, &got)
			require.Equal(t, "Our rubric, v2.", got.Description)
			require.Equal(t, "custom", got.Category)
			require.Contains(t, got.Content, "Medium risk when")

			// A catalogue skill reads by name; a catalogue name cannot be taken.
			r = do(alice.Key, "GET", "/api/v2/experts/skills/market-sizing", nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &got)
			require.Equal(t, gen.SkillOwnerBuiltin, got.Owner)
			require.Equal(t, "market", got.Category)
			require.Equal(t, catalog["market-sizing"].Content, got.Content)
			r = do(alice.Key, "POST", "/api/v2/experts/skills", map[string]any{"name": "market-sizing", "description": "mine", "content": "# x"})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "skill_name_taken", r.Problem(t).Code)

			// Filters and totals.
			for _, tc := range []struct {
				query string
				names []string
				total int
			}{
				{"?category=custom", []string{"vendor-rubric", "weekly-digest"}, 2},
				{"?category=custom&limit=1", []string{"vendor-rubric"}, 2},
				{"?query=DIGEST", []string{"weekly-digest"}, 1},
				{"?query=rubric&category=custom", []string{"vendor-rubric"}, 1},
				{"?category=verification", []string{"citation-checking", "fact-checking"}, 2},
				{"?category=none-such", []string{}, 0},
			} {
				r = do(alice.Key, "GET", "/api/v2/experts/skills"+tc.query, nil)
				require.Equal(t, http.StatusOK, r.Status, tc.query)
				r.JSON(t, &list)
				names := []string{}
				for _, it := range list.Items {
					names = append(names, it.Name)
				}
				require.Equal(t, tc.names, names, tc.query)
				require.Equal(t, tc.total, list.Total, tc.query)
			}
			r = do(alice.Key, "GET", "/api/v2/experts/skills", nil)
			r.JSON(t, &list)
			require.Equal(t, len(catalog)+2, list.Total)

			// Another account sees none of alice's skills and may use the same name for its own.
			r = do(bob.Key, "GET", "/api/v2/experts/skills/vendor-rubric", nil)
			require.Equal(t, http.StatusNotFound, r.Status)
			r = do(bob.Key, "GET", "/api/v2/experts/skills?category=custom", nil)
			r.JSON(t, &list)
			require.Zero(t, list.Total)
			r = do(bob.Key, "POST", "/api/v2/experts/skills", map[string]any{"name": "vendor-rubric", "description": "Bob's.", "content": "# Bob"})
			require.Equal(t, http.StatusCreated, r.Status)
			require.Equal(t, http.StatusNotFound, do(alice.Key, "GET", "/api/v2/experts/skills/no-such-skill", nil).Status)

			// A key without the experts scope is refused.
			research := env.Key(t, alice.ID, "research")
			require.Equal(t, http.StatusForbidden, do(research, "GET", "/api/v2/experts/skills", nil).Status)
		})
	}
}

func TestCreateSkillInvalid(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	a := env.NewAccount(t, store.TierFree, false, 0)
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		msg   string // part of the message
	}{
		{"consecutive hyphens", map[string]any{"name": "a--b", "description": "d", "content": "# x"}, "name", "hyphens"},
		{"trailing hyphen", map[string]any{"name": "ab-", "description": "d", "content": "# x"}, "name", "hyphen"},
		{"uppercase", map[string]any{"name": "Ab", "description": "d", "content": "# x"}, "name", ""},
		{"unknown field", map[string]any{"name": "ab", "description": "d", "content": "# x", "tags": []string{"x"}}, "", ""},
		{"blank description", map[string]any{"name": "ab", "description": "   ", "content": "# x"}, "description", "required"},
		{"unclosed front matter", map[string]any{"name": "ab", "description": "d", "content": "---\nname: ab\n# x"}, "content", "never closed"},
		{"bad yaml", map[string]any{"name": "ab", "description": "d", "content": "---\nname: [ab\n---\n# x"}, "content", "YAML"},
		{"unknown front-matter key", map[string]any{"name": "ab", "description": "d", "content": "---\ntriggers: x\n---\n# x"}, "content", "triggers"},
		{"metadata not strings", map[string]any{"name": "ab", "description": "d", "content": "---\nmetadata:\n  version: 2\n---\n# x"}, "content", "metadata.version"},
		{"no body", map[string]any{"name": "ab", "description": "d", "content": "---\nlicense: MIT\n---\n"}, "content", "no instructions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/skills", Token: a.Key, Body: tc.body})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			p := r.Problem(t)
			require.Equal(t, "validation_error", p.Code)
			if tc.field != "" {
				require.NotNil(t, p.Errors)
				require.Equal(t, tc.field, (*p.Errors)[0].Field)
				require.Contains(t, (*p.Errors)[0].Message, tc.msg)
			}
		})
	}
	// Nothing was written.
	r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/skills?category=custom", Token: a.Key})
	var list gen.SkillList
	r.JSON(t, &list)
	require.Zero(t, list.Total)
	r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/skills/" + strings.Repeat("a", 65), Token: a.Key})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)
}

func TestListMcpTools(t *testing.T) {
	t.Parallel()
	mcpServer := mcp.NewServer(&mcp.Implementation{Name: "sec", Version: "1"}, nil)
	mcp.AddTool(mcpServer, &mcp.Tool{Name: "filings", Description: "Fetch SEC EDGAR filings by ticker.", Meta: mcp.Meta{"category": "finance"}},
		func(context.Context, *mcp.CallToolRequest, struct {
			Ticker string `json:"ticker"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "10-K"}}}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpServer }, nil))
	t.Cleanup(ts.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()

	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d, func(c *servertest.Config) {
				c.App.Tools = mcptool.Config{
					Builtin: mcptool.BuiltinTools(true),
					Servers: []mcptool.ServerConfig{
						{Name: "sec", Transport: mcptool.TransportHTTP, URL: ts.URL},
						{Name: "down", Transport: mcptool.TransportHTTP, URL: down.URL},
					},
				}
			})
			a := env.NewAccount(t, store.TierFree, false, 0)
			for _, tc := range []struct {
				query string
				want  []gen.McpTool
				total int
			}{
				{"?server=sec", []gen.McpTool{{Name: "sec.filings", Server: "sec", Category: "finance", Description: "Fetch SEC EDGAR filings by ticker."}}, 1},
				{"?category=web", []gen.McpTool{{Name: "fetch_url", Server: "builtin", Category: "web", AlwaysOn: true,
					Description: mcptool.BuiltinTools(true)[3].Description}}, 1},
				{"?query=edgar", []gen.McpTool{{Name: "sec.filings", Server: "sec", Category: "finance", Description: "Fetch SEC EDGAR filings by ticker."}}, 1},
				{"?server=down", []gen.McpTool{}, 0},
			} {
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/mcp-tools" + tc.query, Token: a.Key})
				require.Equal(t, http.StatusOK, r.Status, tc.query)
				var list gen.McpToolList
				r.JSON(t, &list)
				require.Equal(t, tc.want, list.Items, tc.query)
				require.Equal(t, tc.total, list.Total, tc.query)
			}
			r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/mcp-tools?limit=2", Token: a.Key})
			var list gen.McpToolList
			r.JSON(t, &list)
			require.Equal(t, 5, list.Total)
			require.Equal(t, []string{"fetch_url", "read_file"}, []string{list.Items[0].Name, list.Items[1].Name})
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/mcp-tools?limit=0", Token: a.Key})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, http.StatusUnauthorized, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/mcp-tools"}).Status)
		})
	}
}

// The default configuration lists the built-in tools only.
func TestListMcpToolsDefault(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	a := env.NewAccount(t, store.TierFree, false, 0)
	r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/experts/mcp-tools", Token: a.Key})
	var list gen.McpToolList
	r.JSON(t, &list)
	require.Equal(t, 3, list.Total)
	for _, it := range list.Items {
		require.Equal(t, "builtin", it.Server)
		require.True(t, it.AlwaysOn)
	}
}
