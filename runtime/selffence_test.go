package runtime

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// A worker cut off from the database stops its executions before their
// leases can expire; another worker then recovers the task, and the cut-off
// worker's late write is rejected.
func TestSelfFencingWhenRenewalsFail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	proxy := dbtest.NewProxy(t, b.db.DSN)
	proxied, err := sql.Open("mysql", proxy.DSN(t, b.db.DSN))
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { proxied.Close() })

	type fenced struct {
		cause error
		at    time.Time
	}
	started := make(chan struct{})
	stopped := make(chan fenced, 1)
	var book ledger
	cfg := testConfig()
	cfg.WorkerID = "cut-off"
	w, err := NewWorker(MySQL(proxied), cfg)
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", w.Handle("long", func(ctx context.Context, task *Task) error {
		i := book.start(task, "cut-off")
		defer book.end(i)
		close(started)
		<-ctx.Done()
		stopped <- fenced{context.Cause(ctx), time.Now()}
		return ctx.Err()
	}))
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { proxy.Resume(); _ = w.Stop(bg) })

	id := b.enqueue(t, "long")
	<-started
	time.Sleep(cfg.HeartbeatInterval * 2) // a renewal or two get through
	proxy.Pause()
	f := <-stopped
	if !errors.Is(f.cause, ErrLeaseExpiring) {
		t.Fatalf("cause = %v, want ErrLeaseExpiring", f.cause)
	}
	info, err := b.client.Get(bg, id)
	dbtest.Must(t, "get", err)
	if margin := info.LeaseUntil.Sub(f.at); margin <= 0 {
		t.Errorf("execution stopped %s after its lease expired at %s", -margin, info.LeaseUntil)
	} else {
		t.Logf("self-fenced %s before the lease expired", margin.Round(time.Millisecond))
	}

	b.startWorker(t, testConfig(), map[string]HandlerFunc{
		"long": func(ctx context.Context, task *Task) error {
			defer book.end(book.start(task, "rescuer"))
			return nil
		},
	})
	if info := b.waitStatus(t, id, StatusSuccess, 10*time.Second); info.Attempt != 2 {
		t.Errorf("rescued on attempt %d, want 2", info.Attempt)
	}
	proxy.Resume()
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	dbtest.Must(t, "stop", w.Stop(ctx))
	if s := w.Stats(); s.SelfFenced != 1 || s.HeartbeatFailures == 0 || s.Completed != 0 {
		t.Errorf("cut-off worker stats %+v: want one self-fenced execution, failed heartbeats, no completion", s)
	}
	checkLedger(t, book.intervals())
}
