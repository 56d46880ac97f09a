package runtime

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Config holds a worker's lease parameters and limits. The zero value of a
// field means its default; NewWorker checks the rules between fields and
// names the field and the rule it breaks.
type Config struct {
	// LeaseTimeout is how long a claim or renewal holds a task. Default 60s.
	LeaseTimeout time.Duration
	// HeartbeatInterval is how often the worker renews all its leases in one
	// statement. Must be below half of the shortest lease (LeaseTimeout and
	// every task type's WithLease); a sixth to a quarter of it is
	// recommended. Default: the shortest lease / 6, at most 10s, so a short
	// lease= annotation needs no setting of its own.
	HeartbeatInterval time.Duration
	// RecoveryInterval is how often the worker looks for expired leases.
	// A dead worker's tasks run again within LeaseTimeout + RecoveryInterval
	// (plus one poll). Default 30s.
	RecoveryInterval time.Duration
	// MaxExecutionTime bounds one execution unless its task type sets its
	// own. Default 5m.
	MaxExecutionTime time.Duration
	// PollInterval caps the idle back-off between claims. Default 1s.
	PollInterval time.Duration
	// RecoveryBatchSize, RecoveryMaxBatches and RecoveryPause shape one
	// recovery pass. Defaults 100, 10 and 100ms.
	RecoveryBatchSize  int
	RecoveryMaxBatches int
	RecoveryPause      time.Duration
	// MaxConcurrency is the number of handlers this worker runs at once
	// (its local slots). A slot frees when its handler returns, while the
	// outcome is still being written, so as many more leases as the slots
	// and the ready queue (Prefetch) hold may wait for their outcome write.
	// Default 100.
	MaxConcurrency int
	// Prefetch bounds the claimed tasks that wait for a free slot (the
	// claim pipeline): a handler that returns starts the next one without
	// a claim's round trip. Default 0: as many as the slots finish in two
	// claims' time, judged from recent handler and claim times, at most
	// 1,000 - MaxConcurrency. A positive value
	// lowers that cap; negative turns the pipeline off, and so does a
	// limit (GlobalLimit, WithConcurrency), where a waiting task would
	// hold a limit's slot without running. A waiting task is leased and
	// renewed like a running one; it goes back unstarted (no attempt
	// used) after about 500ms, and the worker then stops claiming ahead
	// until its handlers are quick again; a worker that dies strands it
	// like a running one, within the same recovery bound.
	Prefetch int
	// AttemptHistory is how many of a task's attempts that did not end it
	// (retried failures, snoozes, releases, expired leases) the worker
	// keeps in leasegen_attempts; the attempt that ends a task is read
	// from its row. Default 20.
	AttemptHistory int
	// GlobalLimit caps the tasks running across all workers; 0 means none.
	// Every worker of a deployment must use the same value.
	GlobalLimit int
	// Retention, when set, makes the worker delete finished tasks (SUCCESS,
	// FAILED, CANCELLED) that finished longer ago than this, every
	// RetentionInterval (default 1m), in batches of 500.
	Retention         time.Duration
	RetentionInterval time.Duration
	// WorkerID names this worker in lease_owner: at most 64 printable
	// ASCII characters without spaces. Default host-pid-random.
	// Two live workers must never share an id.
	WorkerID string
	// Logger receives the worker's logs. Default slog.Default().
	Logger *slog.Logger
	// Middleware wraps every handler of the worker, the first listed
	// outermost: each runs around the handler with its context and task.
	Middleware []Middleware
	// Clock is the worker's monotonic clock for self-fencing deadlines.
	// Lease instants never come from it. Default the system clock.
	Clock Clock
}

// Clock tells the time. Only durations between its readings are used.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// maxDefaultHeartbeat caps the derived HeartbeatInterval.
const maxDefaultHeartbeat = 10 * time.Second

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	setDuration(&c.LeaseTimeout, 60*time.Second)
	setDuration(&c.HeartbeatInterval, min(maxDefaultHeartbeat, c.LeaseTimeout/6))
	setDuration(&c.RecoveryInterval, 30*time.Second)
	setDuration(&c.MaxExecutionTime, 5*time.Minute)
	setDuration(&c.PollInterval, time.Second)
	setDuration(&c.RecoveryPause, 100*time.Millisecond)
	setDuration(&c.RetentionInterval, time.Minute)
	if c.RecoveryBatchSize == 0 {
		c.RecoveryBatchSize = 100
	}
	if c.RecoveryMaxBatches == 0 {
		c.RecoveryMaxBatches = 10
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = 100
	}
	if c.WorkerID == "" {
		c.WorkerID = defaultWorkerID()
	}
	if c.AttemptHistory == 0 {
		c.AttemptHistory = 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	return c
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// validate checks the rules of the lease protocol's parameters and returns
// the first one broken. It logs advice that is not a rule.
func (c Config) validate() error {
	positive := []struct {
		name  string
		value time.Duration
	}{
		{"LeaseTimeout", c.LeaseTimeout},
		{"HeartbeatInterval", c.HeartbeatInterval},
		{"RecoveryInterval", c.RecoveryInterval},
		{"MaxExecutionTime", c.MaxExecutionTime},
		{"PollInterval", c.PollInterval},
		{"RecoveryPause", c.RecoveryPause},
		{"RetentionInterval", c.RetentionInterval},
	}
	for _, p := range positive {
		if p.value < 0 {
			return configError(p.name, "must be > 0", p.value)
		}
	}
	counts := []struct {
		name  string
		value int
	}{
		{"RecoveryBatchSize", c.RecoveryBatchSize},
		{"RecoveryMaxBatches", c.RecoveryMaxBatches},
		{"MaxConcurrency", c.MaxConcurrency},
		{"AttemptHistory", c.AttemptHistory},
	}
	for _, p := range counts {
		if p.value < 0 {
			return configError(p.name, "must be > 0", p.value)
		}
	}
	if c.Retention < 0 {
		return configError("Retention", "must be >= 0 (0 keeps finished tasks)", c.Retention)
	}
	if c.GlobalLimit < 0 {
		return configError("GlobalLimit", "must be >= 0 (0 means no limit)", c.GlobalLimit)
	}
	if c.LeaseTimeout < 10*time.Millisecond {
		return configError("LeaseTimeout", "must be at least 10ms", c.LeaseTimeout)
	}
	if c.HeartbeatInterval >= c.LeaseTimeout/2 {
		return configError("HeartbeatInterval", fmt.Sprintf("must be < LeaseTimeout/2 (%s)", c.LeaseTimeout/2), c.HeartbeatInterval)
	}
	if len(c.WorkerID) > maxLeaseOwnerLen {
		return configError("WorkerID", fmt.Sprintf("must be at most %d bytes", maxLeaseOwnerLen), len(c.WorkerID))
	}
	if i := strings.IndexFunc(c.WorkerID, func(r rune) bool { return r <= ' ' || r > '~' }); i >= 0 {
		return configError("WorkerID", "must be printable ASCII without spaces", fmt.Sprintf("%q", c.WorkerID))
	}
	if c.HeartbeatInterval > c.LeaseTimeout/4 {
		c.Logger.Warn("leasegen: HeartbeatInterval above LeaseTimeout/4 leaves few renewals before a lease expires",
			"heartbeat_interval", c.HeartbeatInterval, "lease_timeout", c.LeaseTimeout)
	}
	if c.MaxExecutionTime <= c.LeaseTimeout {
		c.Logger.Warn("leasegen: MaxExecutionTime should exceed LeaseTimeout",
			"max_execution_time", c.MaxExecutionTime, "lease_timeout", c.LeaseTimeout)
	}
	return nil
}

func configError(field, rule string, value any) error {
	return fmt.Errorf("%w: %s %s, got %v", ErrInvalidConfig, field, rule, value)
}
