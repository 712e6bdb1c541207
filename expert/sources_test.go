package expert_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestContextSourcesAndMaterialize(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			ctx := context.Background()
			owner, _, err := st.EnsureAccount(ctx, storetest.Name("owner")+"@example.com", store.TierPro, false)
			require.NoError(t, err)
			repos := t.TempDir()
			svc, err := expert.New(st, expert.Options{FilesDir: repos})
			require.NoError(t, err)
			x, err := svc.Create(ctx, expert.Caller{AccountID: owner.ID, Email: owner.Email}, expert.CreateInput{
				Config:       expert.Config{Name: "Sourced", SystemPrompt: "Use the sources."},
				ContextFiles: []expert.FileInput{{Name: "b.md", Content: "# B"}, {Name: "a.txt", Content: "alpha"}},
			})
			require.NoError(t, err)

			srcs, err := svc.ContextSources(ctx, x.ID)
			require.NoError(t, err)
			require.Equal(t, []expert.ContextSource{{Name: "a.txt", Text: "alpha", Data: []byte("alpha")}, {Name: "b.md", Text: "# B", Data: []byte("# B")}}, srcs)
			none, err := svc.ContextSources(ctx, "general-researcher")
			require.NoError(t, err)
			require.Empty(t, none)

			dir := filepath.Join(t.TempDir(), "context")
			n, err := svc.MaterializeContext(ctx, x.ID, dir)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			got, err := os.ReadFile(filepath.Join(dir, "b.md"))
			require.NoError(t, err)
			require.Equal(t, "# B", string(got))
			_, err = os.Stat(filepath.Join(repos, x.ID, "context", "a.txt"))
			require.NoError(t, err, "inline files are committed to the expert's repository")
		})
	}
}
