package drivertest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/placeholder"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Harness is what the suite needs of an engine besides its driver: how to
// make and open its databases, and the few statements a test runs on the
// database's own clock.
type Harness struct {
	// Name names the engine in messages ("mysql", "sqlite").
	Name string
	// NewDatabase creates an empty database for t, dropped or deleted when
	// t ends, and returns its DSN. Without a server it calls t.Skip,
	// saying how to provide one, or, in CI, t.Fatal.
	NewDatabase func(t testing.TB) (dsn string)
	// Open opens a pool on a DSN from NewDatabase.
	Open func(dsn string) (*sql.DB, error)
	// New returns the driver on a pool.
	New func(db *sql.DB) driver.Driver
	// ExpireSQL moves the lease of the task whose id is its one argument
	// one second into the past, on the database's clock.
	ExpireSQL string
	// MillisUntilSQL selects how many milliseconds from the database's
	// now the instant in column %s (LeaseColumn, available_at) of the task
	// whose id is its one argument lies.
	MillisUntilSQL string
	// LeaseColumn is the column that holds a running task's lease end.
	// Default due_at.
	LeaseColumn string
	// LockWaits counts the sessions of the server that wait for a lock
	// another transaction holds; nil for an engine whose transactions
	// begin with the write lock.
	LockWaits func(db *sql.DB) (int, error)
	// Placeholder is the nth (from 1) argument's placeholder in the
	// suite's own statements, which are written with ?. Nil: ?.
	Placeholder func(n int) string
	// Stallable returns a pool on b's database whose statements can be
	// made to hang (stall) until unstall: through a proxy that stops
	// forwarding, or by holding the write lock elsewhere.
	Stallable func(t *testing.T, b *Bundle) (db *sql.DB, stall, unstall func())
	// ServerAddr returns the server address (host:port) of dsn, and
	// WithServerAddr dsn with its address replaced by addr, for the tests
	// that cut a worker's connection at an exact statement through a TCP
	// proxy. Nil for an engine without a network between worker and
	// database: those tests do not run.
	ServerAddr     func(dsn string) string
	WithServerAddr func(dsn, addr string) string
	// PrivateServer starts a server of t's own, which the tests that kill
	// and freeze the database (SIGKILL, SIGSTOP) take down; nil: those
	// tests do not run.
	PrivateServer func(t testing.TB) Server
}

// Server is a database server a test may take down.
type Server interface {
	// NewDatabase creates an empty database and returns its DSN.
	NewDatabase(name string) (dsn string)
	Kill()   // SIGKILL
	Start()  // start it again after Kill
	Freeze() // SIGSTOP
	Thaw()   // SIGCONT
}

// DB is a test's own database.
type DB struct {
	*sql.DB
	DSN string // for other pools and processes: Harness.Open takes it
	h   *Harness
}

// NewDB creates a database for t with h, closed and dropped when t ends.
func NewDB(t testing.TB, h *Harness) *DB {
	t.Helper()
	dsn := h.NewDatabase(t)
	db, err := h.Open(dsn)
	dbtest.Must(t, "open "+h.Name, err)
	t.Cleanup(func() { db.Close() })
	return &DB{DB: db, DSN: dsn, h: h}
}

// OpenDB opens a pool, closed when t ends, on dsn: a database of h's
// engine that NewDatabase did not make (a private server's, one made with
// other grants).
func OpenDB(t testing.TB, h *Harness, dsn string) *DB {
	t.Helper()
	return &DB{DB: h.OpenPool(t, dsn), DSN: dsn, h: h}
}

// Open opens another pool on the same database, closed when t ends.
func (d *DB) Open(t testing.TB) *sql.DB {
	t.Helper()
	return d.h.OpenPool(t, d.DSN)
}

// OpenPool opens a pool on dsn with h.Open, closed when t ends.
func (h *Harness) OpenPool(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := h.Open(dsn)
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	return db
}

// SQL rewrites the ? placeholders of one of the suite's statements into
// the engine's.
func (h *Harness) SQL(query string) string {
	if h.Placeholder == nil {
		return query
	}
	return placeholder.Rewrite(query, h.Placeholder)
}

// leaseColumn is LeaseColumn or its default.
func (h *Harness) leaseColumn() string {
	if h.LeaseColumn == "" {
		return "due_at"
	}
	return h.LeaseColumn
}

// QueryRow runs a query, written with ? placeholders, on the database.
func (d *DB) QueryRow(query string, args ...any) *sql.Row {
	return d.DB.QueryRow(d.h.SQL(query), args...)
}

// MustExec runs a statement, written with ? placeholders, failing t on
// error.
func (d *DB) MustExec(t testing.TB, query string, args ...any) {
	t.Helper()
	if _, err := d.Exec(d.h.SQL(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// Int runs a query, written with ? placeholders, returning one integer.
func (d *DB) Int(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := d.QueryRow(d.h.SQL(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Bundle is what the driver's cases need: a migrated fresh database and
// the driver on it.
type Bundle struct {
	H      *Harness
	DB     *DB
	Driver driver.Driver
}

// Setup migrates a fresh database of h and returns the bundle on it.
func Setup(t testing.TB, h *Harness) *Bundle {
	t.Helper()
	return SetupOn(t, h, NewDB(t, h))
}

// SetupOn is Setup on an existing database.
func SetupOn(t testing.TB, h *Harness, db *DB) *Bundle {
	t.Helper()
	b := NewBundle(h, db, h.New(db.DB))
	b.Driver.Attach(driver.Hooks{})
	dbtest.Must(t, "check", b.Driver.Check(context.Background()))
	dbtest.Must(t, "migrate", b.Driver.Migrate(context.Background()))
	return b
}

// NewBundle is the bundle of d on db, as it is: for a suite that attaches
// d to its own runtime and migrates through it.
func NewBundle(h *Harness, db *DB, d driver.Driver) *Bundle {
	db.h = h
	return &Bundle{H: h, DB: db, Driver: d}
}

// Networked reports whether h's connections can be cut through a proxy.
func (h *Harness) Networked() bool { return h.ServerAddr != nil && h.WithServerAddr != nil }

// Proxy starts a TCP proxy to dsn's server, closed when t ends, and
// returns it with the DSN that reaches the database through it.
func (h *Harness) Proxy(t testing.TB, dsn string) (*dbtest.Proxy, string) {
	t.Helper()
	p := dbtest.NewProxy(t, h.ServerAddr(dsn))
	return p, h.WithServerAddr(dsn, p.Addr())
}

// Expire moves task id's lease one second into the past on the database's
// clock.
func (b *Bundle) Expire(t testing.TB, id leasetype.TaskID) {
	t.Helper()
	b.DB.MustExec(t, b.H.ExpireSQL, id)
}

// LeaseMillisLeft returns how many milliseconds from now (on the
// database's clock) running task id's lease ends.
func (b *Bundle) LeaseMillisLeft(t testing.TB, id leasetype.TaskID) int {
	t.Helper()
	return b.MillisUntil(t, b.H.leaseColumn(), id)
}

// MillisUntil returns how many milliseconds from now (on the database's
// clock) the instant in column (LeaseColumn, available_at) of task id
// lies.
func (b *Bundle) MillisUntil(t testing.TB, column string, id leasetype.TaskID) int {
	t.Helper()
	return b.DB.Int(t, fmt.Sprintf(b.H.MillisUntilSQL, column), id)
}

// Insert stores tasks (type "a" when Type is empty, payload {} and 5
// attempts unless set) and returns their ids.
func (b *Bundle) Insert(t testing.TB, tasks ...driver.NewTask) []leasetype.TaskID {
	t.Helper()
	for i := range tasks {
		if tasks[i].Type == "" {
			tasks[i].Type = "a"
		}
		if tasks[i].Payload == nil {
			tasks[i].Payload = []byte(`{}`)
		}
		if tasks[i].MaxAttempts == 0 {
			tasks[i].MaxAttempts = 5
		}
	}
	ids, err := b.Driver.Insert(context.Background(), b.DB.DB, tasks)
	dbtest.Must(t, "insert", err)
	return ids
}

// InsertOne is Insert of one task.
func (b *Bundle) InsertOne(t testing.TB, task driver.NewTask) leasetype.TaskID {
	t.Helper()
	return b.Insert(t, task)[0]
}

// Get reads task id.
func (b *Bundle) Get(t testing.TB, id leasetype.TaskID) leasetype.TaskInfo {
	t.Helper()
	info, err := b.Driver.Tables().TaskGet(context.Background(), id)
	dbtest.Must(t, "get", err)
	return info
}

// Claim claims up to max tasks of types for owner, on one-second leases.
func (b *Bundle) Claim(t testing.TB, owner string, max int, types ...string) []driver.ClaimedTask {
	t.Helper()
	got, err := b.Driver.Claim(context.Background(), driver.ClaimRequest{Owner: owner, Lease: time.Second, Types: types, Max: max})
	dbtest.Must(t, "claim", err)
	return got
}
