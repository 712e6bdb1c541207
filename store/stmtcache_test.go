package store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openSQLite(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cache.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func cacheOf(t *testing.T, s *Store) *stmtCache {
	t.Helper()
	c, ok := s.db.ConnPool.(*stmtCache)
	require.True(t, ok, "a SQLite store runs on the statement cache, not %T", s.db.ConnPool)
	return c
}

func (c *stmtCache) holds(query string) bool {
	_, ok := c.cached(query)
	return ok
}

func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	require.NoError(t, s.with(ctx).Exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)").Error)
	writes, reads := cacheOf(t, s), cacheOf(t, &Store{db: s.reads})
	require.NotSame(t, writes, reads, "the read-only pool has a cache of its own")

	const insert, sum = "INSERT INTO t (k, v) VALUES (?, ?)", "SELECT COALESCE(SUM(v), 0) FROM t"
	require.NoError(t, s.with(ctx).Exec(insert, "a", 1).Error)
	require.True(t, writes.holds(insert), "a statement outside a transaction is prepared at once")

	// In a transaction on the one writer connection: an unprepared text runs as is, and is prepared
	// once the connection is free; a prepared one runs prepared. Neither waits for the other.
	const update = "UPDATE t SET v = v + ? WHERE k = ?"
	for i := range 2 {
		require.NoError(t, s.InTx(ctx, func(tx *Store) error {
			if err := tx.with(ctx).Exec(insert, "b"+string(rune('0'+i)), 2).Error; err != nil {
				return err
			}
			return tx.with(ctx).Exec(update, 10, "a").Error
		}))
		require.Eventually(t, func() bool { return writes.holds(update) }, 5*time.Second, 10*time.Millisecond)
	}
	var total int
	require.NoError(t, s.read(ctx).Raw(sum).Scan(&total).Error)
	require.Equal(t, 1+2+2+10+10, total)
	require.True(t, reads.holds(sum))
	require.False(t, writes.holds(sum), "reads go to the read-only pool")

	// A failed transaction leaves nothing; its statements stay prepared and usable.
	require.Error(t, s.InTx(ctx, func(tx *Store) error {
		require.NoError(t, tx.with(ctx).Exec(update, 100, "a").Error)
		return tx.with(ctx).Exec(insert, "a", 1).Error // duplicate key
	}))
	require.NoError(t, s.read(ctx).Raw(sum).Scan(&total).Error)
	require.Equal(t, 25, total)
}

func TestStatementCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	c := cacheOf(t, s)
	for i := range maxCachedStmts + 10 {
		var n int
		// Each text differs only in its alias: a distinct statement.
		require.NoError(t, s.with(ctx).Raw("SELECT 1 AS c"+strconv.Itoa(i)).Row().Scan(&n))
		require.Equal(t, 1, n)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	require.Len(t, c.stmts, maxCachedStmts)
}
