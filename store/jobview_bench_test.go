package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/researchd/researchd/store"
)

// BenchmarkSQLiteStatements times the SQLite statements of a GET: a plain read on the read-only
// connections, and the job view (one statement), on a file database as served. It is the yardstick
// for statement-level work (prepared statements, a driver change): see BENCHMARKS.md, issue 14
// point 4, third and fourth passes.
func BenchmarkSQLiteStatements(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a, _, err := s.EnsureAccount(ctx, "bench@example.com", "", false)
	if err != nil {
		b.Fatal(err)
	}
	j := store.ResearchJob{ID: uuid.NewString(), AccountID: a.ID, Slug: "bench-job-abc123", Status: jobQueued,
		Question: "q?", Effort: "low", RequestedEffort: "low", AttachmentIDs: "[]", Request: "{}"}
	if err := s.CreateResearchJob(ctx, &j); err != nil {
		b.Fatal(err)
	}
	b.Run("job-by-slug", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.ResearchJobByRef(ctx, j.Slug); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("view", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.ResearchJobView(ctx, j.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
