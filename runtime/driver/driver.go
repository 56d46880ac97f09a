// Package driver is the contract between leasegen's runtime and a database
// engine, for the authors of engine drivers; services use package runtime
// and a driver's constructor, not this package. The contract is unstable:
// it changes with the runtime, without notice.
//
// The contract has two parts. A Driver runs the lease protocol's
// operations on its database, each as one semantic step (claim, renew,
// complete many, recover a batch) rather than one query, because the
// engines' algorithms differ inside them. Its Tables runs the queries on
// the bookkeeping tables (workers, schedules, attempts, throughput, paused
// types) and the operator's reads, one method per query: the algorithms
// over them are the runtime's, written once for every engine. Every lease
// instant is computed and compared by the database's clock: durations
// cross the contract, instants never do (except a caller's explicit RunAt
// and the bookkeeping's instants read from Tables.Now). Package drivertest
// checks a driver against the contract.
package driver

import (
	"context"
	"database/sql"
	"io/fs"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// DBTX runs statements: a *sql.DB, or a caller's *sql.Tx.
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Driver is what an engine does on its database.
type Driver interface {
	// DB returns the database handle the driver runs on.
	DB() *sql.DB
	// Attach hands the driver the runtime's hooks. runtime.NewEngine
	// calls it once, before any other method: a driver serves one engine.
	Attach(h Hooks)
	// Migrations returns the engine's schema steps, NNNN_name.sql files at
	// the root (see package migrations).
	Migrations() fs.FS

	// Subscribe registers a worker's wake channel for its task types, and
	// Notify sends a wake-up to the channels of taskType after this
	// process enqueued such a task; neither blocks. Unsubscribe removes a
	// channel. A driver without wake-ups of its own embeds LocalWakeups.
	Subscribe(ch chan<- struct{}, types []string)
	Unsubscribe(ch chan<- struct{})
	Notify(taskType string)

	// Check verifies, once per driver until it succeeds, that the
	// connection settings are safe to use (time zone, time parsing, the
	// features the queries need), saying what to change when not.
	Check(ctx context.Context) error
	// ErrorKind reads what an error of this driver means, from its
	// database/sql driver's own error type, never from the message.
	ErrorKind(err error) ErrorKind
	// PayloadLimit is the largest payload the server accepts in one row,
	// known after Check; 0 when only the client's limit applies.
	PayloadLimit() int
	// Notes says, after Check, what the operator should know about the
	// database found (a Galera cluster: its nodes share one write load):
	// facts that change no guarantee. Worker.Start logs them at INFO.
	Notes() []string
	// Migrate applies the Migrations not yet applied, serialized across
	// processes; on a current schema it runs no DDL.
	Migrate(ctx context.Context) error

	// Insert stores tasks, on q (the pool or the caller's transaction),
	// and returns their ids in order. A task whose Key is already stored
	// for its type is not inserted: its id is the stored task's.
	Insert(ctx context.Context, q DBTX, tasks []NewTask) ([]leasetype.TaskID, error)
	// EnsureLimits creates whatever a claim locks for the limit scopes
	// (ClaimRequest.LimitScopes); a driver that serializes claims
	// otherwise does nothing.
	EnsureLimits(ctx context.Context, scopes []string) error
	// EnsureRates creates the slots of each task type's rate (claims take
	// them) and stores its window.
	EnsureRates(ctx context.Context, rates map[string]Rate) error
	// Probe reports, with one statement that locks nothing, whether a task
	// of types could be claimed now (paused types do not count) and whether
	// one of schedules is due (paused ones do not count).
	Probe(ctx context.Context, types, schedules []string) (Probe, error)
	// Claim takes up to req.Max due tasks of req.Types that are not
	// paused (SetPaused), in priority, then due time, then id order, never
	// more than the free slots of a limit (counted exactly, against every
	// worker's running tasks) nor more starts than a rate's window allows
	// (req.TypeRates, and the slots of keys' rates, whose windows the
	// claim moves on): each
	// becomes RUNNING under req.Owner's lease (LeaseFor its type) at one
	// more attempt. Two concurrent claims never take the same task.
	Claim(ctx context.Context, req ClaimRequest) ([]ClaimedTask, error)
	// Renew extends, in one statement group, owner's unexpired leases of
	// refs by lease, and reports for each whether it is still held and
	// whether cancellation was requested.
	Renew(ctx context.Context, owner string, lease time.Duration, refs []LeaseRef) ([]LeaseState, error)
	// Complete, Fail and Release are fenced on (id, owner, attempt) and
	// an unexpired lease; false means the fence rejected the write.
	// Complete writes on q, the pool or an idempotent execution's
	// transaction.
	Complete(ctx context.Context, q DBTX, owner string, ref LeaseRef, result string) (bool, error)
	// CompleteMany completes several of owner's executions with one fenced
	// statement and reports, in order, which took effect.
	CompleteMany(ctx context.Context, owner string, reqs []CompletionRequest) ([]bool, error)
	// Fail ends an attempt that failed: QUEUED again after f.Backoff when
	// f.Retry, else FAILED.
	Fail(ctx context.Context, owner string, ref LeaseRef, f Failure) (bool, error)
	// Release hands a task back, QUEUED after delay, without using an
	// attempt (a snooze, or a worker that stops).
	Release(ctx context.Context, owner string, ref LeaseRef, delay time.Duration) (bool, error)
	// ReleaseUnstarted hands back claimed tasks whose handlers never
	// started, without using an attempt, and returns how many it changed.
	ReleaseUnstarted(ctx context.Context, owner string, refs []LeaseRef) (int64, error)
	// LeasesExpired reports, without locking anything, whether some lease
	// has expired.
	LeasesExpired(ctx context.Context) (bool, error)
	// RecoverBatch resolves up to batch expired leases, skipping rows
	// another recoverer holds: QUEUED again while attempts are left, else
	// FAILED; CANCELLED when cancellation was requested.
	RecoverBatch(ctx context.Context, batch int) ([]RecoveredTask, error)

	// BeginExecutionTx begins the transaction of an idempotent execution
	// under lease. done, called once the transaction ended, hands its
	// connection back.
	BeginExecutionTx(ctx context.Context, lease time.Duration) (tx *sql.Tx, done func(), err error)
	// RecordKey records an idempotency key for task id in the caller's
	// transaction and returns the task that holds it: id when the key was
	// new, else the task whose committed execution recorded it.
	RecordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id leasetype.TaskID) (leasetype.TaskID, error)

	// Tables runs the queries on the bookkeeping tables, on the pool.
	Tables() Tables
	// TablesIn runs them in the caller's transaction tx, as InTx's do:
	// it sees what tx wrote and has not committed.
	TablesIn(tx *sql.Tx) Tables
}

// Hooks is what a driver reports back to the runtime. A nil func is not
// called.
type Hooks struct {
	// ConflictRetried counts an operation run again after a deadlock, a
	// lock wait that timed out or a busy database.
	ConflictRetried func()
}

// NewTask is one row to insert.
type NewTask struct {
	Type        string
	Payload     []byte
	Priority    int
	RunAt       time.Time // zero: now + Delay on the database's clock
	Delay       time.Duration
	MaxAttempts int
	OwnerID     string
	Key         string // empty: none
	Metadata    []byte // leasetype.EncodeMetadata's JSON object; nil: none
}

// Probe is what the idle poll learned.
type Probe struct {
	Claimable    bool // a task is due
	SchedulesDue bool // a schedule is due
}

// LeaseFor returns the lease of taskType.
func (r ClaimRequest) LeaseFor(taskType string) time.Duration {
	if d, ok := r.TypeLeases[taskType]; ok {
		return d
	}
	return r.Lease
}

// LeaseRef names one execution: a task and the attempt that claimed it.
type LeaseRef struct {
	ID      leasetype.TaskID
	Attempt int
}

type ClaimRequest struct {
	Owner       string
	Lease       time.Duration            // for types without their own
	TypeLeases  map[string]time.Duration // per-type leases (WithLease)
	Types       []string                 // the task types this worker handles
	Max         int                      // free local slots
	TypeLimits  map[string]int           // per-type concurrency limits (> 0)
	TypeRates   map[string]Rate          // per-type rates (EnsureRates made their slots)
	GlobalLimit int                      // 0: none
	// TakeTurns makes the claim wait for its turn behind the claims of the
	// other workers that take turns, so that it does not step over the
	// rows they hold (a driver may ignore it). Workers set it while other
	// workers of one of their types are alive.
	TakeTurns bool
}

// Rate is a rate limit: at most Limit starts in any Window.
type Rate struct {
	Limit  int
	Window time.Duration
}

// MaxRateLimit bounds a rate's Limit: each start it allows is a stored
// slot.
const MaxRateLimit = 10_000

// ClaimedTask is a task as a claim leaves it, RUNNING under the claimer's
// lease, with only what an execution needs.
type ClaimedTask struct {
	ID             leasetype.TaskID
	Type           string
	Payload        []byte
	Priority       int
	AvailableAt    time.Time
	Attempt        int // the claim's: one more than the row had before it
	FreeAttempts   int
	MaxAttempts    int
	OwnerID        string
	IdempotencyKey string
	ConcurrencyKey string    // the task's concurrency key; empty for none
	KeyRated       bool      // it used a slot of its key's rate
	KeyShared      bool      // it used its fair key's share of the queue
	Metadata       []byte    // as NewTask stored it
	StartedAt      time.Time // when the claim read it, on the database's clock
}

// LeaseState is what a renewal learned about one execution.
type LeaseState struct {
	Ref             LeaseRef
	Held            bool // our lease, renewed and unexpired
	CancelRequested bool
}

// CompletionRequest is one execution to complete, with its result.
type CompletionRequest struct {
	Ref    LeaseRef
	Result string
}

// Failure is how an execution failed.
type Failure struct {
	Retry   bool          // QUEUED again after Backoff, else FAILED
	Backoff time.Duration // only with Retry
	Message string
}

// Recovery outcomes, as the metrics label them.
const (
	RecoveryRequeued  = "requeued"
	RecoveryFailed    = "failed"
	RecoveryCancelled = "cancelled"
)

// RecoveredTask is one expired lease that recovery resolved.
type RecoveredTask struct {
	ID      leasetype.TaskID
	Outcome string
	Overdue time.Duration // from lease expiry to recovery
	// The attempt that held the lease: its number, its worker and when it
	// was claimed (the database's clock).
	Attempt   int
	Owner     string
	StartedAt time.Time
}

// AttemptsLeft reports whether a task that used attempt claims, free of them
// free, may run again under maxAttempts.
func AttemptsLeft(attempt, free, maxAttempts int) bool {
	return attempt-free < maxAttempts
}

// ErrorKind is what a database error means to the runtime, as a driver
// reads it from its database/sql driver's own error type (error numbers,
// result codes), never from the message text.
type ErrorKind int

const (
	KindOther    ErrorKind = iota // none of the below
	KindNoTable                   // a leasegen table does not exist
	KindConnLost                  // the connection was lost mid-statement
	// KindNotSent is a connection found broken before the statement left:
	// nothing was written (pgx reports it; database/sql's own retry on
	// driver.ErrBadConn covers drivers that detect it earlier).
	KindNotSent
	// KindConflict is a transaction the database rolled back so that
	// another could go on: a deadlock, a lock wait that timed out, a
	// serialization failure, a Galera certification conflict, a busy
	// SQLite file. Nothing of it was written; running it again may succeed.
	KindConflict
)

// Planned reports whether the claim must plan per type: it has limits,
// or one of its types has a rate.
func (req ClaimRequest) Planned() bool {
	if len(req.LimitScopes()) > 0 {
		return true
	}
	for _, t := range req.Types {
		if _, ok := req.TypeRates[t]; ok {
			return true
		}
	}
	return false
}

// LimitScopes lists, in lock order, the limit scopes a claim must lock:
// GlobalScope for the global limit, and each limited task type.
func (req ClaimRequest) LimitScopes() []string {
	var scopes []string
	if req.GlobalLimit > 0 {
		scopes = append(scopes, GlobalScope)
	}
	for _, t := range req.Types {
		if _, ok := req.TypeLimits[t]; ok {
			scopes = append(scopes, t)
		}
	}
	slices.Sort(scopes)
	return scopes
}

// GlobalScope is the limit scope of the global limit; a task type names
// its own scope.
const GlobalScope = "*"
