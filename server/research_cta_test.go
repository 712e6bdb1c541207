package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestResearchAnonymousCTA stores, returns and clears the signed-out call-to-action settings, and
// refuses every value outside the limits in openapi/v2.json (422 naming the field, nothing changed).
func TestResearchAnonymousCTA(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 10)
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: owner.Key, Body: map[string]any{"question": "Who reads the banner?", "effort": "low"}})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var job gen.ResearchJobDetail
			r.JSON(t, &job)
			require.True(t, job.AnonymousCta.IsNull())
			path := "/api/v2/research/" + job.Slug
			patch := func(cta any) *servertest.Resp {
				return e.Do(t, servertest.Req{Method: "PATCH", Path: path, Token: owner.Key, Body: map[string]any{"anonymous_cta": cta}})
			}

			samples := make([]map[string]any, 8)
			for i := range samples {
				samples[i] = map[string]any{"label": strings.Repeat("l", 80), "value": strings.Repeat("v", 200)}
			}
			full := map[string]any{
				"eyebrow": strings.Repeat("e", 80), "title": strings.Repeat("t", 120), "description": strings.Repeat("d", 400),
				"banner_message": strings.Repeat("b", 240), "primary_button_label": strings.Repeat("p", 80),
				"secondary_button_label": strings.Repeat("s", 80), "scroll_trigger_percent": 75, "sample_inputs": samples,
			}
			r = patch(full)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var got gen.ResearchJobDetail
			r.JSON(t, &got)
			cta := got.AnonymousCta.MustGet()
			require.Equal(t, strings.Repeat("t", 120), *cta.Title)
			require.Equal(t, 75, *cta.ScrollTriggerPercent)
			require.Len(t, *cta.SampleInputs, 8)
			// Characters, not bytes: 120 three-byte characters fit the title.
			r = patch(map[string]any{"title": strings.Repeat("€", 120), "scroll_trigger_percent": 5})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))

			over := func(field string, v any) map[string]any { return map[string]any{field: v} }
			nine := append(append([]map[string]any{}, samples...), samples[0])
			bad := []struct {
				name  string
				cta   map[string]any
				field string
			}{
				{"title 121", over("title", strings.Repeat("t", 121)), "title"},
				{"eyebrow 81", over("eyebrow", strings.Repeat("e", 81)), "eyebrow"},
				{"banner 241", over("banner_message", strings.Repeat("b", 241)), "banner_message"},
				{"description 401", over("description", strings.Repeat("d", 401)), "description"},
				{"primary label 81", over("primary_button_label", strings.Repeat("p", 81)), "primary_button_label"},
				{"secondary label 81", over("secondary_button_label", strings.Repeat("s", 81)), "secondary_button_label"},
				{"empty title", over("title", ""), "title"},
				{"scroll 4", over("scroll_trigger_percent", 4), "scroll_trigger_percent"},
				{"scroll 76", over("scroll_trigger_percent", 76), "scroll_trigger_percent"},
				{"nine samples", over("sample_inputs", nine), "sample_inputs"},
				{"label 81", over("sample_inputs", []map[string]any{{"label": strings.Repeat("l", 81), "value": "v"}}), "sample_inputs/0/label"},
				{"empty label", over("sample_inputs", []map[string]any{{"label": "", "value": "v"}}), "sample_inputs/0/label"},
				{"value 201", over("sample_inputs", []map[string]any{{"label": "l", "value": strings.Repeat("v", 201)}}), "sample_inputs/0/value"},
				{"value missing", over("sample_inputs", []map[string]any{{"label": "l"}}), "sample_inputs/0/value"},
				{"unknown field", over("colour", "blue"), "colour"},
			}
			for _, tc := range bad {
				r := patch(tc.cta)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tc.name)
				p := r.Problem(t)
				require.NotNil(t, p.Errors, tc.name)
				var fields []string
				for _, f := range *p.Errors {
					fields = append(fields, f.Field)
				}
				require.Contains(t, strings.Join(fields, " "), "anonymous_cta/"+tc.field, tc.name)
			}
			// Nothing changed by the refusals.
			var now gen.ResearchJobDetail
			e.Do(t, servertest.Req{Method: "GET", Path: path, Token: owner.Key}).JSON(t, &now)
			require.Equal(t, 5, *now.AnonymousCta.MustGet().ScrollTriggerPercent)

			// Public jobs show the settings to signed-out viewers; null restores the defaults.
			require.Equal(t, http.StatusOK, e.Do(t, servertest.Req{Method: "PATCH", Path: path, Token: owner.Key, Body: map[string]any{"is_public": true}}).Status)
			var anon gen.ResearchJobDetail
			e.Do(t, servertest.Req{Method: "GET", Path: path}).JSON(t, &anon)
			require.Equal(t, strings.Repeat("€", 120), *anon.AnonymousCta.MustGet().Title)
			r = patch(nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &got)
			require.True(t, got.AnonymousCta.IsNull())
		})
	}
}
