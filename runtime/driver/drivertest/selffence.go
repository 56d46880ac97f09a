package drivertest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// stallable returns a pool on b's database whose statements can be made to
// hang: the harness's own way, else through a TCP proxy that stops
// forwarding.
func stallable(t *testing.T, b *Bundle) (db *sql.DB, stall, unstall func()) {
	t.Helper()
	if b.H.Stallable != nil {
		return b.H.Stallable(t, b)
	}
	proxy, dsn := b.H.proxy(t, b.DB.DSN)
	return b.H.OpenPool(t, dsn), proxy.Pause, proxy.Resume
}

// A worker cut off from the database stops its executions before their
// leases can expire; another worker then recovers the task, and nothing the
// cut-off worker writes later takes effect.
func testSelfFencingWhenRenewalsFail(t *testing.T, b *Bundle) {
	db, stall, unstall := stallable(t, b)
	type fenced struct {
		cause error
		at    time.Time
	}
	started := make(chan struct{})
	fences := make(chan fenced, 1)
	var book Ledger
	cfg := Config()
	cfg.WorkerID = "cut-off"
	renewed := renewalSignal{renewed: make(chan struct{}, 1)}
	w, err := runtime.NewWorker(runtime.NewEngine(b.H.New(db), runtime.WithObserver(renewed)), cfg)
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", w.Handle("long", func(ctx context.Context, task *runtime.Task) error {
		i := book.Start(task, "cut-off")
		defer book.End(i)
		close(started)
		<-ctx.Done()
		fences <- fenced{context.Cause(ctx), time.Now()}
		return ctx.Err()
	}))
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { unstall(); _ = w.Stop(bg) })

	id := b.Enqueue(t, "long")
	<-started
	<-renewed.renewed // a renewal got through
	stall()
	f := <-fences
	if !errors.Is(f.cause, runtime.ErrLeaseExpiring) {
		t.Fatalf("cause = %v, want ErrLeaseExpiring", f.cause)
	}
	// Read the lease the stalled renewals left (reads still work).
	info, err := b.Client.Get(bg, id)
	dbtest.Must(t, "get", err)
	if margin := info.LeaseUntil.Sub(f.at); margin <= 0 {
		t.Errorf("execution stopped %s after its lease expired at %s", -margin, info.LeaseUntil)
	} else {
		t.Logf("self-fenced %s before the lease expired", margin.Round(time.Millisecond))
	}
	// Stop the cut-off worker while it is still cut off, then reconnect.
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		stopped <- w.Stop(ctx)
	}()
	unstall()
	dbtest.Must(t, "stop", <-stopped)

	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"long": func(ctx context.Context, task *runtime.Task) error {
			defer book.End(book.Start(task, "rescuer"))
			return nil
		},
	})
	if info := b.WaitStatus(t, id, runtime.StatusSuccess, 10*time.Second); info.AttemptsUsed != 2 {
		t.Errorf("rescued with %d attempts used, want 2", info.AttemptsUsed)
	}
	if s := w.Stats(); s.SelfFenced != 1 || s.HeartbeatFailures == 0 || s.Completed != 0 {
		t.Errorf("cut-off worker stats %+v: want one self-fenced execution, failed heartbeats, no completion", s)
	}
	CheckLedger(t, book.Intervals())
}

// renewalSignal is an Observer that signals each renewal statement that
// extended a lease.
type renewalSignal struct {
	runtime.BaseObserver
	renewed chan struct{}
}

func (r renewalSignal) LeasesRenewed(_, renewed int) {
	if renewed > 0 {
		select {
		case r.renewed <- struct{}{}:
		default:
		}
	}
}
