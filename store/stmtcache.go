package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"gorm.io/gorm"
)

// stmtCache is the connection pool of a SQLite store: it prepares each statement text once and
// runs it as a prepared statement from then on. SQLite parses and plans a statement when it is
// prepared, which for the job view is most of its cost; database/sql keeps a prepared statement per
// connection, and the driver keeps the statement between runs.
//
// GORM's own PrepareStmt mode is not used: it hands transactions a wrapper that hides the *sql.Tx
// the job queue needs, and reuses statements prepared inside one transaction in the next.
type stmtCache struct {
	*sql.DB

	mu      sync.RWMutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool // texts a transaction ran unprepared, being prepared now
}

// maxCachedStmts bounds the texts kept prepared. The store's statements are a fixed set of texts
// and lists of placeholders of a few lengths; should a process ever run more, the rest go
// unprepared, as every statement did before.
const maxCachedStmts = 1024

var _ gorm.ConnPoolBeginner = (*stmtCache)(nil)

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{DB: db, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// GetDBConn lets gorm.DB.DB find the *sql.DB under the cache.
func (c *stmtCache) GetDBConn() (*sql.DB, error) { return c.DB, nil }

func (c *stmtCache) cached(query string) (*sql.Stmt, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st, ok := c.stmts[query]
	return st, ok
}

// stmt is the prepared statement for query, or nil when it is not and will not be cached. It
// prepares without holding the lock: a transaction holding the only connection may be waiting to
// read the cache.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.cached(query); ok {
		return st, nil
	}
	c.mu.RLock()
	full := len(c.stmts) >= maxCachedStmts
	c.mu.RUnlock()
	if full {
		return nil, nil
	}
	st, err := c.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if first, ok := c.stmts[query]; ok {
		_ = st.Close()
		return first, nil
	}
	c.stmts[query] = st
	return st, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil || st == nil {
		return c.DB.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil || st == nil {
		return c.DB.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil || st == nil {
		return c.DB.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// BeginTx starts a transaction that runs the cache's statements on its connection.
func (c *stmtCache) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := c.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &cachedTx{Tx: tx, cache: c}, nil
}

// prepareLater prepares query once the pool has a connection free. A transaction cannot prepare on
// the pool itself: it may hold the pool's only connection (SQLite's one writer).
func (c *stmtCache) prepareLater(query string) {
	c.mu.Lock()
	if c.pending[query] || len(c.stmts)+len(c.pending) >= maxCachedStmts {
		c.mu.Unlock()
		return
	}
	c.pending[query] = true
	c.mu.Unlock()
	go func() {
		_, _ = c.stmt(context.Background(), query) // a text that fails to prepare runs unprepared
		c.mu.Lock()
		delete(c.pending, query)
		c.mu.Unlock()
	}()
}

// cachedTx is a transaction of a stmtCache: a statement already prepared runs prepared on the
// transaction's connection, any other runs as is and is prepared for next time.
type cachedTx struct {
	*sql.Tx
	cache *stmtCache
}

func (t *cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	st, ok := t.cache.cached(query)
	if !ok {
		t.cache.prepareLater(query)
		return nil
	}
	return t.Tx.StmtContext(ctx, st)
}

func (t *cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
