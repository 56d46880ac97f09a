package runtime

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// ErrUnavailable reports that the database could not be reached or dropped
// the connection. Nothing was written by the failed call (enqueues are
// atomic); calling again later is safe.
var ErrUnavailable = errors.New("leasegen: database unavailable, retry later")

// ErrNoSchema reports a database without leasegen's tables.
var ErrNoSchema = errors.New("leasegen: the database has no leasegen schema: run Engine.Migrate (or leasectl migrate up)")

// classify marks connection failures with ErrUnavailable and missing tables
// with ErrNoSchema.
func classify(err error) error {
	switch {
	case err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNoSchema):
		return err
	case unavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case missingSchema(err):
		return fmt.Errorf("%w: %w", ErrNoSchema, err)
	}
	return err
}

// missingSchema reports a statement on a table that does not exist.
func missingSchema(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlErrNoSuchTable
	}
	return strings.Contains(err.Error(), "no such table: leasegen_")
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
