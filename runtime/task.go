package runtime

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// The types drivers and users share live in leasetype; these aliases keep
// them in runtime's API.
type (
	// TaskID identifies a task. It is the task row's primary key.
	TaskID = leasetype.TaskID
	// Status is a task's state in the lease protocol.
	Status = leasetype.Status
	// TaskInfo is a stored task as a client reads it.
	TaskInfo = leasetype.TaskInfo
)

// The task states. SUCCESS, FAILED and CANCELLED are terminal.
const (
	StatusQueued          = leasetype.StatusQueued
	StatusRunning         = leasetype.StatusRunning
	StatusSuccess         = leasetype.StatusSuccess
	StatusFailed          = leasetype.StatusFailed
	StatusCancelRequested = leasetype.StatusCancelRequested
	StatusCancelled       = leasetype.StatusCancelled
)

// AllStatuses lists every status, in lifecycle order.
var AllStatuses = leasetype.AllStatuses

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
