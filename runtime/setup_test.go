package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// Engine kinds the conformance suite runs on.
const (
	kindMySQL  = "mysql"
	kindSQLite = "sqlite"
)

// testBundle is what most tests need: a migrated engine on a fresh
// database, a client on it, and the database for direct checks.
type testBundle struct {
	kind   string
	db     *testDB
	engine *Engine
	client *Client
}

// testDB is a test's own database: a fresh MySQL database or SQLite file.
type testDB struct {
	DB   *sql.DB
	DSN  string // for other pools and processes, with the driver below
	kind string
}

// driverName is the database/sql driver of a kind.
func driverName(kind string) string {
	if kind == kindSQLite {
		return "sqlite"
	}
	return "mysql"
}

// newTestDB creates a database of kind for t, dropped when t ends.
func newTestDB(t testing.TB, kind string) *testDB {
	t.Helper()
	if kind == kindMySQL {
		d := dbtest.New(t)
		return &testDB{DB: d.DB, DSN: d.DSN, kind: kind}
	}
	dsn := SQLiteDSN(filepath.Join(t.TempDir(), "tasks.db"))
	db, err := sql.Open("sqlite", dsn)
	dbtest.Must(t, "open sqlite", err)
	t.Cleanup(func() { db.Close() })
	return &testDB{DB: db, DSN: dsn, kind: kind}
}

// Open opens another pool on the same database.
func (d *testDB) Open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName(d.kind), d.DSN)
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	return db
}

// Exec runs a statement, failing t on error.
func (d *testDB) Exec(t testing.TB, query string, args ...any) {
	t.Helper()
	if _, err := d.DB.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// Int runs a query returning one integer.
func (d *testDB) Int(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := d.DB.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// engineFor returns the engine of kind on db.
func engineFor(kind string, db *sql.DB) *Engine {
	if kind == kindSQLite {
		return SQLite(db)
	}
	return MySQL(db)
}

func setupEngine(t testing.TB, kind string) *testBundle {
	t.Helper()
	db := newTestDB(t, kind)
	engine := engineFor(kind, db.DB)
	dbtest.Must(t, "migrate", engine.Migrate(context.Background()))
	client, err := NewClient(engine, ClientConfig{})
	dbtest.Must(t, "new client", err)
	return &testBundle{kind: kind, db: db, engine: engine, client: client}
}

// setup is setupEngine on MySQL, for tests of MySQL itself.
func setup(t *testing.T) *testBundle {
	t.Helper()
	return setupEngine(t, kindMySQL)
}

// forEachEngine runs test once per engine, in parallel subtests named after
// the engine: the engines share every lease-protocol test.
func forEachEngine(t *testing.T, test func(t *testing.T, b *testBundle)) {
	forEachKind(t, func(t *testing.T, kind string) { test(t, setupEngine(t, kind)) })
}

// forEachKind runs test once per engine kind, in parallel subtests, for
// tests that set up their database themselves.
func forEachKind(t *testing.T, test func(t *testing.T, kind string)) {
	t.Parallel()
	for _, kind := range []string{kindMySQL, kindSQLite} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, kind)
		})
	}
}

// expire moves task id's lease one second into the past on the database's
// clock.
func (b *testBundle) expire(t *testing.T, id TaskID) {
	t.Helper()
	if b.kind == kindSQLite {
		b.db.Exec(t, "UPDATE leasegen_tasks SET due_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) - 1000 WHERE id = ?", id)
		return
	}
	b.db.Exec(t, "UPDATE leasegen_tasks SET due_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", id)
}

// msUntil returns how many milliseconds from now (on the database's clock)
// the instant in column (due_at, available_at) of task id lies.
func (b *testBundle) msUntil(t *testing.T, column string, id TaskID) int {
	t.Helper()
	query := fmt.Sprintf("SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), %s) DIV 1000 FROM leasegen_tasks WHERE id = ?", column)
	if b.kind == kindSQLite {
		query = fmt.Sprintf("SELECT %s - CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM leasegen_tasks WHERE id = ?", column)
	}
	return b.db.Int(t, query, id)
}

// testConfig is a worker config with short leases, for tests.
func testConfig() Config {
	return Config{
		LeaseTimeout:      time.Second,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoveryInterval:  300 * time.Millisecond,
		MaxExecutionTime:  10 * time.Second,
		PollInterval:      50 * time.Millisecond,
		Logger:            quietLogger(),
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startWorker starts a worker with the given handlers and stops it when t
// ends.
func (b *testBundle) startWorker(t *testing.T, cfg Config, handlers map[string]HandlerFunc, opts ...HandlerOption) *Worker {
	t.Helper()
	w, err := NewWorker(b.engine, cfg)
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

// waitStatus polls until task id reaches want, failing t after timeout.
func (b *testBundle) waitStatus(t *testing.T, id TaskID, want Status, timeout time.Duration) TaskInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := b.client.Get(context.Background(), id)
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
