package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/researchd/researchd/store"
)

const (
	// followBatch bounds how many timeline events one step of Follow hands over (and one read).
	followBatch = 200
	// feedKeep bounds the events a feed keeps in memory; a follower further behind reads its
	// catch-up from the database itself.
	feedKeep = 1024
	// feedSafety: a followed job is re-read at least this often even when no write was heard.
	// Every append is heard (this process's at commit, other processes' through LISTEN), so this
	// only bounds the cost of a notification lost in some way nobody foresaw.
	feedSafety = 30 * time.Second
	// feedPoll is how often followed jobs are re-read while the Postgres listener is down (as
	// every stream did before there was a follower).
	feedPoll = 250 * time.Millisecond
	// listenBackoffMax bounds the wait between attempts to listen again.
	listenBackoffMax = 5 * time.Second
)

// Progress is one step of following a job: what is new since the previous step.
type Progress struct {
	Job     store.ResearchJob     // the job as last read
	Events  []store.ResearchEvent // timeline events after the previous step's, oldest first
	Changed bool                  // Job.Status differs from the previous step's (true on the first step)
	Final   bool                  // the job is terminal and every event was handed over: the last step
}

// Follower is a process's one reader of the timelines its streams follow. Each followed job has
// one feed, shared by every stream of it (the event stream, A2A streams and executions): the feed
// reads the job and its new events once per change, and the streams take them from memory. A feed
// is woken by the writes themselves: this process's appends when they commit, other processes'
// through LISTEN on Postgres (SQLite has one process). 1,000 streams of one job cost the database
// two reads per timeline flush, not 4,000 reads a second.
type Follower struct {
	st  *store.Store
	log *slog.Logger
	// listens: the database tells other processes' writes (Postgres).
	listens bool
	// safety is feedSafety (tests of the wake-ups set it out of reach).
	safety time.Duration

	mu    sync.Mutex
	feeds map[string]*feed
	// stopListen ends the listener, which runs while any job is followed.
	stopListen context.CancelFunc
	listenGen  int64
	// listening is the generation of the listener whose LISTEN is in place (0: none).
	listening atomic.Int64
}

// NewFollower builds the follower of a store's timelines (a jobs Service has one: Service.Follow).
func NewFollower(st *store.Store, log *slog.Logger) *Follower {
	if log == nil {
		log = slog.Default()
	}
	h := &Follower{st: st, log: log, listens: st.Listens(), safety: feedSafety, feeds: map[string]*feed{}}
	st.OnEventsWritten(h.written)
	return h
}

// feed is the shared view of one followed job. events holds the timeline from seq base+1 to last,
// contiguous; changed is closed (and replaced) whenever the view changes.
type feed struct {
	jobID string
	subs  int           // Follower.mu
	wake  chan struct{} // buffered: wakes coalesce
	stop  chan struct{} // closed when the last follower leaves

	mu     sync.Mutex
	ready  bool
	err    error
	job    store.ResearchJob
	events []store.ResearchEvent
	base   int64
	last   int64
	// seen is the job's event counter as the latest read of the job row found it: the view holds
	// the job as it stood after every event up to it, so a wake for those (this process's NOTIFY
	// coming back) needs no read. Events read beyond it do not count: the job row read before
	// them may miss the status their transaction set.
	seen int64
	// want is the highest seq heard of; force asks for a read whatever was heard (a resync).
	want    int64
	force   bool
	changed chan struct{}
}

// Follow hands step the job's status and its timeline after seq `after`: at once, then whenever
// either changes, and at least every `every` when every > 0 (a step with nothing new, so a caller
// can keep its connection alive), until the job is terminal and every event was handed over, ctx
// ends (nil) or step fails (its error). It only reads the database, so a follower works in any
// process and never holds up the worker writing the job.
func (s *Service) Follow(ctx context.Context, jobID string, after int64, every time.Duration, step func(Progress) error) error {
	return s.follow.Follow(ctx, jobID, after, every, step)
}

// Follow is Service.Follow.
func (h *Follower) Follow(ctx context.Context, jobID string, after int64, every time.Duration, step func(Progress) error) error {
	f := h.acquire(jobID)
	defer h.release(f)
	var idle <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		idle = t.C
	}
	status := ""
	for {
		f.mu.Lock()
		ready, ferr, job, events, base, last, changed := f.ready, f.err, f.job, f.events, f.base, f.last, f.changed
		f.mu.Unlock()
		if ferr != nil {
			return fmt.Errorf("follow %s: %w", jobID, ferr)
		}
		if !ready {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
			continue
		}
		var evs []store.ResearchEvent
		if after < base {
			// Behind what the feed keeps (a replay from the start, or a slow reader): read the
			// catch-up directly, up to where the feed takes over.
			var err error
			if evs, err = h.st.EventsAfter(ctx, jobID, after, int(min(followBatch, base-after))); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("follow %s: %w", jobID, err)
			}
		} else {
			i := sort.Search(len(events), func(i int) bool { return events[i].Seq > after })
			evs = events[i:min(len(events), i+followBatch)]
		}
		if n := len(evs); n > 0 {
			after = evs[n-1].Seq
		}
		drained := after >= last
		p := Progress{Job: job, Events: evs, Changed: job.Status != status, Final: drained && Terminal(job.Status)}
		status = job.Status
		if err := step(p); err != nil || p.Final {
			return err
		}
		if !drained {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-idle:
		}
	}
}

// acquire joins (or starts) the feed of a job.
func (h *Follower) acquire(jobID string) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[jobID]
	if f == nil {
		f = &feed{jobID: jobID, wake: make(chan struct{}, 1), stop: make(chan struct{}), changed: make(chan struct{})}
		h.feeds[jobID] = f
		go h.run(f)
		if h.listens && h.stopListen == nil {
			ctx, cancel := context.WithCancel(context.Background())
			h.listenGen++
			h.stopListen = cancel
			go h.listen(ctx, h.listenGen)
		}
	}
	f.subs++
	return f
}

// release leaves a feed; the last follower out stops it (and the listener with the last feed).
func (h *Follower) release(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.subs--; f.subs > 0 {
		return
	}
	delete(h.feeds, f.jobID)
	close(f.stop)
	if len(h.feeds) == 0 && h.stopListen != nil {
		h.stopListen()
		h.stopListen = nil
	}
}

// written hears that a job's timeline reached seq (a commit here, or a NOTIFY from any process):
// its feed, if it is followed and has not read that far, is woken. It never blocks.
func (h *Follower) written(jobID string, seq int64) {
	h.mu.Lock()
	f := h.feeds[jobID]
	h.mu.Unlock()
	if f == nil {
		return
	}
	f.mu.Lock()
	f.want = max(f.want, seq)
	behind := !f.ready || seq > f.seen
	f.mu.Unlock()
	if behind {
		f.poke()
	}
}

// needed reports whether a wake still asks for a read: a read that ran meanwhile may have read
// what the wake was for.
func (f *feed) needed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	need := !f.ready || f.force || f.want > f.seen
	f.force = false
	return need
}

func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// wakeAll makes every feed read again: writes may have gone unheard (the listener was down).
func (h *Follower) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.feeds {
		f.mu.Lock()
		f.force = true
		f.mu.Unlock()
		f.poke()
	}
}

// interval is how long a feed waits for a wake before reading anyway.
func (h *Follower) interval() time.Duration {
	if h.listens && h.listening.Load() == 0 {
		return feedPoll
	}
	return h.safety
}

// run reads a feed's job at once and then on each wake, until its last follower leaves.
func (h *Follower) run(f *feed) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-f.stop
		cancel()
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-f.wake:
			if !f.needed() {
				continue
			}
		case <-timer.C:
		}
		wait := h.interval()
		if err := f.refresh(ctx, h.st); err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, store.ErrNotFound) {
				f.fail(err)
				return
			}
			h.log.Warn("following a job: reading it failed; trying again", "job_id", f.jobID, "error", err)
			wait = feedPoll
		}
		timer.Reset(wait)
	}
}

// refresh reads the job, then its events after the last one read. Status first: a terminal
// status read here means every event of the job is already stored, so the events read next
// include its last one.
func (f *feed) refresh(ctx context.Context, st *store.Store) error {
	j, err := st.ResearchJobByID(ctx, f.jobID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	if !f.ready {
		// Followers start wherever they like; the feed keeps what comes after now, and earlier
		// events are read by the followers that ask for them.
		f.base, f.last = j.EventSeq, j.EventSeq
	}
	f.seen = max(f.seen, j.EventSeq)
	after := f.last
	f.mu.Unlock()
	var evs []store.ResearchEvent
	for {
		batch, err := st.EventsAfter(ctx, f.jobID, after, followBatch)
		if err != nil {
			return err
		}
		evs = append(evs, batch...)
		if len(batch) < followBatch {
			break
		}
		after = batch[len(batch)-1].Seq
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := !f.ready || len(evs) > 0 || j.Status != f.job.Status || !j.UpdatedAt.Equal(f.job.UpdatedAt)
	f.ready, f.job = true, j
	if n := len(evs); n > 0 {
		f.events = append(f.events, evs...)
		f.last = evs[n-1].Seq
		if drop := len(f.events) - feedKeep; drop > 0 {
			// A copy: followers may still hold the old slice.
			f.base = f.events[drop-1].Seq
			f.events = slices.Clone(f.events[drop:])
		}
	}
	if changed {
		close(f.changed)
		f.changed = make(chan struct{})
	}
	return nil
}

// fail ends the feed's followers with err (the job is gone).
func (f *feed) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	close(f.changed)
	f.changed = make(chan struct{})
}

// listen keeps a LISTEN for other processes' timeline writes in place until ctx ends, and wakes
// every feed each time it is (re)established: writes committed while it was down went unheard.
func (h *Follower) listen(ctx context.Context, gen int64) {
	backoff := feedPoll
	for ctx.Err() == nil {
		err := h.st.ListenEvents(ctx, func() {
			h.listening.Store(gen)
			backoff = feedPoll
			h.wakeAll()
		}, h.written)
		h.listening.CompareAndSwap(gen, 0)
		if ctx.Err() != nil || errors.Is(err, store.ErrNoListen) {
			return
		}
		h.log.Warn("timeline listener: reading followed jobs every 250ms until it is back", "error", err)
		h.wakeAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}
