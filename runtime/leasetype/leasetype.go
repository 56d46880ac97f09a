// Package leasetype holds the types that leasegen's runtime, its engine
// drivers and the services that use them share: a task's id, status and
// stored form, and the admin views. Package runtime re-exports each of
// them; services import runtime, not this package.
package leasetype

import (
	"errors"
	"time"
)

// TaskID identifies a task. It is the task row's primary key.
type TaskID int64

// Status is a task's state in the lease protocol.
type Status string

// The task states. SUCCESS, FAILED and CANCELLED are terminal.
const (
	// StatusWaiting is a keyed task waiting for a slot of its key
	// (WithConcurrencyKey), or a workflow's step waiting for its parents
	// to end: no claim takes it until it is QUEUED.
	StatusWaiting         Status = "WAITING"
	StatusQueued          Status = "QUEUED"
	StatusRunning         Status = "RUNNING"
	StatusSuccess         Status = "SUCCESS"
	StatusFailed          Status = "FAILED"
	StatusCancelRequested Status = "CANCEL_REQUESTED"
	StatusCancelled       Status = "CANCELLED"
)

// AllStatuses lists every status, in lifecycle order.
var AllStatuses = []Status{
	StatusWaiting, StatusQueued, StatusRunning, StatusCancelRequested,
	StatusSuccess, StatusFailed, StatusCancelled,
}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool {
	return s == StatusSuccess || s == StatusFailed || s == StatusCancelled
}

// TaskInfo is a stored task as a client reads it.
type TaskInfo struct {
	ID             TaskID
	Type           string
	Status         Status
	Payload        []byte
	Priority       int
	AvailableAt    time.Time // UTC, from the database's clock
	Attempt        int       // the fencing token: claims so far, used or handed back
	AttemptsUsed   int       // attempts counted against MaxAttempts (Retry restores them all)
	MaxAttempts    int
	LeaseOwner     string    // the worker holding the lease, or that ran a finished task last; empty while queued
	LeaseUntil     time.Time // zero when no lease is held
	OwnerID        string
	IdempotencyKey string // the enqueue's key (WithIdempotencyKey, unique tasks): it deduplicates enqueues
	// ConcurrencyKey is the enqueue's concurrency key (WithConcurrencyKey,
	// WithSequentialKey); empty for none.
	ConcurrencyKey string
	// WorkKey is the key an idempotent handler's committed work recorded
	// (RunIdempotent's key): a second task with it skips the work. Empty
	// until the work commits, and for other tasks. Client.Get fills it.
	WorkKey    string
	Metadata   map[string]string // from the enqueue (WithMetadata); nil when none
	LastError  string
	Result     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  time.Time // when the latest attempt started; zero until first claimed
	FinishedAt time.Time // zero until terminal
	// Attempts is the task's history, oldest first: the recorded
	// attempts that did not end it (the latest Config.AttemptHistory) and
	// the latest one, from the row. Client.Get fills it in; lists leave
	// it empty.
	Attempts []AttemptInfo
}

// Filter selects tasks for Client.List. Zero fields match everything.
type Filter struct {
	Status    Status
	Type      string
	Owner     string
	OlderThan time.Duration // created at least this long ago
	Key       string        // the enqueue's idempotency key, or the work key an idempotent handler's committed work recorded
	// ErrorContains keeps the tasks whose last error holds it (a byte
	// substring, case as given).
	ErrorContains string
	// BeforeID pages by keyset: only tasks with a smaller id (the last id
	// of the previous page, since lists are newest first); 0: from the
	// newest.
	BeforeID TaskID
	Limit    int // default 100
}

// Finished returns f as a FinishedFilter (its status, type, BeforeID and
// limit) when f selects the tasks of one final status, by type at most: no
// owner, key, error text or age. Such a list is read fastest the latest
// finished first (Client.ListFinished).
func (f Filter) Finished() (FinishedFilter, bool) {
	ok := f.Status.Terminal() && f.Owner == "" && f.Key == "" && f.ErrorContains == "" && f.OlderThan == 0
	return FinishedFilter{Status: f.Status, Type: f.Type, BeforeID: f.BeforeID, Limit: f.Limit}, ok
}

// FinishedFilter selects finished tasks of one final status for
// Client.ListFinished, the latest finished first: the order of the index
// that holds finished tasks, so that a page costs the same however old
// the tasks are.
type FinishedFilter struct {
	Status Status // SUCCESS, FAILED or CANCELLED
	Type   string // empty: every type
	// BeforeFinishedAt and BeforeID page by keyset: only tasks that
	// finished before BeforeFinishedAt, or then with a smaller id (the
	// last task of the previous page's FinishedAt and ID); zero: from the
	// latest.
	BeforeFinishedAt time.Time
	BeforeID         TaskID
	Limit            int // default 100
}

// TypeStatusCount is the number of tasks of one type in one status.
type TypeStatusCount struct {
	Type   string
	Status Status
	Tasks  int
}

// QueueStats is an operator's view of the task table.
type QueueStats struct {
	Counts          []TypeStatusCount    // every (type, status) with tasks
	OldestQueued    map[string]time.Time // per type: the earliest available_at of its queued tasks
	RunningByWorker map[string]int       // lease owner -> running tasks
	Paused          map[string]time.Time // paused task type -> when it was paused
	// Capped lists, for bounded stats, the statuses with more tasks than
	// the bound: their OldestQueued (for QUEUED) is that of the first
	// bound+1 tasks found, and their Counts are the workers' last count
	// of every task (at CountedAt), or, when none could be stored, lower
	// bounds: the first bound+1 tasks found. Nil for exact stats.
	Capped map[Status]bool
	// CountedAt is when the count the Capped statuses' Counts come from
	// was read, on the database's clock; zero when they are lower bounds.
	// Workers count about every minute (less often on a table so large
	// that counting takes over 0.6 s), so a count is an estimate that
	// moves; a type's count is never below what the live read found.
	CountedAt time.Time
}

// ThroughputMinute is one whole minute's finished tasks, over all types.
type ThroughputMinute struct {
	Minute    time.Time // the minute's start, UTC
	Succeeded int
	Failed    int
	Cancelled int
}

// WorkerInfo is a live worker, as its row in leasegen_workers shows it.
type WorkerInfo struct {
	ID             string
	Host           string
	PID            int
	StartedAt      time.Time // UTC, from the database's clock
	AliveUntil     time.Time // the row's expiry: renewed every RecoveryInterval
	MaxConcurrency int
	GlobalLimit    int            // 0: none
	TaskLimits     map[string]int // every task type it handles, with its concurrency limit (0: none)
	Schedules      []string       // the schedules it registers, by name
}

// AttemptInfo is one attempt of a task, as its history shows it.
type AttemptInfo struct {
	Attempt    int
	Worker     string
	StartedAt  time.Time // when it was claimed, on the database's clock
	FinishedAt time.Time // zero while it runs
	Outcome    string    // one of the Attempt* outcomes
	Error      string
	Duration   time.Duration // the handler's run time; from the row's instants for the last attempt
}

// Attempt outcomes, as a task's history names them.
const (
	AttemptSuccess   = "success"
	AttemptError     = "error"
	AttemptPanic     = "panic"
	AttemptTimedOut  = "timed_out"
	AttemptLeaseLost = "lease_lost" // its lease expired and recovery requeued the task, or ended it
	AttemptCancelled = "cancelled"
	AttemptSnoozed   = "snoozed"
	AttemptReleased  = "released" // handed back when its worker stopped
	AttemptFailed    = "failed"   // the last, failed for good
	AttemptRunning   = "running"
)

// ScheduleInfo is a stored schedule of periodic tasks.
type ScheduleInfo struct {
	Name     string
	TaskType string
	Spec     string // "cron 0 3 * * * Europe/Berlin" or "every 15m0s"
	Misfire  string // skip, once, backfill:N
	Overlap  string // allow, skip
	Payload  []byte
	Priority int
	// MaxAttempts is each tick's task's.
	MaxAttempts int
	NextRun     time.Time // the first tick not yet enqueued, UTC
	Paused      bool
	// RegisteredAt is when a starting worker last registered it.
	RegisteredAt   time.Time
	LastTick       time.Time // the latest tick enqueued; zero: none yet
	LastEnqueuedAt time.Time // when it was enqueued, on the database's clock
	LastTaskID     TaskID    // its task; 0: none
	Ticks          int64     // ticks enqueued since the schedule was stored
	Missed         int64     // due ticks the misfire or overlap policy dropped
	// Workers lists the live workers that register it; none means no
	// running worker fires it (Client.Schedules fills it in).
	Workers []string
	// Overdue is how far past NextRun the database's clock was when it was
	// listed, 0 while on time or paused: a few seconds at most while a
	// worker that registers it runs (Client.Schedules fills it in).
	Overdue time.Duration
}

// ErrScheduleNotFound reports a name that names no stored schedule.
var ErrScheduleNotFound = errors.New("leasegen: schedule not found")

// ErrTaskNotFound reports an id that names no task.
var ErrTaskNotFound = errors.New("leasegen: task not found")

// ErrLimitMismatch reports a Worker.Start whose GlobalLimit or per-type
// concurrency differs from a live worker's: the limits are exact only when
// every worker counts to the same number.
var ErrLimitMismatch = errors.New("leasegen: limits differ from a live worker's")

// ErrUnsupportedDatabase reports a database server that cannot hold
// leasegen's guarantees, found at the first operation (the driver's
// Check); the message says why and what to use instead.
var ErrUnsupportedDatabase = errors.New("leasegen: this database server cannot hold leasegen's guarantees")

// ErrWorkerIDInUse reports a Worker.Start whose WorkerID a live worker
// holds: two workers with one id would complete each other's tasks.
var ErrWorkerIDInUse = errors.New("leasegen: worker id in use")

// KeyInfo is a concurrency key with tasks in flight, as operators see it.
type KeyInfo struct {
	Type  string
	Key   string
	Limit int // tasks of the key that may hold a slot at once; 0: no limit
	// BlockOnFailure is a sequence's rule: a FAILED task keeps its slot
	// until it is retried or discarded.
	BlockOnFailure bool
	Running        int // RUNNING or CANCEL_REQUESTED
	Holding        int // tasks holding a slot: queued, running, failed and blocking
	Waiting        int // WAITING for a slot
	// Rate is the key's rate (RateWindow > 0): at most Rate starts in any
	// RateWindow. StartsInWindow counts the starts of the last window and
	// the queued tasks that hold a start of the rate.
	Rate           int
	RateWindow     time.Duration
	StartsInWindow int
	// Share is a fairness key's most tasks queued at once (0: not fair).
	Share int
}

// AtLimit reports whether every slot of the key is held.
func (k KeyInfo) AtLimit() bool { return k.Limit > 0 && k.Holding >= k.Limit }

// AtRate reports whether the key's rate allows no start now.
func (k KeyInfo) AtRate() bool { return k.Rate > 0 && k.StartsInWindow >= k.Rate }
