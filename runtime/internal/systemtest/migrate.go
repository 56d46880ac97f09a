package systemtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// A database without leasegen's tables, or without the newest of them,
// fails Worker.Start with ErrNoSchema on every engine, and an enqueue with
// the same advice, instead of a raw driver error or a worker that logs
// claim failures forever.
func testStartRefusesMissingSchema(t *testing.T, h *drivertest.Harness) {
	db := drivertest.NewDB(t, h)
	engine := engine(h, db.DB)
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
	if err := db.QueryRow("SELECT name, applied_at FROM leasegen_schema_migrations WHERE version = ?", newest).Scan(&name, &appliedAt); err != nil {
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
	b.WaitStatus(t, 2, runtime.StatusSuccess)
	b.WaitStatus(t, 3, runtime.StatusSuccess)
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
