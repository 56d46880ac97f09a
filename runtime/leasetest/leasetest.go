// Package leasetest helps a service test its use of leasegen: a migrated
// engine on a temporary SQLite file in one line, assertions on the tasks
// the code under test enqueued (committed or still in its transaction),
// and WorkOne, which runs one of them through a real worker.
//
//	engine, client := leasetest.NewEngine(t)
//	err := signup(ctx, billing.NewClient(client), "ada")
//	task := leasetest.RequireEnqueued(t, engine.DB(), "notify", func(p billing.NotifyPayload) bool { return p.UserID == 42 })
//	info := leasetest.WorkOne(t, engine, func(r runtime.Registrar) error { return billing.Register(r, svc) })
package leasetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// NewEngine returns a migrated engine on a SQLite file in t's temporary
// folder, closed when t ends, and a client on it.
func NewEngine(t testing.TB) (*runtime.Engine, *runtime.Client) {
	t.Helper()
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatalf("leasetest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	engine := runtime.NewEngine(leasesqlite.New(db))
	if err := engine.Migrate(context.Background()); err != nil {
		t.Fatalf("leasetest: %v", err)
	}
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		t.Fatalf("leasetest: %v", err)
	}
	return engine, client
}

// WorkOne runs one due task, of the types register gives handlers for,
// through a real worker on engine (Worker.WorkOne), and returns it as its
// outcome left it. It fails t when no task is due or the worker cannot
// run. Leases are short, so a handler that runs long is renewed as in
// production, and backoffs stay as configured.
func WorkOne(t testing.TB, engine *runtime.Engine, register func(runtime.Registrar) error) runtime.TaskInfo {
	t.Helper()
	w, err := runtime.NewWorker(engine, runtime.Config{LeaseTimeout: 5 * time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("leasetest: %v", err)
	}
	if err := register(w); err != nil {
		t.Fatalf("leasetest: register: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := w.WorkOne(ctx)
	if err != nil {
		t.Fatalf("leasetest: WorkOne: %v", err)
	}
	return info
}
