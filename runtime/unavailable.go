package runtime

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/leasegen/leasegen/runtime/driver"
)

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
	if errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &opErr) && opErr.Op == "dial") {
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
	return errors.As(err, &opErr) || kind == driver.KindConnLost ||
		errors.Is(err, sqldriver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET)
}
