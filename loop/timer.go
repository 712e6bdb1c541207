package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"
)

// DefaultTick is how often the timer looks for due loops: a loop fires at most this long after
// its next_run_at.
const DefaultTick = 10 * time.Second

// Timer calls FireDue on a gocron job every tick (and once at start, which is how a firing
// missed while every process was down runs at start-up). It decides nothing: which loops fire,
// and that each period fires once across processes, is FireDue's claim in the database, so every
// serve process runs a Timer and no leader election is needed.
type Timer struct {
	svc   *Service
	sched gocron.Scheduler
	tick  time.Duration
	after func(fired int, err error)
}

// TimerOption tunes a Timer.
type TimerOption func(*Timer)

// WithTick sets the polling interval (DefaultTick otherwise).
func WithTick(d time.Duration) TimerOption { return func(t *Timer) { t.tick = d } }

// WithAfterPass calls fn after each FireDue pass (tests wait on it instead of sleeping).
func WithAfterPass(fn func(fired int, err error)) TimerOption { return func(t *Timer) { t.after = fn } }

// NewTimer builds a timer on the service's clock; Start starts it.
func NewTimer(svc *Service, opts ...TimerOption) (*Timer, error) {
	t := &Timer{svc: svc, tick: DefaultTick}
	for _, o := range opts {
		o(t)
	}
	if t.tick <= 0 {
		return nil, errors.New("loop: timer tick must be positive")
	}
	sched, err := gocron.NewScheduler(gocron.WithClock(svc.clock), gocron.WithLocation(time.UTC))
	if err != nil {
		return nil, fmt.Errorf("loop timer: %w", err)
	}
	t.sched = sched
	return t, nil
}

// Start schedules the polling job (its first pass runs at once) and starts the scheduler. ctx
// bounds every pass; cancelling it stops further passes.
func (t *Timer) Start(ctx context.Context) error {
	_, err := t.sched.NewJob(gocron.DurationJob(t.tick),
		gocron.NewTask(func(ctx context.Context) {
			fired, err := t.svc.FireDue(ctx, t.svc.clock.Now())
			if err != nil && ctx.Err() == nil {
				t.svc.log.ErrorContext(ctx, "loop timer pass", "err", err)
			}
			if t.after != nil {
				t.after(fired, err)
			}
		}),
		gocron.WithName("loops.fire_due"),
		gocron.WithContext(ctx),
		gocron.WithStartAt(gocron.WithStartImmediately()),
		// A slow pass (a database hiccup) drops overlapping ticks instead of piling them up.
		gocron.WithSingletonMode(gocron.LimitModeReschedule),
	)
	if err != nil {
		return fmt.Errorf("loop timer job: %w", err)
	}
	t.sched.Start()
	return nil
}

// Stop stops the scheduler and waits for a running pass to end.
func (t *Timer) Stop() error {
	if err := t.sched.Shutdown(); err != nil {
		return fmt.Errorf("stop loop timer: %w", err)
	}
	return nil
}
