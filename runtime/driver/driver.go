// Package driver is the contract between leasegen's runtime and a database
// engine, for the authors of engine drivers; services use package runtime
// and a driver's constructor, not this package. The contract is unstable:
// it changes with the runtime, without notice.
//
// A Driver runs the lease protocol's operations on its database, each as
// one semantic step (claim, renew, complete many, recover a batch) rather
// than one query, because the engines' algorithms differ inside them. Every
// lease instant is computed and compared by the database's clock:
// durations cross the contract, instants never do (except a caller's
// explicit RunAt). Package drivertest checks a driver against the protocol.
package driver

import (
	"context"
	"database/sql"
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
	// Check verifies once that the connection settings are safe to use.
	Check(ctx context.Context) error
	// ErrorKind reads what a driver error means, from the driver's own
	// error type.
	ErrorKind(err error) ErrorKind
	// PayloadLimit is the largest payload the server accepts in one row,
	// known after check; 0 when only the client's limit applies.
	PayloadLimit() int
	Migrate(ctx context.Context) error

	Insert(ctx context.Context, q DBTX, tasks []NewTask) ([]leasetype.TaskID, error)
	Get(ctx context.Context, id leasetype.TaskID) (leasetype.TaskInfo, error)
	ListByOwner(ctx context.Context, owner string, statuses []leasetype.Status, limit int) ([]leasetype.TaskInfo, error)
	// RequestCancel reports whether the task changed state.
	RequestCancel(ctx context.Context, id leasetype.TaskID) (bool, error)

	EnsureLimits(ctx context.Context, scopes []string) error
	// Claimable reports, without locking anything, whether a task of types
	// could be claimed now.
	Claimable(ctx context.Context, types []string) (bool, error)
	Claim(ctx context.Context, req ClaimRequest) ([]ClaimedTask, error)
	Renew(ctx context.Context, owner string, lease time.Duration, refs []LeaseRef) ([]LeaseState, error)
	// Complete, fail and release are fenced on (id, owner, attempt) and an
	// unexpired lease; false means the fence rejected the write.
	Complete(ctx context.Context, q DBTX, owner string, ref LeaseRef, result string) (bool, error)
	// CompleteMany completes several of owner's executions with one fenced
	// statement and reports, in order, which took effect.
	CompleteMany(ctx context.Context, owner string, reqs []CompletionRequest) ([]bool, error)
	Fail(ctx context.Context, owner string, ref LeaseRef, f Failure) (bool, error)
	Release(ctx context.Context, owner string, ref LeaseRef, delay time.Duration) (bool, error)
	// ReleaseUnstarted hands back claimed tasks whose handlers never
	// started, without using an attempt, and returns how many it changed.
	ReleaseUnstarted(ctx context.Context, owner string, refs []LeaseRef) (int64, error)
	// LeasesExpired reports, without locking anything, whether some lease
	// has expired.
	LeasesExpired(ctx context.Context) (bool, error)
	RecoverBatch(ctx context.Context, batch int) ([]RecoveredTask, error)
	List(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error)
	// RetryTask reports whether the task changed state.
	RetryTask(ctx context.Context, id leasetype.TaskID) (bool, error)
	PurgeBatch(ctx context.Context, olderThan time.Duration, batch int) (int, error)
	Stats(ctx context.Context) (leasetype.QueueStats, error)
	MigrationStatus(ctx context.Context) (map[int]time.Time, error)

	// RegisterWorker inserts r's row after checking, under a lock all
	// starting workers take, that no live worker conflicts with it; it
	// deletes the rows of dead workers first.
	RegisterWorker(ctx context.Context, r WorkerRegistration) error
	// RenewWorker moves r's row's expiry; when the row is gone it inserts
	// it again and reports false.
	RenewWorker(ctx context.Context, r WorkerRegistration) (bool, error)
	UnregisterWorker(ctx context.Context, id string) error
	LiveWorkers(ctx context.Context) ([]leasetype.WorkerInfo, error)

	// BeginExecutionTx begins the transaction of an idempotent execution
	// under lease. done, called once the transaction ended, hands its
	// connection back.
	BeginExecutionTx(ctx context.Context, lease time.Duration) (tx *sql.Tx, done func(), err error)
	// RecordKey records an idempotency key for task id in the caller's
	// transaction and returns the task that holds it: id when the key was
	// new, else the task whose committed execution recorded it.
	RecordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id leasetype.TaskID) (leasetype.TaskID, error)
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
	GlobalLimit int                      // 0: none
}

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
}

// AttemptsLeft reports whether a task that used attempt claims, free of them
// free, may run again under maxAttempts.
func AttemptsLeft(attempt, free, maxAttempts int) bool {
	return attempt-free < maxAttempts
}

// WorkerRegistration is the row a worker keeps while it runs.
type WorkerRegistration struct {
	ID             string
	Host           string
	PID            int
	MaxConcurrency int
	GlobalLimit    int
	TaskLimits     map[string]int
	// TTL is how long the row lives without a renewal: two
	// RecoveryIntervals, so one late renewal does not end it.
	TTL time.Duration
}

// ErrorKind is what a database error means to the runtime, as a driver
// reads it from its database/sql driver's own error type (error numbers,
// result codes), never from the message text.
type ErrorKind int

const (
	KindOther    ErrorKind = iota // none of the below
	KindNoTable                   // a leasegen table does not exist
	KindConnLost                  // the connection was lost mid-statement
)
