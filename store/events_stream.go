package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// EventsAfter returns up to limit of a job's events whose seq is greater than after, oldest first:
// the replay and follow step of a timeline stream.
func (s *Store) EventsAfter(ctx context.Context, jobID string, after int64, limit int) ([]ResearchEvent, error) {
	var rows []ResearchEvent
	if err := s.with(ctx).Where("job_id = ? AND seq > ?", jobID, after).Order("seq ASC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("events of %s after %d: %w", jobID, after, err)
	}
	return rows, nil
}

// eventsChannel is the NOTIFY channel of appended timeline events, prefixed with the schema (so
// processes on other schemas of one database, such as tests, never hear each other). The payload
// is "<job_id>:<last seq>".
const eventsChannel = "researchd_events"

// EventsWritten is told, once a transaction that appended timeline events commits, which job's
// timeline grew and its last seq now.
type EventsWritten func(jobID string, seq int64)

// eventHooks are the process-local listeners of appended events, shared by every Store bound to a
// transaction of the same pool.
type eventHooks struct {
	mu    sync.RWMutex
	hooks []EventsWritten
}

func (h *eventHooks) written(jobID string, seq int64) {
	if h == nil {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, f := range h.hooks {
		f(jobID, seq)
	}
}

// OnEventsWritten calls f after each commit of this process that appended timeline events. f runs
// on the committing goroutine: it must not block. Writes of other processes are heard through
// ListenEvents.
func (s *Store) OnEventsWritten(f EventsWritten) {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	s.events.hooks = append(s.events.hooks, f)
}

// ErrNoListen: the database cannot tell other processes' writes (SQLite, which one process owns).
var ErrNoListen = errors.New("the database has no LISTEN")

// ListenEvents hears the timeline events that every process appends (this one's too) until ctx
// ends (nil) or the connection fails (its error; the caller reconnects). listening is called once
// the LISTEN is in place: whatever committed before it was missed, so a caller re-reads what it
// follows there. ErrNoListen on SQLite.
func (s *Store) ListenEvents(ctx context.Context, listening func(), written EventsWritten) error {
	if s.listen == nil {
		return ErrNoListen
	}
	pc, err := s.listen.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("listen for events: %w", err)
	}
	// Hijacked, the connection is ours to close: a connection that LISTENs must not go back to a
	// pool.
	conn := pc.Hijack()
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var schema string
	if err := conn.QueryRow(ctx, "SELECT coalesce(current_schema(), '')").Scan(&schema); err != nil {
		return fmt.Errorf("listen for events: %w", err)
	}
	channel := schema + "." + eventsChannel
	if _, err := conn.Exec(ctx, `LISTEN "`+strings.ReplaceAll(channel, `"`, `""`)+`"`); err != nil {
		return fmt.Errorf("listen for events: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen for events: %w", err)
		}
		jobID, seqText, ok := strings.Cut(n.Payload, ":")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || err != nil {
			continue // not ours
		}
		written(jobID, seq)
	}
}
