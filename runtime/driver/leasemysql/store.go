// Package leasemysql is leasegen's engine driver for MySQL 8+ and MariaDB
// 10.6+, over github.com/go-sql-driver/mysql:
//
//	db, err := leasemysql.Open("app:secret@tcp(db:3306)/app")
//	...
//	engine := runtime.NewEngine(leasemysql.New(db))
//
// OpenNodes opens the pool on the nodes of a Galera cluster or a Group
// Replication group instead, and follows the writable one.
//
// Claims take tasks with FOR UPDATE SKIP LOCKED in two steps (an index-only
// scan, then the rows by id); limits are rows in leasegen_limits that a
// limited claim locks by writing them (so that a Galera cluster certifies
// them); every instant comes from the server's NOW(3). TiDB is refused at
// Check (ErrUnsupportedDatabase).
package leasemysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// ErrSessionNotUTC reports a MySQL session whose time zone is not UTC:
// the DSN must set time_zone, or the server run in UTC.
var ErrSessionNotUTC = errors.New("leasegen: MySQL session time zone is not UTC")

// store runs the lease protocol on MySQL 8 or MariaDB 10.6+.
type store struct {
	db    *sql.DB
	q     *mysqldb.Queries
	hooks driver.Hooks
	driver.LocalWakeups

	mu      sync.Mutex
	checked bool
	// returning is true on MariaDB, whose INSERT ... RETURNING gives a
	// batch's ids in one statement.
	returning bool
	// consecutiveIDs is true when a multi-row INSERT gets consecutive ids
	// (innodb_autoinc_lock_mode 0 or 1, auto_increment_increment 1).
	consecutiveIDs bool
	// prepared is the full-chunk INSERT (preparedInsert), once prepared;
	// preparedFailed says the server refused to prepare it.
	prepared       *sql.Stmt
	preparedFailed bool
	// idleVariable is the session variable that bounds an idle
	// transaction, isolationVariable the one that holds the isolation
	// level (sessionVariable).
	idleVariable, isolationVariable string
	// maxPayload is the largest payload a statement can carry under the
	// server's max_allowed_packet (escapedLimit).
	maxPayload int
	// notes are what Check found that the operator should know.
	notes []string
	// contended is when (Unix ns) a claim last found rows another claim
	// held: claims take turns for a while after (contendedLately).
	contended atomic.Int64
}

// escapedLimit is the largest payload that fits a statement of at most
// maxPacket bytes: with interpolateParams the driver escapes a payload
// into the statement's text, which can double it (quotes, NUL bytes), and
// the rest of the row takes a few kilobytes.
func escapedLimit(maxPacket int64) int {
	return int(max(maxPacket-64<<10, 0) / 2)
}

func (s *store) PayloadLimit() int { return s.maxPayload }

func (s *store) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notes
}

// New returns the driver on db. The DSN must carry parseTime=true, keep
// loc=UTC (the driver's default) and run sessions in UTC
// (time_zone=%27%2B00%3A00%27 unless the server's own zone is UTC); the
// first operation checks this and says what to change. Recommended too:
// interpolateParams=true (one round trip a statement instead of three). Open
// adds all of it to a DSN.
func New(db *sql.DB) driver.Driver {
	return &store{db: db, q: mysqldb.New()}
}

// Attach keeps the runtime's hooks.
func (s *store) Attach(h driver.Hooks) { s.hooks = h }

// DB returns the database the driver runs on.
func (s *store) DB() *sql.DB { return s.db }

// retry runs op again after a deadlock or lock-wait timeout.
func (s *store) retry(ctx context.Context, op func() error) error {
	return sqlbuild.WithRetry(ctx, mysqlConflict, s.hooks.ConflictRetried, op)
}

// Check runs once per store until it succeeds: the session must compute
// NOW() in UTC and the driver must parse DATETIME as UTC, or lease instants
// written by one process would be misread by another.
func (s *store) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked {
		return nil
	}
	var (
		version, tz, systemTZ    string
		offsetSeconds, maxPacket int64
		lockMode, increment      int
		probe                    time.Time
	)
	// A server that cannot hold the guarantees may not know the
	// variables the next query reads: its version goes first.
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return fmt.Errorf("leasegen: checking the MySQL session: %w", err)
	}
	if err := refuse(version); err != nil {
		return err
	}
	err := s.db.QueryRowContext(ctx, `SELECT @@session.time_zone, @@system_time_zone,
		TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()), @@innodb_autoinc_lock_mode, @@auto_increment_increment,
		CAST('2000-01-01 00:00:00' AS DATETIME), @@max_allowed_packet`).
		Scan(&tz, &systemTZ, &offsetSeconds, &lockMode, &increment, &probe, &maxPacket)
	if err != nil {
		if isScanTimeError(err) {
			return fmt.Errorf("leasegen: the MySQL DSN needs parseTime=true: %w", err)
		}
		return fmt.Errorf("leasegen: checking the MySQL session: %w", err)
	}
	if offsetSeconds != 0 || !utcZone(tz, systemTZ) {
		return fmt.Errorf("%w (time_zone %q, system %q): add time_zone=%%27%%2B00%%3A00%%27 to the DSN", ErrSessionNotUTC, tz, systemTZ)
	}
	if !probe.Equal(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		return fmt.Errorf("leasegen: the MySQL driver parses times in %s: use loc=UTC in the DSN", probe.Location())
	}
	if s.idleVariable, err = sessionVariable(ctx, s.db, idleVariables); err != nil {
		return fmt.Errorf("leasegen: checking the MySQL session: %w", err)
	}
	if s.isolationVariable, err = sessionVariable(ctx, s.db, isolationVariables); err != nil {
		return fmt.Errorf("leasegen: checking the MySQL session: %w", err)
	}
	if s.notes, err = galeraNotes(ctx, s.db); err != nil {
		return fmt.Errorf("leasegen: checking the MySQL server: %w", err)
	}
	s.returning = isMariaDB(version)
	s.consecutiveIDs = lockMode <= 1 && increment == 1
	s.maxPayload = escapedLimit(maxPacket)
	s.checked = true
	return nil
}

func utcZone(tz, systemTZ string) bool {
	switch tz {
	case "+00:00", "UTC", "Etc/UTC", "GMT":
		return true
	case "SYSTEM":
		return systemTZ == "UTC" || systemTZ == "Etc/UTC" || systemTZ == "GMT" || systemTZ == "Coordinated Universal Time"
	}
	return false
}

// taskEnds reads due_at: the lease's end while running, the finish once
// final.
func taskEnds(r mysqldb.LeasegenTask, status leasetype.Status) (leaseUntil, finishedAt time.Time) {
	return sqlbuild.DueTimes(status, r.DueAt)
}

// neverStarted is started_at before a task's first claim: the column is
// never NULL, so that a claim updates the row in place.
var neverStarted = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

func fromMySQLStartedAt(t time.Time) time.Time {
	if t.Equal(neverStarted) {
		return time.Time{}
	}
	return t
}

func micros(d time.Duration) int64 { return d.Microseconds() }

// mysqlDialect is how MySQL writes the grouped statements.
var mysqlDialect = sqlbuild.Dialect{Now: "NOW(3)", Param: sqlbuild.QuestionMark,
	UpsertWindow: "ON DUPLICATE KEY UPDATE window_us = ", Requeue: "due_at = IF(status = 'CANCEL_REQUESTED', NOW(3), available_at), " +
		"due_priority = IF(status = 'CANCEL_REQUESTED' OR flow_slot IS NOT NULL, 0, priority), " +
		"status = IF(status = 'CANCEL_REQUESTED', 'CANCELLED', IF(flow_slot IS NULL, 'QUEUED', 'WAITING')), flow_slot = NULL, " +
		"free_attempts = free_attempts + 1, updated_at = NOW(3)"}

// MySQL error numbers the store treats specially.
const (
	mysqlErrDBAccessDenied    = 1044
	mysqlErrTableAccessDenied = 1142
	mysqlErrNoSuchTable       = 1146
	mysqlErrUnknownVariable   = 1193
	mysqlErrLockWaitTimeout   = 1205
	mysqlErrDeadlock          = 1213
	mysqlErrReadOnly          = 1290 // ER_OPTION_PREVENTS_STATEMENT: read_only, super_read_only
	mysqlErrReplicaReadOnly   = 1836 // ER_READ_ONLY_MODE
	mysqlErrNotReady          = 1047 // ER_UNKNOWN_COM_ERROR: Galera's "WSREP has not yet prepared node for application use"
	mysqlErrShutdown          = 1053 // ER_SERVER_SHUTDOWN
)

// deniedPrivilege reports a statement the user's grants do not allow.
func deniedPrivilege(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlErrDBAccessDenied || me.Number == mysqlErrTableAccessDenied)
}

// ErrorKind reads MySQL's error numbers and the driver's lost-connection
// error.
func (s *store) ErrorKind(err error) driver.ErrorKind {
	var me *mysql.MySQLError
	var unconnected notConnected
	switch {
	case errors.As(err, &unconnected):
		return driver.KindNotSent // Open's pool: no connection was made, nothing was sent
	case errors.As(err, &me) && me.Number == mysqlErrNoSuchTable:
		return driver.KindNoTable
	case errors.Is(err, mysql.ErrInvalidConn):
		return driver.KindConnLost
	case mysqlConflict(err):
		return driver.KindConflict
	case errors.As(err, &me) && (me.Number == mysqlErrReadOnly || me.Number == mysqlErrReplicaReadOnly || me.Number == mysqlErrNotReady):
		return driver.KindNotSent // the node refused the statement: a demoted primary, a replica, a Galera node outside the primary component
	}
	return driver.KindOther
}

// mysqlConflict reports a deadlock or lock-wait timeout, after which the
// whole operation may simply run again.
func mysqlConflict(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlErrDeadlock || me.Number == mysqlErrLockWaitTimeout)
}

func isMariaDB(version string) bool { return strings.Contains(version, "MariaDB") }

func isScanTimeError(err error) bool {
	return strings.Contains(err.Error(), "into type *time.Time")
}
