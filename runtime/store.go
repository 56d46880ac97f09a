package runtime

import (
	"context"
	"database/sql"
	"time"
)

// dbtx runs statements: a *sql.DB, or a caller's *sql.Tx.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// store is what an engine does on its database. Every lease instant is
// computed and compared by the database's clock; durations cross this line,
// instants never do (except a caller's explicit RunAt).
type store interface {
	// check verifies once that the connection settings are safe to use.
	check(ctx context.Context) error
	// errorKind reads what a driver error means, from the driver's own
	// error type.
	errorKind(err error) errorKind
	// payloadLimit is the largest payload the server accepts in one row,
	// known after check; 0 when only the client's limit applies.
	payloadLimit() int
	migrate(ctx context.Context) error

	insert(ctx context.Context, q dbtx, tasks []newTask) ([]TaskID, error)
	get(ctx context.Context, id TaskID) (TaskInfo, error)
	listByOwner(ctx context.Context, owner string, statuses []Status, limit int) ([]TaskInfo, error)
	// requestCancel reports whether the task changed state.
	requestCancel(ctx context.Context, id TaskID) (bool, error)

	ensureLimits(ctx context.Context, scopes []string) error
	// claimable reports, without locking anything, whether a task of types
	// could be claimed now.
	claimable(ctx context.Context, types []string) (bool, error)
	claim(ctx context.Context, req claimRequest) ([]claimedTask, error)
	renew(ctx context.Context, owner string, lease time.Duration, refs []leaseRef) ([]leaseState, error)
	// complete, fail and release are fenced on (id, owner, attempt) and an
	// unexpired lease; false means the fence rejected the write.
	complete(ctx context.Context, q dbtx, owner string, ref leaseRef, result string) (bool, error)
	// completeMany completes several of owner's executions with one fenced
	// statement and reports, in order, which took effect.
	completeMany(ctx context.Context, owner string, reqs []completionRequest) ([]bool, error)
	fail(ctx context.Context, owner string, ref leaseRef, f failure) (bool, error)
	release(ctx context.Context, owner string, ref leaseRef, delay time.Duration) (bool, error)
	// releaseUnstarted hands back claimed tasks whose handlers never
	// started, without using an attempt, and returns how many it changed.
	releaseUnstarted(ctx context.Context, owner string, refs []leaseRef) (int64, error)
	// leasesExpired reports, without locking anything, whether some lease
	// has expired.
	leasesExpired(ctx context.Context) (bool, error)
	recoverBatch(ctx context.Context, batch int) ([]recoveredTask, error)
	list(ctx context.Context, f Filter) ([]TaskInfo, error)
	// retryTask reports whether the task changed state.
	retryTask(ctx context.Context, id TaskID) (bool, error)
	purgeBatch(ctx context.Context, olderThan time.Duration, batch int) (int, error)
	stats(ctx context.Context) (QueueStats, error)
	migrationStatus(ctx context.Context) (map[int]time.Time, error)

	// registerWorker inserts r's row after checking, under a lock all
	// starting workers take, that no live worker conflicts with it; it
	// deletes the rows of dead workers first.
	registerWorker(ctx context.Context, r workerRegistration) error
	// renewWorker moves r's row's expiry; when the row is gone it inserts
	// it again and reports false.
	renewWorker(ctx context.Context, r workerRegistration) (bool, error)
	unregisterWorker(ctx context.Context, id string) error
	liveWorkers(ctx context.Context) ([]WorkerInfo, error)

	// beginExecutionTx begins the transaction of an idempotent execution
	// under lease. done, called once the transaction ended, hands its
	// connection back.
	beginExecutionTx(ctx context.Context, lease time.Duration) (tx *sql.Tx, done func(), err error)
	// recordKey records an idempotency key for task id in the caller's
	// transaction and returns the task that holds it: id when the key was
	// new, else the task whose committed execution recorded it.
	recordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id TaskID) (TaskID, error)
}

// newTask is one row to insert.
type newTask struct {
	Type        string
	Payload     []byte
	Priority    int
	RunAt       time.Time // zero: now + Delay on the database's clock
	Delay       time.Duration
	MaxAttempts int
	OwnerID     string
	Key         string // empty: none
}

// leaseFor returns the lease of taskType.
func (r claimRequest) leaseFor(taskType string) time.Duration {
	if d, ok := r.TypeLeases[taskType]; ok {
		return d
	}
	return r.Lease
}

// leaseRef names one execution: a task and the attempt that claimed it.
type leaseRef struct {
	ID      TaskID
	Attempt int
}

type claimRequest struct {
	Owner       string
	Lease       time.Duration            // for types without their own
	TypeLeases  map[string]time.Duration // per-type leases (WithLease)
	Types       []string                 // the task types this worker handles
	Max         int                      // free local slots
	TypeLimits  map[string]int           // per-type concurrency limits (> 0)
	GlobalLimit int                      // 0: none
}

// claimedTask is a task as a claim leaves it, RUNNING under the claimer's
// lease, with only what an execution needs.
type claimedTask struct {
	ID             TaskID
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

// leaseState is what a renewal learned about one execution.
type leaseState struct {
	Ref             leaseRef
	Held            bool // our lease, renewed and unexpired
	CancelRequested bool
}

// completionRequest is one execution to complete, with its result.
type completionRequest struct {
	Ref    leaseRef
	Result string
}

// failure is how an execution failed.
type failure struct {
	Retry   bool          // QUEUED again after Backoff, else FAILED
	Backoff time.Duration // only with Retry
	Message string
}

// Recovery outcomes, as the metrics label them.
const (
	outcomeRequeued  = "requeued"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
)

// recoveredTask is one expired lease that recovery resolved.
type recoveredTask struct {
	ID      TaskID
	Outcome string
	Overdue time.Duration // from lease expiry to recovery
}

// dueTimes reads a row's due_at as TaskInfo shows it: a running task's is
// when its lease ends, a finished task's when it finished; a queued task's
// is its available_at, which TaskInfo has already.
func dueTimes(status Status, due time.Time) (leaseUntil, finishedAt time.Time) {
	switch {
	case status == StatusRunning || status == StatusCancelRequested:
		return due, time.Time{}
	case status.Terminal():
		return time.Time{}, due
	}
	return time.Time{}, time.Time{}
}

// leaseHolder is a row's lease owner as TaskInfo shows it: nobody holds
// the lease of a queued task, whoever held it last.
func leaseHolder(status Status, owner string) string {
	if status == StatusQueued {
		return ""
	}
	return owner
}

// attemptsLeft reports whether a task that used attempt claims, free of them
// free, may run again under maxAttempts.
func attemptsLeft(attempt, free, maxAttempts int) bool {
	return attempt-free < maxAttempts
}
