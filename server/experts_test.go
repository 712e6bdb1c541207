package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// nameSet is a tiny real skill and tool catalogue.
type nameSet []string

func (n nameSet) unknown(names []string) []string {
	var out []string
	for _, x := range names {
		if !slices.Contains(n, x) {
			out = append(out, x)
		}
	}
	return out
}

type testSkills nameSet

func (s testSkills) Unknown(_ context.Context, _ string, names []string) ([]string, error) {
	return nameSet(s).unknown(names), nil
}

type testTools nameSet

func (s testTools) Unknown(_ context.Context, names []string) ([]string, error) {
	return nameSet(s).unknown(names), nil
}

type expertEnv struct {
	*servertest.Env
}

func newExpertEnv(t *testing.T, d store.Dialect) expertEnv {
	t.Helper()
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		cfg.App.SkillCatalog, cfg.App.ToolCatalog = testSkills{"sec-filings", "citation-check"}, testTools{"web_search", "fetch_url"}
	})
	return expertEnv{env}
}

func (e expertEnv) req(t *testing.T, method, path, key string, body any) *servertest.Resp {
	t.Helper()
	return e.Do(t, servertest.Req{Method: method, Path: "/api/v2" + path, Token: key, Body: body})
}

func (e expertEnv) create(t *testing.T, key string, body map[string]any) gen.Expert {
	t.Helper()
	r := e.req(t, "POST", "/experts", key, body)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var x gen.Expert
	r.JSON(t, &x)
	return x
}

func (e expertEnv) get(t *testing.T, key, ref string) (int, gen.Expert) {
	t.Helper()
	r := e.req(t, "GET", "/experts/"+url.PathEscape(ref), key, nil)
	var x gen.Expert
	if r.Status == http.StatusOK {
		r.JSON(t, &x)
	}
	return r.Status, x
}

// account makes an account with a chosen email (the default test emails all share example.com).
func (e expertEnv) account(t *testing.T, email string, admin bool) servertest.Account {
	t.Helper()
	a, _, err := e.Store.EnsureAccount(context.Background(), email, store.TierPro, admin)
	require.NoError(t, err)
	return servertest.Account{ID: a.ID, Email: email, Key: e.Key(t, a.ID, auth.AllScopes...)}
}

func (e expertEnv) research(t *testing.T, key, expertID string) int {
	t.Helper()
	return e.req(t, "POST", "/research", key, map[string]any{"question": "Size the EU heat pump market", "effort": "low", "expert_id": expertID}).Status
}

func vendorRisk() map[string]any {
	return map[string]any{
		"name":                "Vendor Risk Analyst",
		"system_prompt":       "You are a vendor risk analyst. Research security incidents, financial health and regulatory actions.",
		"description":         "Assesses third-party vendors.",
		"domain":              "procurement",
		"expertise_areas":     []string{"vendor security"},
		"tags":                []string{"risk", "procurement"},
		"icon":                "shield-check",
		"skill_names":         []string{"sec-filings"},
		"mcp_tool_names":      []string{"web_search", "fetch_url"},
		"required_tool_calls": []string{"web_search"},
		"default_depth":       "thorough",
		"max_cost_usd":        5,
		"output_type":         "research_report",
		"output_schema": map[string]any{"type": "object", "required": []string{"risk_level"},
			"properties": map[string]any{"risk_level": map[string]any{"type": "string", "enum": []string{"low", "medium", "high"}}}},
		"input_form": []map[string]any{{"key": "vendor_name", "label": "Vendor name", "type": "text", "required": true}},
		"context_files": []map[string]any{
			{"name": "risk-rubric.md", "content": "# Risk rubric\n\nHigh: a public breach in the last 3 years."},
			{"name": "template.html", "content": "<h1>{{vendor}}</h1>"},
		},
		"output_template_file": "template.html",
		"pinned_workflow":      map[string]any{"steps": []string{"search", "assess"}},
		"campaign_plan":        map[string]any{"stages": []map[string]any{{"key": "assess", "instruction": "Assess {{Vendor name}}"}}},
		"run_mode":             "job",
	}
}

func TestExpertCatalogue(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			experts := e.req(t, "GET", "/experts", "", nil)
			agents := e.req(t, "GET", "/agents", "", nil)
			require.Equal(t, http.StatusOK, experts.Status)
			require.Equal(t, http.StatusOK, agents.Status)
			require.JSONEq(t, string(experts.Body), string(agents.Body))
			var list gen.ExpertList
			experts.JSON(t, &list)
			require.GreaterOrEqual(t, list.Count, 6)
			require.Len(t, list.Items, list.Count)
			ids := []string{}
			for _, it := range list.Items {
				require.True(t, it.IsBuiltin)
				ids = append(ids, it.ExpertId)
			}
			for _, id := range []string{"general-researcher", "market-sizing", "company-due-diligence", "literature-review", "competitor-comparison", "policy-brief"} {
				require.Contains(t, ids, id)
			}
			require.True(t, slices.IsSortedFunc(list.Items, func(a, b gen.ExpertSummary) int {
				return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			}))

			r := e.req(t, "GET", "/experts?query=MARKETS", "", nil)
			r.JSON(t, &list)
			require.NotEmpty(t, list.Items)
			for _, it := range list.Items {
				require.Contains(t, it.Tags, "markets")
			}
			// A stale credential does not turn the public list into a 401.
			require.Equal(t, http.StatusOK, e.req(t, "GET", "/agents", "rsk-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil).Status)

			owner := e.NewAccount(t, store.TierPro, false, 10)
			st, x := e.get(t, owner.Key, "market-sizing")
			require.Equal(t, http.StatusOK, st)
			require.True(t, x.IsBuiltin)
			require.Greater(t, len(x.SystemPrompt), 500)
			schema := x.OutputSchema.MustGet()
			require.Equal(t, "object", schema["type"])
			require.False(t, x.InputForm.IsNull())
			require.Equal(t, http.StatusForbidden, e.req(t, "PATCH", "/experts/market-sizing", owner.Key, map[string]any{"name": "x"}).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "DELETE", "/experts/market-sizing", owner.Key, nil).Status)
			require.Equal(t, http.StatusNotFound, e.req(t, "GET", "/experts/no-such-expert", owner.Key, nil).Status)
			require.Equal(t, http.StatusUnauthorized, e.req(t, "GET", "/experts/market-sizing", "", nil).Status)

			// Running as a registry expert.
			require.Equal(t, http.StatusAccepted, e.research(t, owner.Key, "market-sizing"))
			require.Equal(t, http.StatusNotFound, e.research(t, owner.Key, "no-such-expert"))
		})
	}
}

func TestExpertCreateReadUpdate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 10)
			x := e.create(t, owner.Key, vendorRisk())
			require.Equal(t, "vendor-risk-analyst", x.Slug)
			require.Equal(t, 1, x.VersionNum.MustGet())
			require.Equal(t, gen.ExpertCallerRole("owner"), x.CallerRole.MustGet())
			require.Equal(t, owner.ID, x.OwnerUserId.MustGet().String())
			require.Equal(t, 5.0, x.MaxCostUsd.MustGet())
			require.Equal(t, "template.html", x.OutputTemplateFile.MustGet())
			require.Len(t, x.ContextFiles, 2)
			require.Equal(t, "risk-rubric.md", x.ContextFiles[0].Name)
			require.True(t, x.ContextFiles[0].TextMirrored)
			require.Equal(t, len("# Risk rubric\n\nHigh: a public breach in the last 3 years."), x.ContextFiles[0].SizeBytes)
			require.False(t, x.IsPublic)
			require.Equal(t, gen.ExpertStatus("active"), x.Status)

			// The same name again gets a suffixed slug; by UUID, slug and handle.
			y := e.create(t, owner.Key, map[string]any{"name": "Vendor Risk Analyst", "system_prompt": "Second."})
			require.Regexp(t, `^vendor-risk-analyst-[0-9a-f]{6}$`, y.Slug)
			for _, ref := range []string{x.ExpertId, x.Slug, y.ExpertId, y.Slug} {
				st, got := e.get(t, owner.Key, ref)
				require.Equal(t, http.StatusOK, st, ref)
				require.Contains(t, []string{x.ExpertId, y.ExpertId}, got.ExpertId)
			}
			// A reserved word is never a slug.
			z := e.create(t, owner.Key, map[string]any{"name": "Custom", "system_prompt": "p"})
			require.NotEqual(t, "custom", z.Slug)
			// The handle follows renames; the slug does not.
			r := e.req(t, "PATCH", "/experts/"+y.ExpertId, owner.Key, map[string]any{"name": "Supplier Screener"})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			st, got := e.get(t, owner.Key, "supplier-screener")
			require.Equal(t, http.StatusOK, st)
			require.Equal(t, y.ExpertId, got.ExpertId)
			require.Equal(t, y.Slug, got.Slug)
			stranger := e.NewAccount(t, store.TierPro, false, 0)
			st, _ = e.get(t, stranger.Key, "supplier-screener")
			require.Equal(t, http.StatusNotFound, st, "a handle resolves among the caller's own experts")

			version := 1
			steps := []struct {
				name    string
				patch   map[string]any
				check   func(t *testing.T, x gen.Expert)
				version bool
			}{
				{"omitted fields stay", map[string]any{"description": "New description."}, func(t *testing.T, x gen.Expert) {
					require.Equal(t, "New description.", x.Description)
					require.Equal(t, "procurement", x.Domain.MustGet())
					require.Equal(t, []string{"risk", "procurement"}, x.Tags)
					require.Equal(t, 5.0, x.MaxCostUsd.MustGet())
				}, true},
				{"lists replace", map[string]any{"tags": []string{"vendors"}, "mcp_tool_names": []string{"web_search"}}, func(t *testing.T, x gen.Expert) {
					require.Equal(t, []string{"vendors"}, x.Tags)
					require.Equal(t, []string{"web_search"}, x.McpToolNames)
					require.Equal(t, []string{"sec-filings"}, x.SkillNames)
				}, true},
				{"null clears max_cost_usd, pinned_workflow, campaign_plan", map[string]any{"max_cost_usd": nil, "pinned_workflow": nil, "campaign_plan": nil, "domain": nil}, func(t *testing.T, x gen.Expert) {
					require.True(t, x.MaxCostUsd.IsNull())
					require.True(t, x.PinnedWorkflow.IsNull())
					require.True(t, x.CampaignPlan.IsNull())
					require.True(t, x.Domain.IsNull())
					require.Equal(t, "object", x.OutputSchema.MustGet()["type"])
				}, true},
				{"empty output_template_file clears", map[string]any{"output_template_file": ""}, func(t *testing.T, x gen.Expert) {
					require.True(t, x.OutputTemplateFile.IsNull())
					require.Len(t, x.ContextFiles, 2, "files stay attached")
				}, true},
				{"context_files add and replace by name", map[string]any{"context_files": []map[string]any{{"name": "risk-rubric.md", "content": "v2"}, {"name": "notes.txt", "content": "héllo"}}}, func(t *testing.T, x gen.Expert) {
					require.Len(t, x.ContextFiles, 3)
					byName := map[string]gen.ContextFileSummary{}
					for _, f := range x.ContextFiles {
						byName[f.Name] = f
					}
					require.Equal(t, 2, byName["risk-rubric.md"].SizeBytes)
					require.Equal(t, 5, byName["notes.txt"].CharCount)
					require.Equal(t, 6, byName["notes.txt"].SizeBytes)
				}, false},
				{"an unchanged value records no version", map[string]any{"description": "New description."}, func(t *testing.T, x gen.Expert) {}, false},
				{"template file may name a file attached earlier", map[string]any{"output_template_file": "notes.txt"}, func(t *testing.T, x gen.Expert) {
					require.Equal(t, "notes.txt", x.OutputTemplateFile.MustGet())
				}, true},
			}
			for _, s := range steps {
				r := e.req(t, "PATCH", "/experts/"+x.Slug, owner.Key, s.patch)
				require.Equal(t, http.StatusOK, r.Status, "%s: %s", s.name, r.Body)
				var got gen.Expert
				r.JSON(t, &got)
				s.check(t, got)
				if s.version {
					version++
				}
				require.Equal(t, version, got.VersionNum.MustGet(), s.name)
			}
			// An empty patch is refused by the document (minProperties 1).
			require.Equal(t, http.StatusUnprocessableEntity, e.req(t, "PATCH", "/experts/"+x.Slug, owner.Key, map[string]any{}).Status)

			// Custom list: newest first, paged.
			var page gen.ExpertSummaryPage
			r = e.req(t, "GET", "/experts/custom?limit=2", owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &page)
			require.Len(t, page.Items, 2)
			require.True(t, page.HasMore)
			require.Equal(t, z.ExpertId, page.Items[0].ExpertId)
			r = e.req(t, "GET", "/experts/custom?limit=2&cursor="+page.NextCursor.MustGet(), owner.Key, nil)
			r.JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.False(t, page.HasMore)
			require.Equal(t, x.ExpertId, page.Items[0].ExpertId)
			r = e.req(t, "GET", "/experts/custom", stranger.Key, nil)
			r.JSON(t, &page)
			require.Empty(t, page.Items)

			// A custom expert is runnable by its owner, not by a stranger (404, never revealed).
			require.Equal(t, http.StatusAccepted, e.research(t, owner.Key, x.Slug))
			require.Equal(t, http.StatusAccepted, e.research(t, owner.Key, x.ExpertId))
			require.Equal(t, http.StatusNotFound, e.research(t, stranger.Key, x.ExpertId))
			st, _ = e.get(t, stranger.Key, x.ExpertId)
			require.Equal(t, http.StatusNotFound, st)
			require.Equal(t, http.StatusNotFound, e.req(t, "PATCH", "/experts/"+x.ExpertId, stranger.Key, map[string]any{"name": "mine"}).Status)
		})
	}
}

type (
	servertestResp    = servertest.Resp
	servertestAccount = servertest.Account
)

func servertestReq(method, path, key string, body any, h http.Header) servertest.Req {
	return servertest.Req{Method: method, Path: path, Token: key, Body: body, Header: h}
}

func storeNow() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
