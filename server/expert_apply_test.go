package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// apply posts an apply request and decodes a 200 answer.
func (f *filesEnv) apply(t *testing.T, key string, body map[string]any) gen.ExpertApplyResponse {
	t.Helper()
	r := f.req(t, "POST", "/experts/apply", key, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out gen.ExpertApplyResponse
	r.JSON(t, &out)
	return out
}

func changesOf(a gen.ExpertApplyResponse) map[string]string {
	out := map[string]string{}
	for _, c := range a.Changes {
		out[c.Field] = string(c.Op)
	}
	return out
}

func (f *filesEnv) versionCount(t *testing.T, key, id string) int {
	t.Helper()
	r := f.req(t, "GET", "/experts/"+id+"/versions?limit=100", key, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var page gen.ExpertVersionPage
	r.JSON(t, &page)
	return len(page.Items)
}

func TestExpertApply(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFilesEnv(t, d)
			key := f.owner.Key
			manifest := map[string]any{
				"name":          "Vendor Risk Analyst",
				"system_prompt": "You are a vendor risk analyst. Research breaches, finances and regulatory actions.",
				"tags":          []string{"risk"},
				"context_files": []map[string]any{{"name": "rubric.md", "content": "# Rubric\nHigh: a breach."}},
			}

			// Dry-run create: the plan, nothing saved.
			dry := f.apply(t, key, map[string]any{"manifest": manifest, "dry_run": true})
			require.Equal(t, gen.ExpertApplyResponseActionCreate, dry.Action)
			require.True(t, dry.DryRun)
			require.True(t, dry.ExpertId.IsNull())
			require.True(t, dry.VersionNum.IsNull())
			require.Equal(t, map[string]string{"name": "add", "system_prompt": "add", "tags": "add", "context_files/rubric.md": "add"}, changesOf(dry))
			r := f.req(t, "GET", "/experts/custom", key, nil)
			var page gen.ExpertSummaryPage
			r.JSON(t, &page)
			require.Empty(t, page.Items)

			// Create by name.
			created := f.apply(t, key, map[string]any{"manifest": manifest})
			require.Equal(t, gen.ExpertApplyResponseActionCreate, created.Action)
			require.Equal(t, 1, created.VersionNum.MustGet())
			id := created.ExpertId.MustGet().String()
			_, x := f.get(t, key, id)
			require.Equal(t, "Vendor Risk Analyst", x.Name)
			require.Len(t, x.ContextFiles, 1)

			// The same manifest again: noop, no version.
			again := f.apply(t, key, map[string]any{"manifest": manifest})
			require.Equal(t, gen.ExpertApplyResponseActionNoop, again.Action)
			require.Empty(t, again.Changes)
			require.True(t, again.VersionNum.IsNull())
			require.Equal(t, id, again.ExpertId.MustGet().String(), "targeted by name")
			require.Equal(t, 1, f.versionCount(t, key, id))

			// Update by name: only what changed is listed, one version recorded.
			manifest["tags"] = []string{"risk", "procurement"}
			manifest["domain"] = "procurement"
			manifest["context_files"] = []map[string]any{
				{"name": "rubric.md", "content": "# Rubric\nHigh: a breach."},
				{"name": "notes.txt", "content": "notes"},
			}
			up := f.apply(t, key, map[string]any{"manifest": manifest})
			require.Equal(t, gen.ExpertApplyResponseActionUpdate, up.Action)
			require.Equal(t, map[string]string{"tags": "update", "domain": "add", "context_files/notes.txt": "add"}, changesOf(up))
			require.Equal(t, 2, up.VersionNum.MustGet())
			require.Equal(t, 2, f.versionCount(t, key, id))
			require.Equal(t, gen.ExpertApplyResponseActionNoop, f.apply(t, key, map[string]any{"manifest": manifest}).Action)

			// Dry-run update: lists the changes and changes nothing.
			dryManifest := map[string]any{"name": manifest["name"], "system_prompt": "You are a vendor risk analyst; rate the overall risk of the vendor named."}
			dry = f.apply(t, key, map[string]any{"expert_id": id, "manifest": dryManifest, "dry_run": true})
			require.Equal(t, map[string]string{"system_prompt": "update", "tags": "remove", "domain": "remove"}, changesOf(dry),
				"omitted fields go back to their defaults; omitted context_files leaves the files alone")
			require.True(t, dry.VersionNum.IsNull())
			_, x = f.get(t, key, id)
			require.Equal(t, []string{"risk", "procurement"}, x.Tags)
			require.Equal(t, 2, x.VersionNum.MustGet())

			// Invalid manifest: 422 naming every field, nothing changed.
			bad := map[string]any{"name": manifest["name"], "system_prompt": "x", "skill_names": []string{"no-such-skill"},
				"mcp_tool_names": []string{"web_search"}, "required_tool_calls": []string{"fetch_url"}, "tags": []string{"changed"}}
			r = f.req(t, "POST", "/experts/apply", key, map[string]any{"manifest": bad})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Body))
			fields := map[string]bool{}
			for _, e := range *r.Problem(t).Errors {
				fields[e.Field] = true
			}
			require.Equal(t, map[string]bool{"manifest/skill_names/0": true, "manifest/required_tool_calls/0": true}, fields)
			_, x = f.get(t, key, id)
			require.Equal(t, []string{"risk", "procurement"}, x.Tags)

			// An uploaded binary is pruned when context_files does not list it, unless
			// prune_context_files is false.
			require.Equal(t, http.StatusCreated, f.upload(t, key, id, part{filename: "brief.pdf", data: textPDF("Heat pumps")}).Status)
			keep := f.apply(t, key, map[string]any{"manifest": manifest, "prune_context_files": false})
			require.Equal(t, gen.ExpertApplyResponseActionNoop, keep.Action)
			pruneDry := f.apply(t, key, map[string]any{"manifest": manifest, "dry_run": true})
			require.Equal(t, map[string]string{"context_files/brief.pdf": "remove"}, changesOf(pruneDry))
			require.Len(t, f.list(t, key, id).Files, 3)
			pruned := f.apply(t, key, map[string]any{"manifest": manifest})
			require.Equal(t, map[string]string{"context_files/brief.pdf": "remove"}, changesOf(pruned))
			names := []string{}
			for _, it := range f.list(t, key, id).Files {
				names = append(names, it.Name)
			}
			require.ElementsMatch(t, []string{"rubric.md", "notes.txt"}, names)

			// The output template: pruning it while the manifest names it is 422; clearing it and
			// pruning it in one apply works.
			manifest["output_template_file"] = "notes.txt"
			require.Equal(t, gen.ExpertApplyResponseActionUpdate, f.apply(t, key, map[string]any{"manifest": manifest}).Action)
			stillNamed := map[string]any{"name": manifest["name"], "system_prompt": manifest["system_prompt"], "output_template_file": "notes.txt",
				"context_files": []map[string]any{{"name": "rubric.md", "content": "# Rubric\nHigh: a breach."}}}
			r = f.req(t, "POST", "/experts/apply", key, map[string]any{"manifest": stillNamed})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Body))
			require.Equal(t, "manifest/output_template_file", (*r.Problem(t).Errors)[0].Field)
			require.Len(t, f.list(t, key, id).Files, 2)
			delete(stillNamed, "output_template_file")
			cleared := f.apply(t, key, map[string]any{"manifest": stillNamed})
			require.Equal(t, "remove", changesOf(cleared)["output_template_file"])
			require.Equal(t, "remove", changesOf(cleared)["context_files/notes.txt"])
			require.Len(t, f.list(t, key, id).Files, 1)

			// By expert_id, a rename; an editor may apply, a stranger gets 404 and a viewer 403.
			renamed := map[string]any{"name": "Vendor Risk Analyst v2", "system_prompt": stillNamed["system_prompt"],
				"context_files": stillNamed["context_files"]}
			byID := f.apply(t, key, map[string]any{"expert_id": id, "manifest": renamed})
			require.Equal(t, map[string]string{"name": "update"}, changesOf(byID))
			stranger := f.NewAccount(t, store.TierPro, false, 0)
			r = f.req(t, "POST", "/experts/apply", stranger.Key, map[string]any{"expert_id": id, "manifest": renamed})
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			editor, viewer := f.account(t, "ed@partner.test", false), f.account(t, "vi@partner.test", false)
			for who, role := range map[string]string{editor.Email: "editor", viewer.Email: "viewer"} {
				require.Equal(t, http.StatusCreated, f.req(t, "POST", "/experts/"+id+"/share", key, map[string]any{"principal_type": "user", "principal": who, "role": role}).Status)
			}
			r = f.req(t, "POST", "/experts/apply", viewer.Key, map[string]any{"expert_id": id, "manifest": renamed})
			require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
			renamed["tags"] = []string{"edited"}
			require.Equal(t, map[string]string{"tags": "add"}, changesOf(f.apply(t, editor.Key, map[string]any{"expert_id": id, "manifest": renamed})))
			// Without expert_id the stranger's apply of the same name creates their own expert.
			mine := f.apply(t, stranger.Key, map[string]any{"manifest": renamed})
			require.Equal(t, gen.ExpertApplyResponseActionCreate, mine.Action)
			require.NotEqual(t, id, mine.ExpertId.MustGet().String())

			// Archived target: 409.
			require.Equal(t, http.StatusNoContent, f.req(t, "DELETE", "/experts/"+id, key, nil).Status)
			r = f.req(t, "POST", "/experts/apply", key, map[string]any{"expert_id": id, "manifest": renamed})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "expert_archived", r.Problem(t).Code)
			// By name, the archived expert is not a target: a new one is created.
			require.Equal(t, gen.ExpertApplyResponseActionCreate, f.apply(t, key, map[string]any{"manifest": renamed}).Action)
			// Two live experts of that name: the target is ambiguous.
			f.create(t, key, map[string]any{"name": renamed["name"], "system_prompt": "Another one with the same name."})
			r = f.req(t, "POST", "/experts/apply", key, map[string]any{"manifest": renamed})
			require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
			require.Equal(t, "ambiguous_expert_name", r.Problem(t).Code)
		})
	}
}
