// Package store owns persistence: the GORM models, migrations and queries over SQLite or Postgres.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgxpool"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

// Sentinel errors; handlers map them to problem responses with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Dialect names the database behind a Store.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is the one entry point to the database. A Store bound to a transaction is handed out by InTx.
type Store struct {
	db *gorm.DB
	// reads serves single read-only statements (read). On a SQLite file it is a pool of its own read-only
	// connections: in WAL mode readers never wait for the one writer connection, which the workers,
	// the queue's polls and every write share. Elsewhere, and in a transaction, it is db.
	reads   *gorm.DB
	dialect Dialect
	// listen is a small pgx pool for LISTEN connections on Postgres (listen.go); nil on SQLite.
	listen *pgxpool.Pool
	// events tells this process's timeline followers about appended events (events_stream.go).
	events  *eventHooks
	boundTx bool // bound to a transaction (InTx)
	// committed collects what AfterCommit defers, for the outermost InTx to run once it commits.
	committed *[]func()
}

// Open connects to the database named by url: sqlite://PATH (pure Go, no cgo) or postgres://...
func Open(ctx context.Context, url string) (*Store, error) {
	dialector, dialect, err := dialectorFor(url)
	if err != nil {
		return nil, err
	}
	db, err := openPool(ctx, dialector, dialect)
	if err != nil {
		return nil, err
	}
	sqlDB, _ := db.DB()
	if dialect == SQLite {
		// One connection serialises writers, so SQLite never answers SQLITE_BUSY under load.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(10)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	s := &Store{db: db, reads: db, dialect: dialect, events: &eventHooks{}}
	if dialect == Postgres {
		if s.listen, err = newListenPool(url); err != nil {
			_ = sqlDB.Close()
			return nil, err
		}
	}
	rd, err := sqliteReadDialector(url)
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("read-only connections: %w", err)
	}
	if rd != nil {
		// After the writer's first connection, which put the file in WAL mode.
		if s.reads, err = openPool(ctx, rd, dialect); err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("read-only connections: %w", err)
		}
		readDB, _ := s.reads.DB()
		readDB.SetMaxOpenConns(sqliteReaders)
		readDB.SetMaxIdleConns(sqliteReaders)
	}
	return s, nil
}

// sqliteReaders is how many read-only connections a SQLite store keeps: readers run in parallel
// with each other and with the writer, and more than a few would only contend for the cores.
const sqliteReaders = 4

// openPool opens and pings one GORM pool.
func openPool(ctx context.Context, dialector gorm.Dialector, dialect Dialect) (*gorm.DB, error) {
	db, err := gorm.Open(dialector, &gorm.Config{
		TranslateError: true,
		Logger:         logger.Discard,
		NowFunc:        func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
	})
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("database handle: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("ping %s database: %w", dialect, err)
	}
	return db, nil
}

func dialectorFor(url string) (gorm.Dialector, Dialect, error) {
	switch {
	case strings.HasPrefix(url, "sqlite://"):
		path := strings.TrimPrefix(url, "sqlite://")
		file, _, _ := strings.Cut(path, "?")
		if file != "" && file != ":memory:" {
			if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
				return nil, "", fmt.Errorf("create database folder: %w", err)
			}
		}
		tuneSQLiteMemory()
		d, err := sqliteDialector(withParams(path, "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate&_time_format=sqlite"))
		return d, SQLite, err
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return postgres.Open(url), Postgres, nil
	default:
		return nil, "", fmt.Errorf("DATABASE_URL %q: want sqlite://PATH or a postgres:// URL", url)
	}
}

// sqliteReadDialector opens read-only connections to a SQLite file (query_only: a write through
// them fails; deferred transactions: a read takes no write lock), or nil for anything else: an
// in-memory database is private to its connection.
func sqliteReadDialector(url string) (gorm.Dialector, error) {
	path, ok := strings.CutPrefix(url, "sqlite://")
	file, params, _ := strings.Cut(path, "?")
	if !ok || file == "" || file == ":memory:" || strings.Contains(params, "mode=memory") {
		return nil, nil
	}
	return sqliteDialector(withParams(path, "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=query_only(1)&_time_format=sqlite"))
}

// sqliteDialector is GORM's SQLite dialect over a pool whose connections keep their statements
// prepared (sqlitestmts.go).
func sqliteDialector(dsn string) (gorm.Dialector, error) {
	db, err := openSQLiteDB(dsn)
	if err != nil {
		return nil, err
	}
	return &sqlite.Dialector{Conn: db}, nil
}

// withParams appends query parameters to a SQLite path that may already have some.
func withParams(path, params string) string {
	if strings.Contains(path, "?") {
		return path + "&" + params
	}
	return path + "?" + params
}

// Dialect reports which database this store talks to.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB exposes the GORM handle for packages that share the connection (the job queue).
func (s *Store) DB() *gorm.DB { return s.db }

// CountQueries adds one to n for every SELECT sent through the writer connections from now on,
// for benchmarks that measure how many reads a feature costs (the read-only pool is not counted).
func (s *Store) CountQueries(n *atomic.Int64) error {
	return s.db.Callback().Query().After("gorm:query").Register("count_queries", func(*gorm.DB) { n.Add(1) })
}

// SQLTx is the database/sql transaction a Store bound by InTx runs in, for the job queue's inserts.
func (s *Store) SQLTx() (*sql.Tx, bool) {
	tx, ok := s.db.Statement.ConnPool.(*sql.Tx)
	return tx, ok
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	return sqlDB.PingContext(ctx)
}

// Close releases the connection pools.
func (s *Store) Close() error {
	pools := []*gorm.DB{s.db}
	if s.reads != s.db {
		pools = append(pools, s.reads)
	}
	var errs []error
	for _, p := range pools {
		sqlDB, err := p.DB()
		if err == nil {
			err = sqlDB.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("close database: %w", err))
		}
	}
	if s.listen != nil {
		s.listen.Close()
	}
	return errors.Join(errs...)
}

// InTx runs fn with a Store bound to one transaction: everything fn writes commits together or not at all.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	committed := s.committed
	if committed == nil {
		committed = new([]func())
	}
	before := len(*committed)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(s.bound(tx, committed))
	})
	if err != nil {
		// Rolled back (a savepoint, when nested): what it deferred never happened.
		*committed = (*committed)[:before]
		return err
	}
	if s.committed != nil {
		return nil // a savepoint of a transaction that has yet to commit
	}
	for _, f := range *committed {
		f()
	}
	return nil
}

// bound is s bound to transaction tx; committed collects what runs once it commits.
func (s *Store) bound(tx *gorm.DB, committed *[]func()) *Store {
	return &Store{db: tx, reads: tx, dialect: s.dialect, listen: s.listen, events: s.events, boundTx: true, committed: committed}
}

// Snapshot runs fn in one read-only transaction, so that what it reads in several statements is one
// state of the database (a campaign's credits and its stages' counts, not one before and one after
// a settlement): on Postgres at REPEATABLE READ, since a READ COMMITTED transaction gives each
// statement its own snapshot; on SQLite a transaction is one snapshot. Inside a transaction, fn
// runs in it.
func (s *Store) Snapshot(ctx context.Context, fn func(tx *Store) error) error {
	if s.boundTx {
		return fn(s)
	}
	var opts *sql.TxOptions
	if s.dialect == Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(s.bound(tx, new([]func())))
	}, opts)
}

// AfterCommit runs f once the transaction s is bound to commits, and never when it rolls back; on
// a Store bound to no transaction it runs f at once. For side effects that must not claim what did
// not happen (a log line saying a job completed).
func (s *Store) AfterCommit(f func()) {
	if s.committed == nil {
		f()
		return
	}
	*s.committed = append(*s.committed, f)
}

// atomically runs fn so that its writes commit together or not at all: in a transaction of its own,
// or directly in the caller's when s is bound to one. There it takes no savepoint (two statements
// more, on SQLite's one writer connection): an error of fn is the caller's error, whose
// transaction then rolls back whole.
func (s *Store) atomically(ctx context.Context, fn func(tx *Store) error) error {
	if s.boundTx {
		return fn(s)
	}
	return s.InTx(ctx, fn)
}

func (s *Store) with(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// forUpdate is with for a read whose rows stay locked until the transaction ends (SELECT ... FOR
// UPDATE), on Postgres; SQLite's single writer connection already serialises transactions.
func (s *Store) forUpdate(ctx context.Context) *gorm.DB {
	if s.dialect != Postgres {
		return s.with(ctx)
	}
	return s.with(ctx).Clauses(clause.Locking{Strength: "UPDATE"})
}

// updateByID sets columns of the M row with id, only while its status is one of from (any status
// when from is empty), and reports whether the row changed; updated_at is set unless set has it.
// what names the row in errors. The condition makes state transitions race-safe without row
// locks, in both dialects. Values may be gorm.Expr, so counters move relative to what is stored.
func updateByID[M any](ctx context.Context, s *Store, what, id string, from []string, set map[string]any) (bool, error) {
	if _, ok := set["updated_at"]; !ok {
		set["updated_at"] = s.db.NowFunc()
	}
	res := inStatus(s.with(ctx).Model(new(M)).Where("id = ?", id), from).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("update %s %s: %w", what, id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// inStatus narrows q to rows whose status is one of from; an empty from narrows nothing.
func inStatus(q *gorm.DB, from []string) *gorm.DB {
	if len(from) == 0 {
		return q
	}
	return q.Where("status IN ?", from)
}

// read is with for a single statement that only reads: on SQLite it runs on the read-only
// connections (a statement is its own snapshot there, and sees every commit that returned before it).
func (s *Store) read(ctx context.Context) *gorm.DB { return s.reads.WithContext(ctx) }

// notFound turns GORM's record-not-found into ErrNotFound and wraps anything else with context.
func notFound(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("%s: %w", what, ErrConflict)
	}
	return fmt.Errorf("%s: %w", what, err)
}
