// Package leasepostgres is leasegen's engine driver for PostgreSQL 13+,
// over database/sql with the pgx v5 stdlib driver, so that idempotent
// handlers and EnqueueXTx keep using *sql.Tx:
//
//	db, err := leasepostgres.Open("postgres://app:secret@db:5432/app")
//	...
//	engine := runtime.NewEngine(leasepostgres.New(db))
//
// A claim is one statement (a CTE that locks the next tasks with FOR UPDATE
// SKIP LOCKED, then starts their leases, returning what an execution
// needs); renewals and grouped completions take arrays; a renewal writes no
// indexed column, so it is a heap-only update. Enqueues notify workers in
// other processes with LISTEN/NOTIFY. Every instant is the server's now().
package leasepostgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// minServerVersion is the oldest PostgreSQL the driver runs on (13: the
// planner features of its queries, and versions still supported upstream).
const minServerVersion = 130000

// ErrServerTooOld reports a PostgreSQL older than version 13.
var ErrServerTooOld = errors.New("leasegen: PostgreSQL 13 or newer is needed")

// store runs the lease protocol on PostgreSQL.
type store struct {
	db *sql.DB
	// arrays is db for sqlc's queries: it passes their arrays as slices.
	arrays nativeArrays
	q      *pgdb.Queries
	hooks  driver.Hooks
	*wakeups

	mu      sync.Mutex
	checked bool
}

// New returns the driver on db, a pool opened with the pgx driver (Open, or
// sql.Open("pgx", dsn) after importing github.com/jackc/pgx/v5/stdlib,
// with more idle connections than database/sql's 2: see Open).
func New(db *sql.DB) driver.Driver {
	s := &store{db: db, arrays: nativeArrays{db}, q: pgdb.New()}
	s.wakeups = newWakeups(db)
	return s
}

// Attach keeps the runtime's hooks.
func (s *store) Attach(h driver.Hooks) { s.hooks = h }

// DB returns the database the driver runs on.
func (s *store) DB() *sql.DB { return s.db }

// PayloadLimit is 0: a bytea holds up to 1 GB, far above the client's
// limit.
func (s *store) PayloadLimit() int { return 0 }

func (s *store) Notes() []string { return nil }

// retry runs op again after a deadlock, a serialization failure or a lock
// that was not available.
func (s *store) retry(ctx context.Context, op func() error) error {
	return sqlbuild.WithRetry(ctx, conflict, s.hooks.ConflictRetried, op)
}

// Check runs once per store until it succeeds: the server must be recent
// enough for the queries. timestamptz instants are absolute, so no session
// time zone matters.
func (s *store) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked {
		return nil
	}
	if _, ok := s.db.Driver().(*stdlib.Driver); !ok {
		return errNotPgx // the wake-up listener and the array arguments need pgx
	}
	var version string
	if err := s.db.QueryRowContext(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		return fmt.Errorf("leasegen: checking the PostgreSQL server: %w", err)
	}
	if n, err := strconv.Atoi(version); err != nil || n < minServerVersion {
		return fmt.Errorf("%w (server_version_num %s)", ErrServerTooOld, version)
	}
	s.checked = true
	return nil
}

// SQLSTATE codes the driver reads.
const (
	codeUndefinedTable       = "42P01"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeLockNotAvailable     = "55P03"
	codeInsufficientPrivs    = "42501"
	codeAdminShutdown        = "57P01"
	codeCrashShutdown        = "57P02"
	codeCannotConnectNow     = "57P03"
	codeIdleInTxTimeout      = "25P03"
	codeReadOnlyTransaction  = "25006"
)

// ErrorKind reads the server's SQLSTATE (a missing table, or a server
// that ended the session: shutting down, starting up, an idle transaction
// timed out) and pgx's word that a statement was never sent.
func (s *store) ErrorKind(err error) driver.ErrorKind {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return driver.KindNotSent // no connection was made (a refused dial, a server starting up: 57P03): nothing was sent
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUndefinedTable:
			return driver.KindNoTable
		case codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow, codeIdleInTxTimeout:
			return driver.KindConnLost
		case codeSerializationFailure, codeDeadlockDetected, codeLockNotAvailable:
			return driver.KindConflict
		case codeReadOnlyTransaction:
			return driver.KindNotSent // refused by a standby or a demoted primary: nothing was written, and Open's pool closed the connection
		}
		return driver.KindOther
	}
	var unstarted notStarted
	if pgconn.SafeToRetry(err) || errors.As(err, &unstarted) {
		return driver.KindNotSent // pgx found the connection closed before sending anything, or the transaction never began
	}
	return driver.KindOther // a connection broken mid-statement is a net or io error, which the runtime reads itself
}

// conflict reports an error that running the operation again can cure.
func conflict(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == codeSerializationFailure || pe.Code == codeDeadlockDetected || pe.Code == codeLockNotAvailable
}

func (s *store) EnsureRates(ctx context.Context, rates map[string]driver.Rate) error {
	for _, t := range slices.Sorted(maps.Keys(rates)) {
		r := rates[t]
		err := s.q.RateSlotsEnsure(ctx, s.db, pgdb.RateSlotsEnsureParams{TaskType: t, WindowUs: micros(r.Window), RateLimit: int32(r.Limit)})
		if err != nil {
			return fmt.Errorf("leasegen: create the rate slots of %s: %w", t, err)
		}
	}
	return nil
}

func (s *store) EnsureLimits(ctx context.Context, scopes []string) error {
	for _, scope := range scopes {
		if err := s.q.LimitEnsure(ctx, s.arrays, pgdb.LimitEnsureParams{Scope: scope}); err != nil {
			return fmt.Errorf("leasegen: create limit row %q: %w", scope, err)
		}
	}
	return nil
}

// taskEnds reads the lease_until and finished_at columns.
func taskEnds(r pgdb.LeasegenTask, status leasetype.Status) (leaseUntil, finishedAt time.Time) {
	switch {
	case status == leasetype.StatusRunning || status == leasetype.StatusCancelRequested:
		return utc(r.LeaseUntil), time.Time{}
	case status.Terminal():
		return time.Time{}, utc(r.FinishedAt)
	}
	return time.Time{}, time.Time{}
}

// utc is a nullable instant in UTC, zero for NULL.
func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// micros is d in whole microseconds, the unit of the queries' intervals.
func micros(d time.Duration) int64 { return d.Microseconds() }
