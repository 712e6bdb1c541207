package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"

	msqlite "modernc.org/sqlite"
)

// SQLite parses and plans a statement when it is prepared, and database/sql prepares every
// statement it is not handed prepared: for the job view that was most of a detail read's CPU, and
// for River's insert a fifth of a create's. pgx keeps prepared statements per connection on its
// own; the SQLite driver keeps one only for as long as its *sql.Stmt lives. So each SQLite
// connection keeps its statements prepared by text, the way pgx does, for every caller of the pool:
// GORM, River (whose statements run on the *sql.Tx we hand it) and raw SQL alike.

// maxConnStmts bounds the texts a connection keeps prepared. The statements of this program are a
// fixed set of texts, plus lists of placeholders of a few lengths; past the bound, the rest run as
// one-off statements, as every statement did before.
const maxConnStmts = 512

// openSQLiteDB opens a SQLite pool whose connections keep their statements prepared.
func openSQLiteDB(dsn string) (*sql.DB, error) {
	base, err := msqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", dsn, err)
	}
	return sql.OpenDB(stmtConnector{base}), nil
}

type stmtConnector struct{ base driver.Connector }

func (c stmtConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &stmtConn{Conn: conn, stmts: map[string]*connStmt{}}, nil
}

func (c stmtConnector) Driver() driver.Driver { return c.base.Driver() }

// stmtConn is a driver connection that keeps its statements prepared. database/sql never uses a
// connection from two goroutines at once, so it needs no lock.
type stmtConn struct {
	driver.Conn
	stmts map[string]*connStmt
}

// connStmt is a kept statement; busy while rows read from it are open, when the same text runs
// again (a query inside the loop over its own rows) as a one-off statement.
type connStmt struct {
	driver.Stmt
	busy bool
}

// The interfaces database/sql and the driver's helpers look for on a connection.
var (
	_ driver.ConnBeginTx        = (*stmtConn)(nil)
	_ driver.ConnPrepareContext = (*stmtConn)(nil)
	_ driver.ExecerContext      = (*stmtConn)(nil)
	_ driver.QueryerContext     = (*stmtConn)(nil)
	_ driver.Pinger             = (*stmtConn)(nil)
	_ driver.SessionResetter    = (*stmtConn)(nil)
	_ driver.Validator          = (*stmtConn)(nil)
)

// Unwrap is the driver's own connection (modernc.org/sqlite's Limit looks for it).
func (c *stmtConn) Unwrap() driver.Conn { return c.Conn }

// stmt is the kept statement for query, prepared now if need be; nil when it is busy or the
// connection keeps no more.
func (c *stmtConn) stmt(ctx context.Context, query string) (*connStmt, error) {
	if st, ok := c.stmts[query]; ok {
		if st.busy {
			return nil, nil
		}
		return st, nil
	}
	if len(c.stmts) >= maxConnStmts {
		return nil, nil
	}
	ds, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st := &connStmt{Stmt: ds}
	c.stmts[query] = st
	return st, nil
}

func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	}
	return st.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	}
	rows, err := st.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	st.busy = true
	return &stmtRows{Rows: rows, st: st}, nil
}

func (c *stmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *stmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *stmtConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *stmtConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *stmtConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

// Close finalizes the kept statements, then closes the connection.
func (c *stmtConn) Close() error {
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.Conn.Close())...)
}

// stmtRows frees its statement for the next run when closed, and passes on the column types the
// driver reports (GORM's migrator reads them).
type stmtRows struct {
	driver.Rows
	st *connStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.st.busy = false
	return err
}

func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	return r.Rows.(driver.RowsColumnTypeDatabaseTypeName).ColumnTypeDatabaseTypeName(i)
}

func (r *stmtRows) ColumnTypeLength(i int) (int64, bool) {
	return r.Rows.(driver.RowsColumnTypeLength).ColumnTypeLength(i)
}

func (r *stmtRows) ColumnTypeNullable(i int) (bool, bool) {
	return r.Rows.(driver.RowsColumnTypeNullable).ColumnTypeNullable(i)
}

func (r *stmtRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return r.Rows.(driver.RowsColumnTypePrecisionScale).ColumnTypePrecisionScale(i)
}

func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type {
	return r.Rows.(driver.RowsColumnTypeScanType).ColumnTypeScanType(i)
}
