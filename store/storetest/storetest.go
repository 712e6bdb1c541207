// Package storetest opens real, migrated, throwaway databases for tests: SQLite always, and Postgres
// when TEST_DATABASE_URL is set (each test gets a schema of its own, dropped afterwards).
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to create test schemas
	"github.com/researchd/researchd/store"
)

// Dialects lists the databases a test should run against.
func Dialects() []store.Dialect {
	d := []store.Dialect{store.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		d = append(d, store.Postgres)
	}
	return d
}

// URL returns a DATABASE_URL for a fresh, empty database of the dialect, removed when t ends.
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return "sqlite://" + filepath.Join(t.TempDir(), "test.db")
	}
	base := os.Getenv("TEST_DATABASE_URL")
	schema := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open returns a migrated store on a fresh database of the dialect, closed when t ends.
func Open(t testing.TB, d store.Dialect) *store.Store {
	t.Helper()
	return OpenURL(t, URL(t, d))
}

// OpenURL opens and migrates a store on url (from URL), closed when t ends: opening one URL twice
// on Postgres stands for two processes on one database.
func OpenURL(t testing.TB, url string) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// Each runs fn as a subtest once per dialect, with a fresh migrated store.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, d))
		})
	}
}

// Name is a unique value for test data.
func Name(prefix string) string { return fmt.Sprintf("%s-%s", prefix, uuid.NewString()[:8]) }
