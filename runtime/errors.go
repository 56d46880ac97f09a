package runtime

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Sentinel errors. Wrapped errors keep them visible to errors.Is.
var (
	// ErrTaskNotFound is leasetype.ErrTaskNotFound.
	ErrTaskNotFound = leasetype.ErrTaskNotFound
	// ErrScheduleNotFound reports a name that names no stored schedule.
	ErrScheduleNotFound = leasetype.ErrScheduleNotFound
	// ErrTaskFinished reports an operation on a task that already reached a
	// terminal state.
	ErrTaskFinished = errors.New("leasegen: task already finished")
	// ErrPayloadTooLarge reports a payload above ClientConfig.MaxPayloadBytes.
	ErrPayloadTooLarge = errors.New("leasegen: payload too large")
	// ErrResultTooLarge reports a result above MaxResultBytes: the task
	// fails for good (a retry would produce it again).
	ErrResultTooLarge = errors.New("leasegen: result too large")
	// ErrTaskNotSucceeded reports a wait for a result of a task that ended
	// FAILED or CANCELLED; the *TaskEndedError carrying it has the task.
	ErrTaskNotSucceeded = errors.New("leasegen: task did not succeed")
	// ErrInvalidTask reports an enqueue request that cannot be stored.
	ErrInvalidTask = errors.New("leasegen: invalid task")
	// ErrInvalidConfig reports a Config that breaks one of its rules.
	ErrInvalidConfig = errors.New("leasegen: invalid config")
	// ErrTaskNotRetryable reports a retry of a task that has not failed or
	// been cancelled.
	ErrTaskNotRetryable = errors.New("leasegen: task cannot be retried")
	// ErrTaskRunning reports a discard of a task a worker holds: cancel it,
	// and discard it once it ended.
	ErrTaskRunning = errors.New("leasegen: task is running")
	// ErrWorkerStarted reports a change to a worker that is already running.
	ErrWorkerStarted = errors.New("leasegen: worker already started")
	// ErrWorkerStopped reports a Start after Stop: a Worker runs once; make
	// a new one with NewWorker.
	ErrWorkerStopped = errors.New("leasegen: worker stopped: a Worker runs once, create a new one with NewWorker")
	// ErrNoTaskDue reports a Worker.WorkOne that found no task of its types
	// due.
	ErrNoTaskDue = errors.New("leasegen: no task due")
	// ErrWorkerIDInUse is leasetype.ErrWorkerIDInUse.
	ErrWorkerIDInUse = leasetype.ErrWorkerIDInUse
	// ErrLimitMismatch is leasetype.ErrLimitMismatch.
	ErrLimitMismatch = leasetype.ErrLimitMismatch
	// ErrUnsupportedDatabase is leasetype.ErrUnsupportedDatabase.
	ErrUnsupportedDatabase = leasetype.ErrUnsupportedDatabase

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

// IsSnooze reports whether err was made by Snooze: the task runs again
// later without using an attempt.
func IsSnooze(err error) bool {
	var s *snoozeError
	return errors.As(err, &s)
}

// ErrUnavailable reports that the database could not be reached or dropped
// the connection before the call's statement was sent: nothing was written
// (enqueues are atomic), and calling again later is safe. A connection lost
// after that is ErrOutcomeUnknown.
var ErrUnavailable = errors.New("leasegen: database unavailable, retry later")

// ErrOutcomeUnknown reports a write whose statement reached the database
// but whose answer did not come back: the connection broke, or the caller's
// context ended, after it was sent. It may or may not have taken effect.
// Retry only what is idempotent: an enqueue with an idempotency key (the
// generated enqueue of every unique task) returns the task the first call
// stored, if it stored one; a retry without a key may store a duplicate.
var ErrOutcomeUnknown = errors.New("leasegen: outcome unknown: the database may have applied the write")

// ErrNoSchema reports a database without leasegen's tables, or without the
// newest of them: Worker.Start refuses such a database, and calls that need
// a missing table fail with it.
var ErrNoSchema = errors.New("leasegen: the database lacks leasegen's schema: run Engine.Migrate (or leasectl migrate up)")

// classify marks connection failures with ErrUnavailable and missing tables
// with ErrNoSchema.
func (e *Engine) classify(err error) error {
	switch {
	case err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNoSchema):
		return err
	case unavailable(err, e.driver.ErrorKind(err)):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case e.driver.ErrorKind(err) == driver.KindNoTable:
		return fmt.Errorf("%w: %w", ErrNoSchema, err)
	}
	return err
}

// failed is classify for an error of a query, said to be about what
// (ErrTaskNotFound says it already).
func (e *Engine) failed(err error, what string, args ...any) error {
	if err == nil || errors.Is(err, ErrTaskNotFound) {
		return err
	}
	return e.classify(fmt.Errorf("leasegen: %s: %w", fmt.Sprintf(what, args...), err))
}

// classifyWrite is classify for a call that writes: a connection lost or a
// context ended after its statement was sent leaves the outcome unknown.
func (e *Engine) classifyWrite(err error) error {
	if err != nil && outcomeUnknown(err, e.driver.ErrorKind(err)) {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return e.classify(err)
}

// outcomeUnknown reports an error that may have come after a statement
// reached the database. database/sql returns driver.ErrBadConn, and a
// failed dial, only when nothing was sent.
func outcomeUnknown(err error, kind driver.ErrorKind) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var opErr *net.OpError
	if kind == driver.KindNotSent || errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		return false
	}
	return errors.As(err, &opErr) || kind == driver.KindConnLost ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET)
}

// unavailable reports errors that mean "no database right now" rather than
// "this request is wrong". A caller's cancelled context is neither.
func unavailable(err error, kind driver.ErrorKind) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) || kind == driver.KindConnLost || kind == driver.KindNotSent ||
		errors.Is(err, sqldriver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET)
}
