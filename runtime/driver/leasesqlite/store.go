// Package leasesqlite is leasegen's engine driver for a SQLite file, over
// the pure-Go modernc.org/sqlite, which it registers as "sqlite":
//
//	db, err := leasesqlite.Open("tasks.db")
//	...
//	engine := runtime.NewEngine(leasesqlite.New(db))
//
// Any number of processes on one machine may share the file. SQLite has
// one writer at a time: claims scan outside the write lock and then take
// the tasks they scanned with one UPDATE fenced on their attempt, so no
// SKIP LOCKED and no limit rows are needed.
package leasesqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the driver "sqlite"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// store runs the lease protocol on one SQLite file shared by any
// number of processes on one machine. SQLite serializes writers, so a claim
// in a write transaction sees every committed claim: no SKIP LOCKED and no
// limit rows are needed. Instants are milliseconds since the epoch from
// unixepoch('subsec'), the database's clock.
type store struct {
	db    *sql.DB
	q     *sqlitedb.Queries
	hooks driver.Hooks
	driver.LocalWakeups
	// writeMu queues this process's writers in Go: SQLite has one writer
	// at a time, and its busy handler would make them sleep and poll.
	writeMu sync.Mutex

	mu      sync.Mutex
	checked bool
}

// New returns the driver on db, a pool on a SQLite file opened with DSN's
// settings (Open opens one).
func New(db *sql.DB) driver.Driver {
	return &store{db: db, q: sqlitedb.New()}
}

// Open opens the SQLite file at path, creating it when it does not
// exist, with DSN's settings.
func Open(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("leasegen: open SQLite %s: %w", path, err)
	}
	return db, nil
}

// Attach keeps the runtime's hooks.
func (s *store) Attach(h driver.Hooks) { s.hooks = h }

// DB returns the database the driver runs on.
func (s *store) DB() *sql.DB { return s.db }

// retry runs the write op, one at a time in this process, and again after
// the database stayed busy past the busy timeout.
func (s *store) retry(ctx context.Context, op func() error) error {
	return sqlbuild.WithRetry(ctx, sqliteConflict, s.hooks.ConflictRetried, func() error {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		return op()
	})
}

// DSN returns the DSN of a SQLite file for the pure-Go driver
// modernc.org/sqlite (driver name "sqlite"), with the settings several
// processes need: WAL, a busy timeout, and transactions that take the write
// lock when they begin. The path is escaped, so any file name works
// ("tasks#1.db", "t?x.db", "50%.db").
func DSN(path string) string {
	uri := "file:"
	if strings.HasPrefix(path, "//") {
		uri = "file://" // an empty authority, or the path's start would be read as a host
	}
	return uri + sqlitePathEscaper.Replace(path) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
}

// sqlitePathEscaper percent-encodes what a SQLite URI file name cannot hold
// as is: the query and fragment marks, and the escape mark itself.
var sqlitePathEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// check verifies once that writers wait for each other instead of failing
// at once, and that the SQLite library has what the queries use.
// PayloadLimit is 0: SQLite's own limit (1 GB a value) is far above the
// client's.
func (s *store) PayloadLimit() int { return 0 }

func (s *store) Notes() []string { return nil }

func (s *store) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked {
		return nil
	}
	var busy int
	var version string
	// A new file's first connections switch it to WAL, which takes its
	// lock without the busy handler: processes that open a new file at
	// once see SQLITE_BUSY for a moment.
	err := s.db.QueryRowContext(ctx, "SELECT timeout, sqlite_version() FROM pragma_busy_timeout").Scan(&busy, &version)
	for wait := 5 * time.Millisecond; sqliteConflict(err) && wait <= time.Second; wait *= 2 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("leasegen: checking the SQLite connection: %w", ctx.Err())
		case <-time.After(wait):
		}
		err = s.db.QueryRowContext(ctx, "SELECT timeout, sqlite_version() FROM pragma_busy_timeout").Scan(&busy, &version)
	}
	if err != nil {
		return fmt.Errorf("leasegen: checking the SQLite connection: %w", err)
	}
	if busy <= 0 {
		return fmt.Errorf("leasegen: SQLite busy_timeout is 0, so concurrent writers fail at once: open the database with leasesqlite.DSN(path) (or leasesqlite.Open) or add _pragma=busy_timeout(10000)")
	}
	if !sqliteAtLeast(version, 3, 42) {
		return fmt.Errorf("leasegen: SQLite %s is too old: leasegen needs 3.42 or newer (unixepoch('subsec'), RETURNING)", version)
	}
	s.checked = true
	return nil
}

func sqliteAtLeast(version string, major, minor int) bool {
	var maj, min int
	if _, err := fmt.Sscanf(version, "%d.%d", &maj, &min); err != nil {
		return false
	}
	return maj > major || maj == major && min >= minor
}

// SQLite result codes the store reads (https://sqlite.org/rescode.html):
// the primary code is the extended code's low byte.
const (
	sqliteError = 1 // a generic error, among them "no such table"
	sqliteBusy  = 5 // the write lock stayed taken past busy_timeout
)

// sqliteCode is err's primary SQLite result code, or 0. The driver's
// *sqlite.Error is read through its Code method, so that runtime does not
// link the driver: a service that uses only MySQL does not carry SQLite.
func sqliteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}

// sqliteConflict reports a write that gave up waiting for the lock; the
// whole operation may run again.
func sqliteConflict(err error) bool { return sqliteCode(err) == sqliteBusy }

// ErrorKind reads SQLite's result codes. A missing table has only the
// generic code, so its message tells it apart; an embedded database never
// loses its connection.
func (s *store) ErrorKind(err error) driver.ErrorKind {
	switch code := sqliteCode(err); {
	case code == sqliteError && strings.Contains(err.Error(), "no such table: leasegen_"):
		return driver.KindNoTable
	case code == sqliteBusy:
		return driver.KindConflict
	}
	return driver.KindOther
}

// immediate runs fn in a write transaction taken at BEGIN on one connection,
// whatever the DSN's _txlock: a deferred transaction that reads first
// cannot always upgrade to a writer.
func (s *store) immediate(ctx context.Context, fn func(conn *sql.Conn) error) error {
	return s.retry(ctx, func() error {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		err = fn(conn)
		if err == nil {
			_, err = conn.ExecContext(ctx, "COMMIT")
		}
		if err != nil {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
				// Never hand a connection inside a transaction back to the pool.
				_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn })
			}
		}
		return err
	})
}

// EnsureLimits has nothing to create: the write lock serializes claims.
func (s *store) EnsureLimits(context.Context, []string) error { return nil }

func (s *store) EnsureRates(ctx context.Context, rates map[string]driver.Rate) error {
	for _, t := range slices.Sorted(maps.Keys(rates)) {
		query, args := sqlbuild.RateSlotsSQL(t, rates[t], sqliteDialect)
		if _, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args); err != nil {
			return fmt.Errorf("leasegen: create the rate slots of %s: %w", t, err)
		}
	}
	return nil
}

// taskEnds reads due_at: the lease's end while running, the finish once
// final.
func taskEnds(r sqlitedb.LeasegenTask, status leasetype.Status) (leaseUntil, finishedAt time.Time) {
	return sqlbuild.DueTimes(status, fromMillis(r.DueAt))
}

// sqliteDialect is how SQLite writes the grouped statements.
var sqliteDialect = sqlbuild.Dialect{Now: sqliteNow, Unindexed: "+", Param: sqlbuild.QuestionMark,
	UpsertWindow: "ON CONFLICT (task_type, flow_key, slot) DO UPDATE SET window_us = ",
	Requeue: "due_at = IIF(status = 'CANCEL_REQUESTED', " + sqliteNow + ", available_at), " +
		"status = IIF(status = 'CANCEL_REQUESTED', 'CANCELLED', IIF(flow_slot IS NULL, 'QUEUED', 'WAITING')), flow_slot = NULL, " +
		"free_attempts = free_attempts + 1, updated_at = " + sqliteNow}

// sqliteNow is the database's clock in milliseconds, as queries/sqlite
// writes it: a scalar subquery, read once per statement.
const sqliteNow = "(SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))"

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return fromMillis(ms.Int64)
}

func nullMillis(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: !t.IsZero()}
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// tablesTx runs fn in a write transaction taken at BEGIN (BEGIN
// IMMEDIATE): SQLite has one writer at a time, so every InTx, and every
// other write, waits for the one in progress; again after the database
// stayed busy past the busy timeout.
func (s *store) tablesTx(ctx context.Context, fn func(driver.Tables) error) error {
	return s.immediate(ctx, func(conn *sql.Conn) error { return fn(s.tablesIn(conn)) })
}

// WorkerLockRegistry has nothing to lock: InTx holds the write lock,
// which serializes registrations.
func (t tables) WorkerLockRegistry(context.Context) error { return nil }
