package drivertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/runtime"
)

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
	if err := db.DB.QueryRow("SELECT name, applied_at FROM leasegen_schema_migrations WHERE version = ?", newest).Scan(&name, &appliedAt); err != nil {
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
