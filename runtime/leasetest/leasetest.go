// Package leasetest helps a service test its use of leasegen, on any
// engine: assertions on the tasks the code under test enqueued (committed
// or still in its transaction), and WorkOne, which runs one of them
// through a real worker. Package sqlitetest gives a migrated engine on a
// temporary SQLite file in one line; a service on MySQL or PostgreSQL may
// test on its own engine instead, and then links no SQLite.
//
//	engine, client := sqlitetest.NewEngine(t)
//	err := signup(ctx, billing.NewClient(client), "ada")
//	task := leasetest.RequireEnqueued(t, leasetest.Committed(client), "notify", func(p billing.NotifyPayload) bool { return p.UserID == 42 })
//	info := leasetest.WorkOne(t, engine, func(r runtime.Registrar) error { return billing.Register(r, svc) })
package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

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
