package runtime

import (
	"sync/atomic"
	"time"
)

// Observer receives the runtime's events, for metrics. Every method must be
// cheap and safe for concurrent use. Package
// github.com/leasegen/leasegen/metrics implements it for Prometheus; the
// runtime itself imports no metrics library.
type Observer interface {
	// TasksEnqueued counts stored tasks (inside a caller's transaction:
	// when the statement ran, whether or not the caller commits).
	TasksEnqueued(taskType string, n int)
	// TaskStarted reports an execution's start and how long the task was
	// claimable before it (available_at to started_at, database clock).
	TaskStarted(taskType string, waited time.Duration)
	// TaskFinished reports an execution's end: outcome is one of the
	// Outcome constants; ran is the handler's run time.
	TaskFinished(taskType, outcome string, ran time.Duration)
	// LeasesRenewed reports one renewal statement: how many leases it tried
	// to extend and how many it did.
	LeasesRenewed(attempted, renewed int)
	// HeartbeatFailed reports a renewal statement that failed, and how many
	// leases it tried to extend.
	HeartbeatFailed(attempted int)
	// LeaseRecovered reports an expired lease that recovery resolved: the
	// recovery outcome (requeued, failed, cancelled) and how long after the
	// expiry it happened.
	LeaseRecovered(outcome string, overdue time.Duration)
	// ConflictRetried reports an operation run again after a deadlock, a
	// lock-wait timeout or a busy SQLite database.
	ConflictRetried()
	// ScheduleFired reports what one fire of a due schedule did.
	ScheduleFired(f ScheduleFiring)
	// KeysReleased reports a hand-on of concurrency key slots after tasks
	// of keys keys ended (or recovery found them stalled): released
	// waiting tasks became QUEUED.
	KeysReleased(keys, released int)
	// StepsSettled reports workflow steps whose parents ended: queued
	// became QUEUED, cancelled CANCELLED (a parent ended without success).
	StepsSettled(queued, cancelled int)
	// WorkflowStarted reports a stored workflow (inside a caller's
	// transaction: when its statements ran).
	WorkflowStarted(name string)
	// WorkflowEnded reports a workflow whose every step has ended, once
	// across all processes (the one whose recovery pass found it): status
	// is SUCCESS (every step succeeded), FAILED (a step failed) or
	// CANCELLED; took runs from its enqueue to its last step's end, on the
	// database's clock.
	WorkflowEnded(name string, status Status, took time.Duration)
}

// ScheduleFiring is what one fire of a due schedule did.
type ScheduleFiring struct {
	Schedule string
	TaskType string
	// Lags holds, per tick enqueued, how late it was: the enqueue's
	// instant minus the tick's, on the database's clock.
	Lags []time.Duration
	// Missed counts the due ticks the misfire policy dropped; Overlapped
	// those overlap=skip dropped.
	Missed, Overlapped int
}

// Execution outcomes, as TaskFinished reports them.
const (
	OutcomeSuccess  = "success"  // completed
	OutcomeRetry    = "retry"    // failed, queued again after backoff
	OutcomeFailed   = "failed"   // failed for good (or cancelled while running)
	OutcomeReleased = "released" // snoozed or released at shutdown
	OutcomeStale    = "stale"    // its write was rejected by the lease fence
	OutcomeLost     = "lost"     // its lease was lost; nothing was written
	OutcomeError    = "error"    // its write failed; recovery will requeue it
)

// EngineOption configures an Engine.
type EngineOption func(*Engine)

// WithObserver sends the events of the engine's clients and workers to o.
func WithObserver(o Observer) EngineOption {
	return func(e *Engine) { e.observer = o }
}

// BaseObserver ignores every event. Embed it in an Observer that handles
// only some of them: a method added to Observer later gets its no-op
// here, so the embedding type keeps compiling.
type BaseObserver struct{}

var _ Observer = BaseObserver{}

func (BaseObserver) TasksEnqueued(string, int)                   {}
func (BaseObserver) TaskStarted(string, time.Duration)           {}
func (BaseObserver) TaskFinished(string, string, time.Duration)  {}
func (BaseObserver) LeasesRenewed(int, int)                      {}
func (BaseObserver) HeartbeatFailed(int)                         {}
func (BaseObserver) LeaseRecovered(string, time.Duration)        {}
func (BaseObserver) ConflictRetried()                            {}
func (BaseObserver) ScheduleFired(ScheduleFiring)                {}
func (BaseObserver) KeysReleased(int, int)                       {}
func (BaseObserver) StepsSettled(int, int)                       {}
func (BaseObserver) WorkflowStarted(string)                      {}
func (BaseObserver) WorkflowEnded(string, Status, time.Duration) {}

// Stats counts what one worker did since it started.
type Stats struct {
	Claimed           int64 // executions started
	Completed         int64 // fenced completions that took effect
	Retried           int64 // failures that queued the task again
	Failed            int64 // failures that ended the task (or its cancellation)
	Released          int64 // snoozes and shutdown releases
	LateClaims        int64 // claimed tasks handed back unstarted: the claim's reply came past their self-fence point
	Ticks             int64 // periodic ticks this worker enqueued
	StaleWrites       int64 // completions, failures and releases the fence rejected
	LeasesLost        int64 // executions cancelled because a renewal found the lease gone
	SelfFenced        int64 // executions cancelled because renewals failed too long
	HeartbeatFailures int64 // renew statements that failed
	Recovered         int64 // expired leases this worker's recoverer resolved
	Pruned            int64 // finished tasks deleted by retention
	// ConflictRetries counts operations on the worker's engine (shared by
	// every worker and client of it) run again after a deadlock, a lock-wait
	// timeout or a busy SQLite database.
	ConflictRetries int64
}

type stats struct {
	claimed, completed, retried, failed, released, staleWrites atomic.Int64
	leasesLost, selfFenced, heartbeatFailures, recovered       atomic.Int64
	pruned, lateClaims, ticks                                  atomic.Int64
}

func (s *stats) snapshot() Stats {
	return Stats{
		Claimed:           s.claimed.Load(),
		Completed:         s.completed.Load(),
		Retried:           s.retried.Load(),
		Failed:            s.failed.Load(),
		Released:          s.released.Load(),
		StaleWrites:       s.staleWrites.Load(),
		LeasesLost:        s.leasesLost.Load(),
		SelfFenced:        s.selfFenced.Load(),
		HeartbeatFailures: s.heartbeatFailures.Load(),
		Recovered:         s.recovered.Load(),
		Pruned:            s.pruned.Load(),
		LateClaims:        s.lateClaims.Load(),
		Ticks:             s.ticks.Load(),
	}
}
