// Package queue owns the durable work queue (River, github.com/riverqueue/river) over the store's
// own connection pool: the client, the registry of queues, workers and periodic jobs, the
// transactional enqueue and the hooks told when a research job settles. One Queue is built per
// process and handed to every service that runs work on it (research jobs, batches, campaigns,
// expert builds); each registers its own queues, workers and periodic jobs when it is built, so
// the domain packages define only their job arguments and workers.
//
// A queue entry is inserted with the caller's transaction (EnqueueTx): it exists if and only if
// that transaction commits. On Postgres the store's driver LISTENs (store/listen.go), so idle
// workers in every process fetch as soon as an insert commits; the poll is the backstop, and
// SQLite's only way.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/researchd/researchd/store"
)

// Maintenance is the queue of periodic housekeeping (such as the research jobs' reaper): rare
// work nobody waits on, polled no more often than MaintenancePoll.
const Maintenance = "maintenance"

// Config tunes the client.
type Config struct {
	// PollInterval is how often idle workers look for work when no notification wakes them.
	PollInterval time.Duration
	// MaintenancePoll is the Maintenance queue's poll interval: polling it as often as the
	// research queue would only spend queries (on SQLite, CPU the requests need).
	MaintenancePoll time.Duration
	// MaxAttempts bounds an entry's attempts unless its insert says otherwise.
	MaxAttempts int
	// RescueAfter is River's RescueStuckJobsAfter and default JobTimeout: every worker sets its
	// own Timeout, which the rescuer also waits out, so this only covers one that forgets to.
	RescueAfter time.Duration
	// ShutdownGrace is how long running work gets to finish when Stop's context has no deadline.
	ShutdownGrace time.Duration
	// TestOnly is River's TestOnly (no leader election delays in tests).
	TestOnly bool
	Logger   *slog.Logger
}

// listenCooldown is River's FetchCooldown where workers LISTEN. River sends at most one insert
// notification per queue per cooldown and fetches at most once per cooldown; a job inserted inside
// the window of an earlier notification is found by the fetch that notification triggers, by the
// next notification, or by the poll. Two milliseconds keeps API jobs, which arrive far apart,
// each on its own notification, and still bounds the fetch rate under a burst of creates.
const listenCooldown = 2 * time.Millisecond

// fetchCooldown is River's FetchCooldown: listenCooldown where workers LISTEN; otherwise fetches
// come only from the poll, whose interval (at most River's default cooldown) is the bound.
func fetchCooldown(poll time.Duration, listens bool) time.Duration {
	if listens {
		return min(poll, listenCooldown)
	}
	return min(poll, river.FetchCooldownDefault)
}

// Settled is told, inside the transaction that moves a research job to a terminal status
// (completed, failed, cancelled; errorCode is the job's error code when failed), that it settled.
// It commits or rolls back with that transition, so no settlement is ever missed or seen twice;
// an error fails the transition (the worker retries it).
type Settled func(ctx context.Context, tx *store.Store, jobID, status, errorCode string) error

// Queue is the process's River client and what runs on it.
type Queue struct {
	client  *river.Client[*sql.Tx]
	workers *river.Workers
	log     *slog.Logger
	grace   time.Duration

	mu      sync.Mutex
	started bool
	settled []Settled
}

// New builds the client over st's connection pool (not started: it can enqueue at once; Start
// begins working). Services register their work before Start.
func New(st *store.Store, cfg Config) (*Queue, error) {
	if cfg.PollInterval <= 0 || cfg.MaxAttempts < 1 || cfg.RescueAfter <= 0 {
		return nil, errors.New("queue: poll interval, max attempts and rescue delay must be positive")
	}
	q := &Queue{workers: river.NewWorkers(), log: cfg.Logger, grace: cfg.ShutdownGrace}
	if q.log == nil {
		q.log = slog.Default()
	}
	driver, err := st.QueueDriver()
	if err != nil {
		return nil, err
	}
	q.client, err = river.NewClient(driver, &river.Config{
		// River starts only a client that works some queue; the others are added by their services.
		Queues:               map[string]river.QueueConfig{Maintenance: {MaxWorkers: 1, FetchPollInterval: max(cfg.PollInterval, cfg.MaintenancePoll)}},
		Workers:              q.workers,
		JobTimeout:           cfg.RescueAfter,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        fetchCooldown(cfg.PollInterval, st.Listens()),
		MaxAttempts:          cfg.MaxAttempts,
		Logger:               q.log,
		TestOnly:             cfg.TestOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("queue client: %w", err)
	}
	return q, nil
}

// registering fails once the client has started: River reads its workers while it runs.
func (q *Queue) registering() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("queue: work registered after the queue started")
	}
	return nil
}

// AddQueue adds a queue and how many of its entries this process works at once.
func (q *Queue) AddQueue(name string, workers int) error {
	if err := q.registering(); err != nil {
		return err
	}
	if err := q.client.Queues().Add(name, river.QueueConfig{MaxWorkers: workers}); err != nil {
		return fmt.Errorf("queue %s: %w", name, err)
	}
	return nil
}

// AddWorker registers the worker of one kind of job args.
func AddWorker[T river.JobArgs](q *Queue, w river.Worker[T]) error {
	if err := q.registering(); err != nil {
		return err
	}
	return river.AddWorkerSafely(q.workers, w)
}

// AddPeriodic registers a job the elected leader enqueues every interval (once per cluster), and
// once at start when runOnStart is set.
func (q *Queue) AddPeriodic(every time.Duration, args river.JobArgs, opts *river.InsertOpts, runOnStart bool) error {
	if err := q.registering(); err != nil {
		return err
	}
	_, err := q.client.PeriodicJobs().AddSafely(river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) { return args, opts }, &river.PeriodicJobOpts{RunOnStart: runOnStart}))
	if err != nil {
		return fmt.Errorf("periodic %s: %w", args.Kind(), err)
	}
	return nil
}

// OnSettled adds a hook told when a research job settles (see Settled).
func (q *Queue) OnSettled(fn Settled) error {
	if err := q.registering(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settled = append(q.settled, fn)
	return nil
}

// JobSettled tells every hook that a research job reached a terminal status, inside the
// transition's transaction.
func (q *Queue) JobSettled(ctx context.Context, tx *store.Store, jobID, status, errorCode string) error {
	for _, fn := range q.settled {
		if err := fn(ctx, tx, jobID, status, errorCode); err != nil {
			return fmt.Errorf("job %s settled (%s): %w", jobID, status, err)
		}
	}
	return nil
}

// sqlTx is the database/sql transaction under a Store bound by InTx, which River's *Tx calls take.
func sqlTx(tx *store.Store) (*sql.Tx, error) {
	t, ok := tx.SQLTx()
	if !ok {
		return nil, errors.New("queue: enqueue outside a transaction")
	}
	return t, nil
}

// EnqueueTx inserts a queue entry in the caller's transaction (a Store bound by InTx): the entry
// exists if and only if the transaction commits.
func (q *Queue) EnqueueTx(ctx context.Context, tx *store.Store, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	t, err := sqlTx(tx)
	if err != nil {
		return nil, err
	}
	res, err := q.client.InsertTx(ctx, t, args, opts)
	if err != nil {
		return nil, fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return res, nil
}

// CancelTx cancels an entry in the caller's transaction: a queued one outright, a running one
// through its context. An entry already gone is not an error.
func (q *Queue) CancelTx(ctx context.Context, tx *store.Store, id int64) error {
	t, err := sqlTx(tx)
	if err != nil {
		return err
	}
	if _, err := q.client.JobCancelTx(ctx, t, id); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
		return fmt.Errorf("cancel queue entry %d: %w", id, err)
	}
	return nil
}

// Jobs reads entries by id (at most len(ids)); entries already removed are left out.
func (q *Queue) Jobs(ctx context.Context, ids ...int64) ([]*rivertype.JobRow, error) {
	res, err := q.client.JobList(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)))
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

// Start begins fetching and working every registered queue; registering more fails from now on.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	q.started = true
	q.mu.Unlock()
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	return nil
}

// Stop shuts the workers down gracefully: fetching stops at once, running work gets until ctx's
// deadline (ShutdownGrace when ctx has none) to finish, then it is cancelled. A cancelled entry
// is left retryable, so the next process resumes it.
func (q *Queue) Stop(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.grace)
		defer cancel()
	}
	err := q.client.Stop(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop queue: %w", err)
	}
	q.log.Warn("jobs still running at the shutdown deadline: cancelling them; they resume on the next start")
	hard, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.client.StopAndCancel(hard); err != nil {
		return fmt.Errorf("stop queue: %w", err)
	}
	return nil
}

// Stopped is closed once the client has fully stopped.
func (q *Queue) Stopped() <-chan struct{} { return q.client.Stopped() }
