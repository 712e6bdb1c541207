package expert

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := LoadRegistry()
	require.NoError(t, err)
	all := r.All()
	require.GreaterOrEqual(t, len(all), 6)
	for _, b := range all {
		require.Greater(t, len(b.SystemPrompt), 500, b.ID)
		require.NoError(t, checkObjectSchema(b.OutputSchema), b.ID)
		require.NotEmpty(t, b.InputForm, b.ID)
		require.NotNil(t, b.DefaultDepth, b.ID)
		require.NotEmpty(t, b.Description, b.ID)
	}
	_, ok := r.Get("general-researcher")
	require.True(t, ok)

	bad := []struct{ name, file, body string }{
		{"id differs from file", "registry/a.json", `{"id":"b","name":"B","system_prompt":"p","default_effort":"low","output_schema":{"type":"object"}}`},
		{"unknown field", "registry/a.json", `{"id":"a","name":"A","system_prompt":"p","default_effort":"low","output_schema":{"type":"object"},"x":1}`},
		{"schema not an object", "registry/a.json", `{"id":"a","name":"A","system_prompt":"p","default_effort":"low","output_schema":{"type":"string"}}`},
		{"unknown effort", "registry/a.json", `{"id":"a","name":"A","system_prompt":"p","default_effort":"max","output_schema":{"type":"object"}}`},
		{"reserved id", "registry/custom.json", `{"id":"custom","name":"A","system_prompt":"p","default_effort":"low","output_schema":{"type":"object"}}`},
	}
	for _, c := range bad {
		_, err := loadRegistry(fstest.MapFS{c.file: {Data: []byte(c.body)}})
		require.Error(t, err, c.name)
	}
}

func TestHandle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Vendor Risk Analyst":     "vendor-risk-analyst",
		"  Café Économie — 2025 ": "cafe-economie-2025",
		"!!!":                     "expert",
		"a very long name that keeps going and going well past the sixty character limit": "a-very-long-name-that-keeps-going-and-going-well-past-the",
	} {
		require.Equal(t, want, Handle(in), in)
	}
	r, err := LoadRegistry()
	require.NoError(t, err)
	id := "6f1c1b52-3d0a-4c1e-9a55-2b8f0f6e7a10"
	require.Equal(t, "vendor-risk", slugCandidate("vendor-risk", id, 0, r))
	require.Equal(t, "custom-6f1c1b", slugCandidate("custom", id, 0, r))
	require.Equal(t, "market-sizing-6f1c1b", slugCandidate("market-sizing", id, 0, r))
	require.Equal(t, "vendor-risk-6f1c1b52", slugCandidate("vendor-risk", id, 8, r))
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, d)
			svc, err := New(st, Options{})
			require.NoError(t, err)
			owner, _, err := st.EnsureAccount(ctx, "owner@example.com", store.TierPro, false)
			require.NoError(t, err)
			other, _, err := st.EnsureAccount(ctx, "other@example.org", store.TierPro, false)
			require.NoError(t, err)
			run := svc.Runner()

			ex, err := run.Resolve(ctx, owner.ID, "market-sizing")
			require.NoError(t, err)
			require.Equal(t, "object", ex.OutputSchema["type"])

			schema := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}
			c := Caller{AccountID: owner.ID, Email: owner.Email}
			e, err := svc.Create(ctx, c, CreateInput{Config: Config{Name: "Mine", SystemPrompt: "p", OutputSchema: schema}})
			require.NoError(t, err)
			for _, ref := range []string{e.ID, e.Slug, "mine"} {
				ex, err = run.Resolve(ctx, owner.ID, ref)
				require.NoError(t, err, ref)
				require.Equal(t, schema["properties"], ex.OutputSchema["properties"])
			}
			_, err = run.Resolve(ctx, other.ID, e.ID)
			require.True(t, errors.Is(err, jobs.ErrExpertNotFound), "%v", err)

			building := "building"
			draft, err := svc.Create(ctx, c, CreateInput{Config: Config{Name: "Draft", SystemPrompt: "p"}, Status: &building})
			require.NoError(t, err)
			_, err = run.Resolve(ctx, owner.ID, draft.ID)
			require.ErrorIs(t, err, jobs.ErrExpertNotFound)

			require.NoError(t, svc.Archive(ctx, c, e.ID))
			_, err = run.Resolve(ctx, owner.ID, e.ID)
			require.ErrorIs(t, err, jobs.ErrExpertNotFound)
			_, err = run.Resolve(ctx, "00000000-0000-0000-0000-000000000000", "market-sizing")
			require.NoError(t, err, "registry experts need no account")
		})
	}
}
