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
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
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
	db      *gorm.DB
	dialect Dialect
}

// Open connects to the database named by url: sqlite://PATH (pure Go, no cgo) or postgres://...
func Open(ctx context.Context, url string) (*Store, error) {
	dialector, dialect, err := dialectorFor(url)
	if err != nil {
		return nil, err
	}
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
	if dialect == SQLite {
		// One connection serialises writers, so SQLite never answers SQLITE_BUSY under load.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(10)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("ping %s database: %w", dialect, err)
	}
	return &Store{db: db, dialect: dialect}, nil
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
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		tuneSQLiteMemory()
		dsn := path + sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		return sqlite.Open(dsn), SQLite, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return postgres.Open(url), Postgres, nil
	default:
		return nil, "", fmt.Errorf("DATABASE_URL %q: want sqlite://PATH or a postgres:// URL", url)
	}
}

// Dialect reports which database this store talks to.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB exposes the GORM handle for packages that share the connection (the job queue).
func (s *Store) DB() *gorm.DB { return s.db }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	return sqlDB.PingContext(ctx)
}

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	return sqlDB.Close()
}

// InTx runs fn with a Store bound to one transaction: everything fn writes commits together or not at all.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	return s.inTx(ctx, nil, fn)
}

// inTx is InTx with transaction options (isolation, read-only); nil opts are the database defaults.
func (s *Store) inTx(ctx context.Context, opts *sql.TxOptions, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&Store{db: tx, dialect: s.dialect})
	}, opts)
}

func (s *Store) with(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

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
