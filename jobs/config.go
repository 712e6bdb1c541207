package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/researchd/researchd/queue"
)

// Config tunes the queue and the workers. DefaultConfig gives production values; every field is
// settable from the environment by the CLI (see docs/configuration.md).
type Config struct {
	// Workers is how many research runs one process executes at once (RESEARCH_WORKERS).
	Workers int
	// BackgroundWorkers is how many background runs (batch rows and other bulk work, enqueued with
	// CreateRequest.Background) one process executes at once (RESEARCH_BACKGROUND_WORKERS). They
	// have their own queue, so a deep backlog never delays jobs created through the API.
	BackgroundWorkers int
	// AccountShare is the most research runs one account may have in progress at once across the
	// cluster (RESEARCH_ACCOUNT_MAX_RUNS; 0: no cap). A run over it is put back in the queue for
	// ShareRecheck, leaving the workers to other accounts; and an account's jobs beyond its share are
	// enqueued at a lower priority, so that one account's backlog never stands in front of another
	// account's first jobs.
	AccountShare int
	ShareRecheck time.Duration
	// WebhookWorkers is how many webhook deliveries one process makes at once.
	WebhookWorkers int
	// JobTimeouts bounds one run per effort (RESEARCH_JOB_TIMEOUTS="low=2m,medium=10m,..."); a run
	// over it fails with timed_out and is refunded.
	JobTimeouts map[string]time.Duration
	// RescueMargin is how long a run may outlive its effort's timeout before it is presumed dead
	// (RESEARCH_RESCUE_MARGIN). At the timeout the run's context ends and it records timed_out and
	// refunds, which takes seconds; the margin covers that and clock skew between processes. A run
	// whose process was killed is resumed once it has been claimed for RescueDelay(effort).
	RescueMargin time.Duration
	// PollInterval is how often idle workers look for new jobs (RESEARCH_POLL_INTERVAL). On SQLite
	// it bounds dispatch latency; on Postgres workers LISTEN and fetch as soon as a create commits,
	// and the poll only backs that up (a job whose notification River's limiter folded into an
	// earlier one, a listener reconnecting).
	PollInterval time.Duration
	// MaxAttempts is how many times a run is started (after crashes, shutdowns or infrastructure
	// errors) before the job fails for good.
	MaxAttempts int
	// CancelCheck is how often a running job checks whether it was cancelled.
	CancelCheck time.Duration
	// ShutdownGrace is how long Stop lets running jobs finish before cancelling them.
	ShutdownGrace time.Duration
	// WebhookSchedule holds the offsets of the delivery attempts from the first one (0s, 2s, 8s).
	WebhookSchedule []time.Duration
	// WebhookTimeout bounds one delivery attempt; WebhookBudget bounds all attempts of one webhook.
	WebhookTimeout time.Duration
	WebhookBudget  time.Duration
	// WebhookSecretGrace is how long a rotated-out webhook secret keeps signing beside the new one
	// when the rotation names no grace period (RESEARCH_WEBHOOK_SECRET_GRACE).
	WebhookSecretGrace time.Duration
	// ReaperInterval is how often the leader fails jobs whose queue entry is gone (it runs as a River
	// periodic job, so one process of a cluster does it).
	ReaperInterval time.Duration
	// DataDir holds workspaces/<job_id> (RESEARCH_DATA_DIR).
	DataDir string
	// Production refuses http and private webhook targets (RESEARCH_ENV=production).
	Production bool
	// TestOnly shortens River's start-up jitter; for tests.
	TestOnly bool
}

// DefaultConfig returns the production defaults.
func DefaultConfig() Config {
	return Config{
		Workers:           4,
		BackgroundWorkers: 2,
		WebhookWorkers:    8,
		AccountShare:      2,
		ShareRecheck:      time.Second,
		JobTimeouts: map[string]time.Duration{
			"low": 5 * time.Minute, "medium": 15 * time.Minute, "high": 30 * time.Minute, "build": time.Hour,
		},
		RescueMargin:    2 * time.Minute,
		PollInterval:    50 * time.Millisecond,
		MaxAttempts:     5,
		CancelCheck:     500 * time.Millisecond,
		ShutdownGrace:   25 * time.Second,
		WebhookSchedule: []time.Duration{0, 2 * time.Second, 8 * time.Second},
		WebhookTimeout:  10 * time.Second,
		WebhookBudget:   30 * time.Second,
		ReaperInterval:  time.Minute,
		DataDir:         "./data",

		WebhookSecretGrace: 24 * time.Hour,
	}
}

// MaxJobTimeout is the longest per-effort timeout.
func (c Config) MaxJobTimeout() time.Duration {
	var m time.Duration
	for _, d := range c.JobTimeouts {
		m = max(m, d)
	}
	return m
}

// TimeoutFor is the run timeout of an effort.
func (c Config) TimeoutFor(effort string) time.Duration {
	if d, ok := c.JobTimeouts[effort]; ok {
		return d
	}
	return c.MaxJobTimeout()
}

// RescueDelay is how long a run of effort may stay claimed before River's rescuer presumes its
// process dead and makes it available again: the effort's timeout plus RescueMargin. A live run
// never gets there, since its own timeout ends it first. With the defaults a killed low run resumes
// after 7 minutes, medium 17, high 32, build 62 (plus up to the rescuer's 30 s interval).
func (c Config) RescueDelay(effort string) time.Duration {
	return c.TimeoutFor(effort) + c.RescueMargin
}

// RescueFloor is River's client-wide RescueStuckJobsAfter. River's rescuer skips a claimed entry
// until its worker's own Timeout has passed too, so each entry is rescued after the longer of the
// two: research runs after RescueDelay (their worker's Timeout), webhook deliveries and maintenance
// after the floor. A floor as long as the longest effort would hold every killed run that long.
func (c Config) RescueFloor() time.Duration { return c.RescueMargin }

// Queue is the queue client's configuration these settings imply.
func (c Config) Queue() queue.Config {
	return queue.Config{PollInterval: c.PollInterval, MaintenancePoll: min(c.ReaperInterval, time.Second), MaxAttempts: c.MaxAttempts,
		RescueAfter: c.RescueFloor(), ShutdownGrace: c.ShutdownGrace, TestOnly: c.TestOnly}
}

// Validate reports settings that cannot work together.
func (c Config) Validate() error {
	if c.Workers < 1 || c.BackgroundWorkers < 1 || c.WebhookWorkers < 1 {
		return fmt.Errorf("workers must be at least 1 (research %d, background %d, webhooks %d)", c.Workers, c.BackgroundWorkers, c.WebhookWorkers)
	}
	if c.AccountShare < 0 || (c.AccountShare > 0 && c.ShareRecheck <= 0) {
		return fmt.Errorf("account share %d (recheck %s): want 0 (no cap), or a positive cap and recheck interval", c.AccountShare, c.ShareRecheck)
	}
	for _, e := range []string{"low", "medium", "high", "build"} {
		if c.JobTimeouts[e] <= 0 {
			return fmt.Errorf("job timeout for %s is not set", e)
		}
	}
	if c.RescueMargin <= 0 {
		return fmt.Errorf("rescue margin %s must be positive, or runs winding down at their timeout would be rescued while they work", c.RescueMargin)
	}
	if c.PollInterval < time.Millisecond {
		return fmt.Errorf("poll interval %s is too short", c.PollInterval)
	}
	if c.MaxAttempts < 1 {
		return fmt.Errorf("max attempts %d: want at least 1", c.MaxAttempts)
	}
	if len(c.WebhookSchedule) == 0 || c.WebhookSchedule[0] != 0 {
		return fmt.Errorf("webhook schedule %v must start at 0", c.WebhookSchedule)
	}
	if c.WebhookSecretGrace < 0 || c.WebhookSecretGrace > MaxWebhookSecretGrace {
		return fmt.Errorf("webhook secret grace %s: want 0 to %s", c.WebhookSecretGrace, MaxWebhookSecretGrace)
	}
	if c.WebhookBudget <= c.WebhookSchedule[len(c.WebhookSchedule)-1] {
		return fmt.Errorf("webhook budget %s leaves no time for the last attempt of %v", c.WebhookBudget, c.WebhookSchedule)
	}
	return nil
}

// ParseTimeouts reads "low=2m,medium=10m,high=30m,build=1h" over base; unnamed efforts keep base.
func ParseTimeouts(s string, base map[string]time.Duration) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for k, v := range base {
		out[k] = v
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("job timeouts %q: want effort=duration pairs", s)
		}
		k = strings.TrimSpace(k)
		if _, known := out[k]; !known {
			return nil, fmt.Errorf("job timeouts: unknown effort %q", k)
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("job timeouts: %s=%q: want a positive duration", k, v)
		}
		out[k] = d
	}
	return out, nil
}
