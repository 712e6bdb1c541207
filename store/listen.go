package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// listenConns bounds the pgx pool that only opens LISTEN connections (River's notifier and the
// timeline follower take one each and keep it, outside the pool's count once hijacked).
const listenConns = 2

// newListenPool is a small pgx pool on the same database (and search_path) as the store, used only
// to LISTEN: database/sql cannot wait for notifications. It connects on first use.
func newListenPool(url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("listen pool: %w", err)
	}
	cfg.MinConns, cfg.MaxConns = 0, listenConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("listen pool: %w", err)
	}
	return pool, nil
}

// QueueDriver is the River driver over this store's connection pool: riversqlite for SQLite,
// riverdatabasesql for Postgres (GORM's pgx stdlib pool). Sharing the pool is what lets a job row
// and its queue entry commit in one transaction (InsertTx with the GORM transaction's *sql.Tx).
// On Postgres the driver's listener comes from riverpgxv5 over the listen pool, so workers hear
// the NOTIFY that each insert sends at commit and fetch at once instead of on their next poll.
func (s *Store) QueueDriver() (riverdriver.Driver[*sql.Tx], error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, fmt.Errorf("database handle: %w", err)
	}
	if s.dialect == SQLite {
		return riversqlite.New(sqlDB), nil
	}
	d := riverdatabasesql.New(sqlDB)
	if s.listen == nil {
		return d, nil
	}
	return listeningDriver{Driver: d, listener: riverpgxv5.New(s.listen)}, nil
}

// listeningDriver is riverdatabasesql (every query and transaction on database/sql) with the
// listener of riverpgxv5: what River v0.46 ships as riverdatabasesql.NewWithPgxListener, which
// the pinned v0.34 lacks. River sends its notifications with pg_notify inside the same
// transactions either way (riverdatabasesql already supports listen/notify on the sending side).
type listeningDriver struct {
	riverdriver.Driver[*sql.Tx]
	listener *riverpgxv5.Driver
}

func (d listeningDriver) SupportsListener() bool { return true }

func (d listeningDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return d.listener.GetListener(params)
}

// Listens reports whether the job queue hears inserts at once (LISTEN on Postgres); without it,
// workers find new jobs only on their next poll.
func (s *Store) Listens() bool { return s.listen != nil }
