package server_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestExpertValidation(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 0)
			admin := e.NewAccount(t, store.TierPro, true, 0)
			base := func(extra map[string]any) map[string]any {
				b := map[string]any{"name": "Checker", "system_prompt": "Check things."}
				for k, v := range extra {
					b[k] = v
				}
				return b
			}
			cases := []struct {
				name  string
				body  map[string]any
				field string
			}{
				{"unknown skill", base(map[string]any{"skill_names": []string{"sec-filings", "astrology"}}), "skill_names/1"},
				{"unknown tool", base(map[string]any{"mcp_tool_names": []string{"teleport"}}), "mcp_tool_names/0"},
				{"required call not granted", base(map[string]any{"mcp_tool_names": []string{"web_search"}, "required_tool_calls": []string{"web_search", "fetch_url"}}), "required_tool_calls/1"},
				{"schema does not compile", base(map[string]any{"output_schema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": 12}}}}), "output_schema"},
				{"schema not an object", base(map[string]any{"output_schema": map[string]any{"type": "array"}}), "output_schema"},
				{"schema with an external $ref", base(map[string]any{"output_schema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "file:///etc/passwd"}}}}), "output_schema"},
				{"template file not attached", base(map[string]any{"output_template_file": "missing.html"}), "output_template_file"},
				{"duplicate input keys", base(map[string]any{"input_form": []map[string]any{{"key": "a", "label": "A", "type": "text"}, {"key": "a", "label": "B", "type": "text"}}}), "input_form/1/key"},
				{"select without options", base(map[string]any{"input_form": []map[string]any{{"key": "a", "label": "A", "type": "select"}}}), "input_form/0/options"},
				{"campaign placeholder without a field", base(map[string]any{"campaign_plan": map[string]any{"instruction": "Assess {{Company}}"}}), "campaign_plan"},
				{"unknown registry expert", base(map[string]any{"registry_expert_id": "astrologer"}), "registry_expert_id"},
				{"binary inline context file", base(map[string]any{"context_files": []map[string]any{{"name": "deck.pdf", "content": "x"}}}), "context_files/0/name"},
				{"archive inline context file", base(map[string]any{"context_files": []map[string]any{{"name": "all.zip", "content": "x"}}}), "context_files/0/name"},
				{"too many tags", base(map[string]any{"tags": make([]string, 21)}), ""},
				{"unknown field", base(map[string]any{"colour": "blue"}), ""},
				{"max cost below the floor", base(map[string]any{"max_cost_usd": 0.1}), ""},
			}
			for _, c := range cases {
				r := e.req(t, "POST", "/experts", owner.Key, c.body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", c.name, r.Body)
				if c.field != "" {
					p := r.Problem(t)
					require.NotNil(t, p.Errors, c.name)
					fields := []string{}
					for _, f := range *p.Errors {
						fields = append(fields, f.Field)
					}
					require.Contains(t, fields, c.field, c.name)
				}
			}
			var page gen.ExpertSummaryPage
			e.req(t, "GET", "/experts/custom", owner.Key, nil).JSON(t, &page)
			require.Empty(t, page.Items, "bad input changes nothing")

			// Administrator-only fields.
			for _, f := range []map[string]any{{"is_public": true}, {"allow_free_tier_use": true}, {"owner_email": owner.Email}} {
				require.Equal(t, http.StatusForbidden, e.req(t, "POST", "/experts", owner.Key, base(f)).Status, "%v", f)
			}
			x := e.create(t, admin.Key, base(map[string]any{"is_public": true, "allow_free_tier_use": true, "owner_email": owner.Email}))
			require.True(t, x.IsPublic)
			require.True(t, x.AllowFreeTierUse)
			require.Equal(t, owner.ID, x.OwnerUserId.MustGet().String())
			require.Equal(t, http.StatusForbidden, e.req(t, "PATCH", "/experts/"+x.ExpertId, owner.Key, map[string]any{"is_public": false}).Status)
			r := e.req(t, "PATCH", "/experts/"+x.ExpertId, owner.Key, map[string]any{"skill_names": []string{"nope"}})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, "skill_names/0", (*r.Problem(t).Errors)[0].Field)

			// Idempotent create.
			h := http.Header{"Idempotency-Key": {"k-1"}}
			first := e.Do(t, servertestReq("POST", "/api/v2/experts", owner.Key, base(nil), h))
			again := e.Do(t, servertestReq("POST", "/api/v2/experts", owner.Key, base(nil), h))
			require.Equal(t, http.StatusCreated, first.Status)
			require.Equal(t, http.StatusCreated, again.Status)
			var a, b gen.Expert
			first.JSON(t, &a)
			again.JSON(t, &b)
			require.Equal(t, a.ExpertId, b.ExpertId)
			require.Equal(t, http.StatusConflict, e.Do(t, servertestReq("POST", "/api/v2/experts", owner.Key, base(map[string]any{"name": "Other"}), h)).Status)
		})
	}
}

func TestExpertDraftsAndArchive(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 10)
			admin := e.NewAccount(t, store.TierPro, true, 0)
			draft := e.create(t, owner.Key, map[string]any{"name": "Trial Scout", "system_prompt": "Find trials.", "status": "building"})
			require.Equal(t, gen.ExpertStatus("building"), draft.Status)
			var page gen.ExpertSummaryPage
			e.req(t, "GET", "/experts/custom", owner.Key, nil).JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.Equal(t, http.StatusNotFound, e.research(t, owner.Key, draft.ExpertId), "drafts are not runnable")
			require.Equal(t, http.StatusConflict, e.req(t, "POST", "/experts/"+draft.ExpertId+"/visibility", admin.Key, map[string]any{"visibility": "public"}).Status)

			r := e.req(t, "PATCH", "/experts/"+draft.ExpertId, owner.Key, map[string]any{"status": "active"})
			require.Equal(t, http.StatusOK, r.Status)
			var active gen.Expert
			r.JSON(t, &active)
			require.Equal(t, gen.ExpertStatus("active"), active.Status)
			require.Equal(t, 2, active.VersionNum.MustGet())
			r = e.req(t, "PATCH", "/experts/"+draft.ExpertId, owner.Key, map[string]any{"status": "building"})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "invalid_status_transition", r.Problem(t).Code)
			require.Equal(t, http.StatusAccepted, e.research(t, owner.Key, draft.ExpertId))

			for range 2 {
				require.Equal(t, http.StatusNoContent, e.req(t, "DELETE", "/experts/"+draft.Slug, owner.Key, nil).Status)
			}
			e.req(t, "GET", "/experts/custom", owner.Key, nil).JSON(t, &page)
			require.Empty(t, page.Items)
			st, got := e.get(t, owner.Key, draft.ExpertId)
			require.Equal(t, http.StatusOK, st)
			require.False(t, got.ArchivedAt.IsNull())
			r = e.req(t, "PATCH", "/experts/"+draft.ExpertId, owner.Key, map[string]any{"name": "x"})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "expert_archived", r.Problem(t).Code)
			require.Equal(t, http.StatusConflict, e.req(t, "POST", "/experts/"+draft.ExpertId+"/versions/1/restore", owner.Key, nil).Status)
			require.Equal(t, http.StatusNotFound, e.research(t, owner.Key, draft.ExpertId), "archived experts are not runnable")
			var versions gen.ExpertVersionPage
			e.req(t, "GET", "/experts/"+draft.ExpertId+"/versions", owner.Key, nil).JSON(t, &versions)
			require.Len(t, versions.Items, 2, "history is kept")
		})
	}
}

func TestExpertVersions(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 0)
			viewer := e.account(t, "viewer@viewers.test", false)
			stranger := e.NewAccount(t, store.TierPro, false, 0)
			x := e.create(t, owner.Key, map[string]any{"name": "First", "system_prompt": "One.", "max_cost_usd": 2})
			for _, name := range []string{"Second", "Third"} {
				require.Equal(t, http.StatusOK, e.req(t, "PATCH", "/experts/"+x.ExpertId, owner.Key, map[string]any{"name": name}).Status)
			}
			var page gen.ExpertVersionPage
			r := e.req(t, "GET", "/experts/"+x.ExpertId+"/versions?limit=2", owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &page)
			require.Equal(t, []int{3, 2}, []int{page.Items[0].VersionNum, page.Items[1].VersionNum})
			require.Equal(t, gen.ExpertVersionSummarySource("update"), page.Items[0].Source)
			require.True(t, page.HasMore)
			e.req(t, "GET", "/experts/"+x.ExpertId+"/versions?limit=2&cursor="+page.NextCursor.MustGet(), owner.Key, nil).JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.Equal(t, 1, page.Items[0].VersionNum)
			require.Equal(t, gen.ExpertVersionSummarySource("create"), page.Items[0].Source)
			require.False(t, page.HasMore)

			var v gen.ExpertVersion
			r = e.req(t, "GET", "/experts/"+x.ExpertId+"/versions/1", owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &v)
			require.Equal(t, "First", v.Snapshot["name"])
			require.EqualValues(t, 1, v.Snapshot["version_num"])
			require.Equal(t, http.StatusNotFound, e.req(t, "GET", "/experts/"+x.ExpertId+"/versions/9", owner.Key, nil).Status)

			var res gen.ExpertVersionRestored
			r = e.req(t, "POST", "/experts/"+x.ExpertId+"/versions/1/restore", owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &res)
			require.Equal(t, gen.ExpertVersionRestored{ExpertId: res.ExpertId, RestoredFrom: 1, NewVersionNum: 4}, res)
			_, got := e.get(t, owner.Key, x.ExpertId)
			require.Equal(t, "First", got.Name)
			require.Equal(t, 4, got.VersionNum.MustGet())
			e.req(t, "GET", "/experts/"+x.ExpertId+"/versions", owner.Key, nil).JSON(t, &page)
			require.Equal(t, gen.ExpertVersionSummarySource("restore"), page.Items[0].Source)
			// Version 3 (before the restore) is still restorable.
			require.Equal(t, http.StatusOK, e.req(t, "POST", "/experts/"+x.ExpertId+"/versions/3/restore", owner.Key, nil).Status)
			_, got = e.get(t, owner.Key, x.ExpertId)
			require.Equal(t, "Third", got.Name)

			require.Equal(t, http.StatusCreated, e.req(t, "POST", "/experts/"+x.ExpertId+"/share", owner.Key, map[string]any{"principal_type": "user", "principal": viewer.Email, "role": "viewer"}).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "GET", "/experts/"+x.ExpertId+"/versions", viewer.Key, nil).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "GET", "/experts/"+x.ExpertId+"/versions/1", viewer.Key, nil).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "POST", "/experts/"+x.ExpertId+"/versions/1/restore", viewer.Key, nil).Status)
			require.Equal(t, http.StatusNotFound, e.req(t, "GET", "/experts/"+x.ExpertId+"/versions", stranger.Key, nil).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "GET", "/experts/market-sizing/versions", owner.Key, nil).Status)

			// A restore whose template file is gone is a conflict (the file is detached out of band).
			y := e.create(t, owner.Key, map[string]any{"name": "Templated", "system_prompt": "p",
				"context_files": []map[string]any{{"name": "t.html", "content": "<p/>"}}, "output_template_file": "t.html"})
			require.Equal(t, http.StatusOK, e.req(t, "PATCH", "/experts/"+y.ExpertId, owner.Key, map[string]any{"output_template_file": nil}).Status)
			require.NoError(t, e.Store.DB().Exec("DELETE FROM expert_context_files WHERE expert_id = ?", y.ExpertId).Error)
			r = e.req(t, "POST", "/experts/"+y.ExpertId+"/versions/1/restore", owner.Key, nil)
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "context_file_missing", r.Problem(t).Code)
		})
	}
}

func TestExpertSharingAndVisibility(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertEnv(t, d)
			ctx := context.Background()
			owner := e.account(t, "owner@acme.test", false)
			user := e.account(t, "dana@partner.test", false)
			colleague := e.account(t, "lee@tenant.test", false)
			member := e.account(t, "sam@elsewhere.test", false)
			stranger := e.account(t, "eve@evil.test", false)
			admin := e.account(t, "root@ops.test", true)
			require.NoError(t, e.Store.AddTeamMember(ctx, "team-research", member.ID, storeNow()))
			x := e.create(t, owner.Key, map[string]any{"name": "Shared Analyst", "system_prompt": "Analyse."})
			path := "/experts/" + x.ExpertId

			for _, who := range []string{user.Key, colleague.Key, member.Key, stranger.Key} {
				st, _ := e.get(t, who, x.ExpertId)
				require.Equal(t, http.StatusNotFound, st)
			}
			grant := func(key, kind, principal, role string) *servertestResp {
				return e.req(t, "POST", path+"/share", key, map[string]any{"principal_type": kind, "principal": principal, "role": role})
			}
			require.Equal(t, http.StatusCreated, grant(owner.Key, "user", "Dana@Partner.test", "viewer").Status)
			require.Equal(t, http.StatusCreated, grant(owner.Key, "domain", "tenant.test", "editor").Status)
			require.Equal(t, http.StatusCreated, grant(owner.Key, "team", "team-research", "viewer").Status)
			r := grant(owner.Key, "user", "dana@partner.test", "viewer")
			require.Equal(t, http.StatusOK, r.Status, "granting again changes the role")
			require.Equal(t, http.StatusUnprocessableEntity, grant(owner.Key, "user", "not-an-email", "viewer").Status)
			require.Equal(t, http.StatusForbidden, grant(colleague.Key, "user", "x@y.test", "viewer").Status, "editors cannot share")
			require.Equal(t, http.StatusNotFound, grant(stranger.Key, "user", "eve@evil.test", "editor").Status)

			var shares gen.ExpertShareList
			r = e.req(t, "GET", path+"/share", owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &shares)
			require.Equal(t, 3, shares.Count)
			require.Equal(t, "dana@partner.test", shares.Items[0].Principal)
			require.Equal(t, http.StatusOK, e.req(t, "GET", path+"/share", colleague.Key, nil).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "GET", path+"/share", user.Key, nil).Status)

			for _, g := range []struct {
				acct servertestAccount
				role string
			}{{user, "viewer"}, {colleague, "editor"}, {member, "viewer"}} {
				st, got := e.get(t, g.acct.Key, x.ExpertId)
				require.Equal(t, http.StatusOK, st, g.acct.Email)
				require.Equal(t, gen.ExpertCallerRole(g.role), got.CallerRole.MustGet())
				require.Equal(t, http.StatusAccepted, e.research(t, g.acct.Key, x.ExpertId), g.acct.Email)
				var page gen.ExpertSummaryPage
				e.req(t, "GET", "/experts/custom", g.acct.Key, nil).JSON(t, &page)
				require.Len(t, page.Items, 1, g.acct.Email)
			}
			require.Equal(t, http.StatusForbidden, e.req(t, "PATCH", path, user.Key, map[string]any{"description": "mine"}).Status)
			require.Equal(t, http.StatusOK, e.req(t, "PATCH", path, colleague.Key, map[string]any{"description": "edited"}).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "DELETE", path, colleague.Key, nil).Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "POST", path+"/visibility", colleague.Key, map[string]any{"visibility": "private"}).Status)
			require.Equal(t, http.StatusNotFound, e.research(t, stranger.Key, x.ExpertId))

			// Revoke: idempotent, and the grantee is a stranger again.
			for range 2 {
				r = e.req(t, "DELETE", path+"/share?principal_type=user&principal="+url.QueryEscape("dana@partner.test"), owner.Key, nil)
				require.Equal(t, http.StatusNoContent, r.Status)
			}
			st, _ := e.get(t, user.Key, x.ExpertId)
			require.Equal(t, http.StatusNotFound, st)
			require.Equal(t, http.StatusNotFound, e.research(t, user.Key, x.ExpertId))

			// Visibility: public only by administrators; private by the owner.
			r = e.req(t, "POST", path+"/visibility", owner.Key, map[string]any{"visibility": "public"})
			require.Equal(t, http.StatusForbidden, r.Status)
			r = e.req(t, "POST", path+"/visibility", admin.Key, map[string]any{"visibility": "public"})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var pub gen.Expert
			r.JSON(t, &pub)
			require.True(t, pub.IsPublic)
			require.Equal(t, 1, pub.VersionNum.MustGet()-1, "visibility is not versioned (one edit so far)")
			var list gen.ExpertList
			e.req(t, "GET", "/experts?query=shared", "", nil).JSON(t, &list)
			require.Len(t, list.Items, 1)
			require.Equal(t, x.ExpertId, list.Items[0].ExpertId)
			require.False(t, list.Items[0].IsBuiltin)
			st, got := e.get(t, stranger.Key, x.ExpertId)
			require.Equal(t, http.StatusOK, st)
			require.True(t, got.CallerRole.IsNull() || !got.CallerRole.IsSpecified())
			require.Equal(t, http.StatusAccepted, e.research(t, stranger.Key, x.Slug))
			require.Equal(t, http.StatusForbidden, e.req(t, "PATCH", path, stranger.Key, map[string]any{"name": "x"}).Status)
			var page gen.ExpertSummaryPage
			e.req(t, "GET", "/experts/custom", stranger.Key, nil).JSON(t, &page)
			require.Empty(t, page.Items, "public experts of others are not custom")

			require.Equal(t, http.StatusOK, e.req(t, "POST", path+"/visibility", owner.Key, map[string]any{"visibility": "private"}).Status)
			e.req(t, "GET", "/experts?query=shared", "", nil).JSON(t, &list)
			require.Empty(t, list.Items)
			require.Equal(t, http.StatusNotFound, e.research(t, stranger.Key, x.ExpertId))

			// Archived: no new grants; built-in experts cannot be shared.
			require.Equal(t, http.StatusNoContent, e.req(t, "DELETE", path, owner.Key, nil).Status)
			require.Equal(t, http.StatusConflict, grant(owner.Key, "user", "new@partner.test", "viewer").Status)
			require.Equal(t, http.StatusForbidden, e.req(t, "POST", "/experts/market-sizing/share", owner.Key, map[string]any{"principal_type": "user", "principal": "a@b.test", "role": "viewer"}).Status)
		})
	}
}
