package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Sentinel errors. Wrapped errors keep them visible to errors.Is.
var (
	// ErrTaskNotFound is leasetype.ErrTaskNotFound.
	ErrTaskNotFound = leasetype.ErrTaskNotFound
	// ErrTaskFinished reports an operation on a task that already reached a
	// terminal state.
	ErrTaskFinished = errors.New("leasegen: task already finished")
	// ErrPayloadTooLarge reports a payload above ClientConfig.MaxPayloadBytes.
	ErrPayloadTooLarge = errors.New("leasegen: payload too large")
	// ErrInvalidTask reports an enqueue request that cannot be stored.
	ErrInvalidTask = errors.New("leasegen: invalid task")
	// ErrInvalidConfig reports a Config that breaks one of its rules.
	ErrInvalidConfig = errors.New("leasegen: invalid config")
	// ErrTaskNotRetryable reports a retry of a task that has not failed or
	// been cancelled.
	ErrTaskNotRetryable = errors.New("leasegen: task cannot be retried")
	// ErrWorkerStarted reports a change to a worker that is already running.
	ErrWorkerStarted = errors.New("leasegen: worker already started")
	// ErrWorkerStopped reports a Start after Stop: a Worker runs once; make
	// a new one with NewWorker.
	ErrWorkerStopped = errors.New("leasegen: worker stopped: a Worker runs once, create a new one with NewWorker")
	// ErrWorkerIDInUse is leasetype.ErrWorkerIDInUse.
	ErrWorkerIDInUse = leasetype.ErrWorkerIDInUse
	// ErrLimitMismatch reports a Worker.Start whose GlobalLimit or per-type
	// concurrency differs from a live worker's: the limits are exact only
	// when every worker counts to the same number.
	ErrLimitMismatch = errors.New("leasegen: limits differ from a live worker's")

	// ErrLeaseLost is the cause of an execution's context when its lease was
	// not renewed: it expired, or another execution holds the task now.
	ErrLeaseLost = errors.New("leasegen: lease lost")
	// ErrLeaseExpiring is the cause when the worker could not renew in time
	// and stops the execution before its lease can expire (self-fencing).
	ErrLeaseExpiring = errors.New("leasegen: lease could not be renewed in time")
	// ErrCancelRequested is the cause when someone asked to cancel the task.
	ErrCancelRequested = errors.New("leasegen: cancellation requested")
	// ErrWorkerStopping is the cause when the worker's drain timeout ran out.
	ErrWorkerStopping = errors.New("leasegen: worker stopping")
	// ErrExecutionTimeout is the cause when an execution ran longer than its
	// task type's maximum execution time.
	ErrExecutionTimeout = errors.New("leasegen: max execution time exceeded")
)

// permanentError marks a handler error that must not be retried.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that the task fails at once, without further
// attempts. Permanent(nil) returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent: the task fails
// without further attempts.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// snoozeError asks for the task to run again later.
type snoozeError struct{ after time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("snoozed for %s", e.after) }

// Snooze returns an error that puts the task back in the queue to run again
// after d, without using one of its attempts.
func Snooze(d time.Duration) error {
	return &snoozeError{after: max(d, 0)}
}
