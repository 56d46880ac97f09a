package runtime

import "time"

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

// nopObserver ignores every event.
type nopObserver struct{}

func (nopObserver) TasksEnqueued(string, int)                  {}
func (nopObserver) TaskStarted(string, time.Duration)          {}
func (nopObserver) TaskFinished(string, string, time.Duration) {}
func (nopObserver) LeasesRenewed(int, int)                     {}
func (nopObserver) HeartbeatFailed(int)                        {}
func (nopObserver) LeaseRecovered(string, time.Duration)       {}
func (nopObserver) ConflictRetried()                           {}
