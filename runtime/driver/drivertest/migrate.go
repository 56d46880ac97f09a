package drivertest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// Many processes may start at once and all call Migrate: each version is
// applied once and every call succeeds.
func testMigrateConcurrentAndIdempotent(t *testing.T, h *Harness) {
	db := NewDB(t, h)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			// A pool of its own per caller, like separate processes.
			errs[i] = h.engine(db.Open(t)).Migrate(bg)
		})
	}
	wg.Wait()
	for _, err := range errs {
		dbtest.Must(t, "concurrent migrate", err)
	}
	dbtest.Must(t, "migrate again", h.engine(db.DB).Migrate(bg))
	steps, err := migrations.Load(h.New(db.DB).Migrations())
	dbtest.Must(t, "load", err)
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_schema_migrations"); n != len(steps) {
		t.Errorf("%d versions recorded, want %d", n, len(steps))
	}
}

// A database without leasegen's tables, or without the newest of them,
// fails Worker.Start with ErrNoSchema on every engine, and an enqueue with
// the same advice, instead of a raw driver error or a worker that logs
// claim failures forever.
func testStartRefusesMissingSchema(t *testing.T, h *Harness) {
	db := NewDB(t, h)
	engine := h.engine(db.DB)
	ctx := context.Background()
	start := func() error {
		w, err := runtime.NewWorker(engine, Config())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Handle("thumbnail", func(context.Context, *runtime.Task) error { return nil }, runtime.WithConcurrency(2)); err != nil {
			t.Fatal(err)
		}
		err = w.Start(ctx)
		if err == nil {
			_ = w.Stop(ctx)
		}
		return err
	}

	err := start()
	if !errors.Is(err, runtime.ErrNoSchema) || !strings.Contains(err.Error(), "leasectl migrate up") {
		t.Fatalf("Start on an empty database: %v, want ErrNoSchema with advice", err)
	}
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Enqueue(ctx, "thumbnail", nil); !errors.Is(err, runtime.ErrNoSchema) {
		t.Fatalf("Enqueue on an empty database: %v, want ErrNoSchema", err)
	}

	if err := engine.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	states, err := engine.MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newest := states[len(states)-1].Version
	var name, appliedAt any
	if err := db.DB.QueryRow(db.h.SQL("SELECT name, applied_at FROM leasegen_schema_migrations WHERE version = ?"), newest).Scan(&name, &appliedAt); err != nil {
		t.Fatal(err)
	}
	db.MustExec(t, "DELETE FROM leasegen_schema_migrations WHERE version = ?", newest)
	err = start()
	if !errors.Is(err, runtime.ErrNoSchema) || !strings.Contains(err.Error(), fmt.Sprintf("version %d is not applied", newest)) {
		t.Fatalf("Start without the newest migration: %v, want ErrNoSchema naming version %d", err, newest)
	}

	db.MustExec(t, "INSERT INTO leasegen_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", newest, name, appliedAt)
	if err := start(); err != nil {
		t.Fatalf("Start after Migrate: %v", err)
	}
}

// Version3Rows is the INSERT that puts three tasks into a task table at
// schema version 3, given the engine's expressions for now, an hour ago
// and a second ago: 1 finished an hour ago; 2 queued at priority 7; 3
// running on a lease that expired a second ago. CheckUpgradeFromVersion3
// checks them after the upgrade.
func Version3Rows(now, hourAgo, secondAgo string) string {
	return `INSERT INTO leasegen_tasks (task_type, status, payload, priority, available_at, max_attempts, created_at, updated_at,
		lease_owner, lease_until, started_at, finished_at, attempt) VALUES
		('a', 'SUCCESS', '', 0, ` + hourAgo + `, 1, ` + hourAgo + `, ` + hourAgo + `, 'old', ` + hourAgo + `, ` + hourAgo + `, ` + hourAgo + `, 1),
		('a', 'QUEUED', '', 7, ` + now + `, 1, ` + now + `, ` + now + `, NULL, NULL, NULL, NULL, 0),
		('a', 'RUNNING', '', 3, ` + hourAgo + `, 2, ` + hourAgo + `, ` + hourAgo + `, 'dead', ` + secondAgo + `, ` + hourAgo + `, NULL, 1)`
}

// CheckUpgradeFromVersion3 checks, on b migrated from version 3 with
// Version3Rows, that every task kept the instant that matters in its
// status (a queued one its available_at, a running one its lease end, a
// finished one when it finished), so that claims, recovery and retention
// find it.
func CheckUpgradeFromVersion3(t *testing.T, b *Bundle) {
	t.Helper()
	queued, err := b.Client.Get(bg, 2)
	dbtest.Must(t, "get the queued task", err)
	if !queued.StartedAt.IsZero() || queued.LeaseOwner != "" || queued.Priority != 7 {
		t.Errorf("queued task after the upgrade: started %v, lease owner %q, priority %d", queued.StartedAt, queued.LeaseOwner, queued.Priority)
	}
	ran := make(chan runtime.TaskID, 2)
	cfg := Config()
	cfg.MaxConcurrency = 1 // one claim, one task: the order of claims is the order of runs
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"a": func(_ context.Context, task *runtime.Task) error {
		ran <- task.ID
		return nil
	}})
	// The queued task runs at once, the expired lease after recovery.
	b.WaitStatus(t, 2, runtime.StatusSuccess, 5*time.Second)
	b.WaitStatus(t, 3, runtime.StatusSuccess, 10*time.Second)
	if first := <-ran; first != 2 {
		t.Errorf("task %d ran first, want the queued task 2", first)
	}
	finished, err := b.Client.Get(bg, 1)
	dbtest.Must(t, "get the finished task", err)
	if age := time.Since(finished.FinishedAt); age < 50*time.Minute || finished.LeaseOwner != "old" {
		t.Errorf("finished task after the upgrade: finished %v ago by %q, want an hour ago by \"old\"", age, finished.LeaseOwner)
	}
	purged, err := b.Client.Purge(bg, time.Minute, 10)
	dbtest.Must(t, "purge", err)
	if purged != 1 {
		t.Errorf("purge of tasks finished over a minute ago deleted %d, want the 1 finished before the upgrade", purged)
	}
}

// CheckIndexes fails t unless db has every index of current and none of
// dropped, counting them with query (one argument: an index name).
func CheckIndexes(t *testing.T, db *DB, query string, current, dropped []string) {
	t.Helper()
	for _, index := range current {
		if db.Int(t, query, index) == 0 {
			t.Errorf("index %s missing", index)
		}
	}
	for _, index := range dropped {
		if db.Int(t, query, index) != 0 {
			t.Errorf("index %s still there", index)
		}
	}
}

// NewDBAtVersion creates a database for t with h whose schema is at
// version (the first version steps of files), applied by apply (the
// driver's migration runner), before the test migrates it further.
func NewDBAtVersion(t *testing.T, h *Harness, files fs.FS, version int, apply func(context.Context, *sql.Conn, []migrations.Step) error) *DB {
	t.Helper()
	db := NewDB(t, h)
	steps, err := migrations.Load(files)
	dbtest.Must(t, "load migrations", err)
	conn, err := db.Conn(bg)
	dbtest.Must(t, "conn", err)
	defer conn.Close()
	dbtest.Must(t, fmt.Sprintf("migrate to version %d", version), apply(bg, conn, steps[:version]))
	return db
}
