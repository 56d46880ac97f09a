package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TaskID identifies a task. It is the task row's primary key.
type TaskID int64

// Status is a task's state in the lease protocol.
type Status string

// The task states. SUCCESS, FAILED and CANCELLED are terminal.
const (
	StatusQueued          Status = "QUEUED"
	StatusRunning         Status = "RUNNING"
	StatusSuccess         Status = "SUCCESS"
	StatusFailed          Status = "FAILED"
	StatusCancelRequested Status = "CANCEL_REQUESTED"
	StatusCancelled       Status = "CANCELLED"
)

// AllStatuses lists every status, in lifecycle order.
var AllStatuses = []Status{
	StatusQueued, StatusRunning, StatusCancelRequested,
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
	IdempotencyKey string
	LastError      string
	Result         string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	StartedAt      time.Time // when the latest attempt started; zero until first claimed
	FinishedAt     time.Time // zero until terminal
}

// Task is one execution of a task, as its handler sees it.
type Task struct {
	ID             TaskID
	Type           string
	Attempt        int // the fencing token: rises with every claim
	MaxAttempts    int
	Priority       int
	OwnerID        string
	IdempotencyKey string
	Payload        []byte

	exec *execution // nil outside a worker
}

// SetResult records what a successful execution produced (for example an
// artifact id). It is stored when the task completes.
func (t *Task) SetResult(result string) {
	if t.exec != nil {
		t.exec.setResult(result)
	}
}

// CompleteTx marks the task SUCCESS inside tx, fenced on this execution's
// lease: the caller's writes in tx and the completion commit together or not
// at all. It returns ErrLeaseLost when the lease is no longer held, in which
// case the caller must roll tx back. After a successful CompleteTx and
// commit, the handler's return value is ignored.
func (t *Task) CompleteTx(ctx context.Context, tx *sql.Tx) error {
	if t.exec == nil {
		return fmt.Errorf("%w: CompleteTx called outside a worker", ErrInvalidTask)
	}
	return t.exec.completeTx(ctx, tx)
}
