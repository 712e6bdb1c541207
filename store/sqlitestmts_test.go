package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// keptTexts reports the statement texts the pool's one connection keeps prepared.
func keptTexts(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	kept := map[string]bool{}
	require.NoError(t, conn.Raw(func(dc any) error {
		sc, ok := dc.(*stmtConn)
		require.True(t, ok, "a SQLite connection keeps its statements, not %T", dc)
		for q := range sc.stmts {
			kept[q] = true
		}
		return nil
	}))
	return kept
}

func openOneConn(t *testing.T) *sql.DB {
	t.Helper()
	db, err := openSQLiteDB(filepath.Join(t.TempDir(), "stmts.db") + "?_pragma=journal_mode(WAL)&_txlock=immediate")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)")
	require.NoError(t, err)
	return db
}

func TestSQLiteConnectionsKeepStatements(t *testing.T) {
	ctx := context.Background()
	db := openOneConn(t)
	const insert, sum = "INSERT INTO t (k, v) VALUES (?, ?)", "SELECT COALESCE(SUM(v), 0) FROM t"
	for k := range 3 {
		_, err := db.ExecContext(ctx, insert, k, 10)
		require.NoError(t, err)
	}
	var total int
	require.NoError(t, db.QueryRowContext(ctx, sum).Scan(&total))
	require.Equal(t, 30, total)
	kept := keptTexts(t, db)
	require.True(t, kept[insert])
	require.True(t, kept[sum])

	// In a transaction too, and a failed statement leaves its kept statement usable.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, insert, 0, 1)
	require.Error(t, err, "duplicate key")
	_, err = tx.ExecContext(ctx, insert, 3, 5)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.NoError(t, db.QueryRowContext(ctx, sum).Scan(&total))
	require.Equal(t, 35, total)
}

// A query run again while rows of the same text are still open (on a transaction's one
// connection) runs as a one-off statement: both result sets stay whole.
func TestSQLiteKeptStatementInUse(t *testing.T) {
	ctx := context.Background()
	db := openOneConn(t)
	for k := range 4 {
		_, err := db.ExecContext(ctx, "INSERT INTO t (k, v) VALUES (?, ?)", k, k*k)
		require.NoError(t, err)
	}
	const pick = "SELECT k, v FROM t WHERE k >= ? ORDER BY k"
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	outer, err := tx.QueryContext(ctx, pick, 0)
	require.NoError(t, err)
	var seen []int
	for outer.Next() {
		var k, v int
		require.NoError(t, outer.Scan(&k, &v))
		require.Equal(t, k*k, v)
		inner, err := tx.QueryContext(ctx, pick, k)
		require.NoError(t, err)
		n := 0
		for inner.Next() {
			n++
		}
		require.NoError(t, inner.Err())
		require.NoError(t, inner.Close())
		require.Equal(t, 4-k, n)
		seen = append(seen, k)
	}
	require.NoError(t, outer.Err())
	require.NoError(t, outer.Close())
	require.Equal(t, []int{0, 1, 2, 3}, seen)
}

func TestSQLiteKeptStatementsAreBounded(t *testing.T) {
	ctx := context.Background()
	db := openOneConn(t)
	for i := range maxConnStmts + 10 {
		var n int
		// Each text differs in its alias only: distinct statements.
		require.NoError(t, db.QueryRowContext(ctx, "SELECT "+strconv.Itoa(i)+" AS c"+strconv.Itoa(i)).Scan(&n))
		require.Equal(t, i, n)
	}
	require.Len(t, keptTexts(t, db), maxConnStmts)
}

func TestSQLiteStoreRunsOnKeptStatements(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	defer s.Close()
	for _, pool := range []*Store{s, {db: s.reads}} {
		sqlDB, err := pool.db.DB()
		require.NoError(t, err)
		var one int
		require.NoError(t, pool.db.WithContext(ctx).Raw("SELECT 1").Scan(&one).Error)
		require.True(t, keptTexts(t, sqlDB)["SELECT 1"])
	}
}
