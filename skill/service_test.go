package skill_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestCatalog(t *testing.T) {
	t.Parallel()
	cat, err := skill.Catalog()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cat), 8)
	for name, s := range cat {
		require.Equal(t, skill.OwnerBuiltin, s.Owner, name)
		require.NotEmpty(t, s.Category, name)
		require.True(t, strings.HasPrefix(s.Content, "---\nname: "+name+"\n"), name)
		d, err := skill.Parse(s.Content)
		require.NoError(t, err)
		require.Greater(t, len(d.Body), 800, "%s: a catalogue skill needs substantive instructions", name)
	}
}

func TestService(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, err := skill.New(st, nil)
		require.NoError(t, err)
		alice, _, err := st.EnsureAccount(ctx, storetest.Name("alice")+"@example.com", "", false)
		require.NoError(t, err)
		bob, _, err := st.EnsureAccount(ctx, storetest.Name("bob")+"@example.com", "", false)
		require.NoError(t, err)

		// Request values win over the front matter; the stored SKILL.md carries them.
		name, created, err := svc.Write(ctx, alice.ID, skill.WriteRequest{Name: "vendor-rubric", Description: "Our vendor rubric.",
			Content: "---\nname: other\ndescription: old\nmetadata:\n  category: procurement\n---\n# Rubric\n\nHigh risk when...\n"})
		require.NoError(t, err)
		require.Equal(t, "vendor-rubric", name)
		require.True(t, created)
		got, err := svc.Get(ctx, alice.ID, "vendor-rubric")
		require.NoError(t, err)
		require.Equal(t, skill.Skill{Name: "vendor-rubric", Description: "Our vendor rubric.", Category: "procurement", Owner: skill.OwnerOwn,
			Content: "---\nname: vendor-rubric\ndescription: Our vendor rubric.\nmetadata:\n  category: procurement\n---\n\n# Rubric\n\nHigh risk when...\n"}, got)

		// Same name overwrites; category defaults to custom when neither side names one.
		_, created, err = svc.Write(ctx, alice.ID, skill.WriteRequest{Name: "vendor-rubric", Description: "v2", Content: "# v2\n"})
		require.NoError(t, err)
		require.False(t, created)
		got, err = svc.Get(ctx, alice.ID, "vendor-rubric")
		require.NoError(t, err)
		require.Equal(t, "custom", got.Category)
		require.Contains(t, got.Content, "# v2")

		// Catalogue names are taken; invalid documents write nothing.
		_, _, err = svc.Write(ctx, alice.ID, skill.WriteRequest{Name: "fact-checking", Description: "mine", Content: "# x"})
		require.ErrorIs(t, err, skill.ErrNameTaken)
		_, _, err = svc.Write(ctx, alice.ID, skill.WriteRequest{Name: "broken", Description: "d", Content: "---\nname: x\n"})
		_, invalid := skill.IsInvalid(err)
		require.True(t, invalid, "%v", err)

		// Another account sees none of it.
		_, err = svc.Get(ctx, bob.ID, "vendor-rubric")
		require.ErrorIs(t, err, skill.ErrNotFound)
		unknown, err := svc.Unknown(ctx, bob.ID, []string{"vendor-rubric", "fact-checking", "nope", "nope"})
		require.NoError(t, err)
		require.Equal(t, []string{"vendor-rubric", "nope"}, unknown)
		unknown, err = svc.Unknown(ctx, alice.ID, []string{"vendor-rubric", "fact-checking"})
		require.NoError(t, err)
		require.Empty(t, unknown)

		loaded, err := svc.Load(ctx, alice.ID, []string{"market-sizing", "vendor-rubric"})
		require.NoError(t, err)
		require.Equal(t, []string{"market-sizing", "vendor-rubric"}, []string{loaded[0].Name, loaded[1].Name})
		require.Equal(t, []string{skill.OwnerBuiltin, skill.OwnerOwn}, []string{loaded[0].Owner, loaded[1].Owner})

		items, total, err := svc.List(ctx, alice.ID, skill.Filter{})
		require.NoError(t, err)
		cat, _ := skill.Catalog()
		require.Equal(t, len(cat)+1, total)
		require.Len(t, items, total)
		for i := 1; i < len(items); i++ {
			require.Less(t, items[i-1].Name, items[i].Name)
		}
		items, total, err = svc.List(ctx, alice.ID, skill.Filter{Category: "custom"})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, skill.Summary{Name: "vendor-rubric", Description: "v2", Category: "custom", Owner: skill.OwnerOwn}, items[0])
		items, total, err = svc.List(ctx, alice.ID, skill.Filter{Query: "CLAIMS", Limit: 1})
		require.NoError(t, err)
		require.Len(t, items, 1)
		require.GreaterOrEqual(t, total, 1)
		_, total, err = svc.List(ctx, bob.ID, skill.Filter{Category: "custom"})
		require.NoError(t, err)
		require.Zero(t, total)
	})
}
