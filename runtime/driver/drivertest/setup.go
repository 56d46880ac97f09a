package drivertest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/placeholder"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
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

	root string // the top-level test that runs Exercise
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

// Bundle is what most tests need: a migrated engine on a fresh database,
// its driver, a client on it, and the database for direct checks.
type Bundle struct {
	H      *Harness
	DB     *DB
	Driver driver.Driver
	Engine *runtime.Engine
	Client *runtime.Client
}

// Setup migrates a fresh database of h and returns the bundle on it.
func Setup(t testing.TB, h *Harness) *Bundle {
	t.Helper()
	return SetupOn(t, h, NewDB(t, h))
}

// SetupOn is Setup on an existing database.
func SetupOn(t testing.TB, h *Harness, db *DB) *Bundle {
	t.Helper()
	db.h = h
	b := &Bundle{H: h, DB: db, Driver: h.New(db.DB)}
	b.Engine = runtime.NewEngine(b.Driver)
	dbtest.Must(t, "migrate", b.Engine.Migrate(context.Background()))
	client, err := runtime.NewClient(b.Engine, runtime.ClientConfig{})
	dbtest.Must(t, "new client", err)
	b.Client = client
	return b
}

// networked reports whether h's connections can be cut through a proxy.
func (h *Harness) networked() bool { return h.ServerAddr != nil && h.WithServerAddr != nil }

// proxy starts a TCP proxy to dsn's server, closed when t ends, and
// returns it with the DSN that reaches the database through it.
func (h *Harness) proxy(t testing.TB, dsn string) (*dbtest.Proxy, string) {
	t.Helper()
	p := dbtest.NewProxy(t, h.ServerAddr(dsn))
	return p, h.WithServerAddr(dsn, p.Addr())
}

// engine returns a new engine on a pool of h's.
func (h *Harness) engine(db *sql.DB) *runtime.Engine { return runtime.NewEngine(h.New(db)) }

// Expire moves task id's lease one second into the past on the database's
// clock.
func (b *Bundle) Expire(t *testing.T, id runtime.TaskID) {
	t.Helper()
	b.DB.MustExec(t, b.H.ExpireSQL, id)
}

// LeaseMillisLeft returns how many milliseconds from now (on the
// database's clock) running task id's lease ends.
func (b *Bundle) LeaseMillisLeft(t *testing.T, id runtime.TaskID) int {
	t.Helper()
	return b.MillisUntil(t, b.H.leaseColumn(), id)
}

// MillisUntil returns how many milliseconds from now (on the database's
// clock) the instant in column (LeaseColumn, available_at) of task id
// lies.
func (b *Bundle) MillisUntil(t *testing.T, column string, id runtime.TaskID) int {
	t.Helper()
	return b.DB.Int(t, fmt.Sprintf(b.H.MillisUntilSQL, column), id)
}

// Config is a worker config with short leases, for tests.
func Config() runtime.Config {
	return runtime.Config{
		LeaseTimeout:      time.Second,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoveryInterval:  300 * time.Millisecond,
		MaxExecutionTime:  10 * time.Second,
		PollInterval:      50 * time.Millisecond,
		Logger:            QuietLogger(),
	}
}

// StallProofConfig is Config with 5 s leases and a 1 s heartbeat, for tests
// about something other than the lease's timing: a loaded machine's stalled
// renewals then cost no attempt and cannot self-fence an execution
// (ErrLeaseExpiring) in the 0.9 s that Config's lease allows.
func StallProofConfig() runtime.Config {
	cfg := Config()
	cfg.LeaseTimeout, cfg.HeartbeatInterval = 5*time.Second, time.Second
	return cfg
}

// QuietLogger discards what it is given.
func QuietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Enqueue enqueues a task of typ with an empty JSON payload.
func (b *Bundle) Enqueue(t testing.TB, typ string, opts ...runtime.EnqueueOption) runtime.TaskID {
	t.Helper()
	id, err := b.Client.Enqueue(context.Background(), typ, []byte(`{}`), opts...)
	dbtest.Must(t, "enqueue", err)
	return id
}

// Claim claims up to max tasks of types for owner, on one-second leases.
func (b *Bundle) Claim(t testing.TB, owner string, max int, types ...string) []driver.ClaimedTask {
	t.Helper()
	got, err := b.Driver.Claim(context.Background(), driver.ClaimRequest{Owner: owner, Lease: time.Second, Types: types, Max: max})
	dbtest.Must(t, "claim", err)
	return got
}

// StartWorker starts a worker with the given handlers and stops it when t
// ends.
func (b *Bundle) StartWorker(t testing.TB, cfg runtime.Config, handlers map[string]runtime.HandlerFunc, opts ...runtime.HandlerOption) *runtime.Worker {
	t.Helper()
	w, err := runtime.NewWorker(b.Engine, cfg)
	dbtest.Must(t, "new worker", err)
	for typ, fn := range handlers {
		dbtest.Must(t, "handle "+typ, w.Handle(typ, fn, opts...))
	}
	dbtest.Must(t, "start worker", w.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return w
}

// WaitStatus polls until task id reaches want, failing t after timeout.
func (b *Bundle) WaitStatus(t testing.TB, id runtime.TaskID, want runtime.Status, timeout time.Duration) runtime.TaskInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := b.Client.Get(context.Background(), id)
		dbtest.Must(t, "get", err)
		if info.Status == want {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d: status %s after %s, want %s (last error %q)", id, info.Status, timeout, want, info.LastError)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
