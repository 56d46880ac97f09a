package runtime

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// ErrUnavailable reports that the database could not be reached or dropped
// the connection. Nothing was written by the failed call (enqueues are
// atomic); calling again later is safe.
var ErrUnavailable = errors.New("leasegen: database unavailable, retry later")

// classify marks connection failures with ErrUnavailable.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// unavailable reports errors that mean "no database right now" rather than
// "this request is wrong". A caller's cancelled context is neither.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET)
}
