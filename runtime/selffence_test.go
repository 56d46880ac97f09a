package runtime

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// stallable returns a pool on b's database whose statements can be made to
// hang: on MySQL through a TCP proxy that stops forwarding, on SQLite by
// holding the write lock from another connection.
func stallable(t *testing.T, b *testBundle) (db *sql.DB, stall, unstall func()) {
	t.Helper()
	if b.kind == kindMySQL {
		proxy := dbtest.NewProxy(t, b.db.DSN)
		db, err := sql.Open("mysql", proxy.DSN(t, b.db.DSN))
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		return db, proxy.Pause, proxy.Resume
	}
	var holder *sql.Conn
	stall = func() {
		var err error
		holder, err = b.db.DB.Conn(bg)
		dbtest.Must(t, "conn", err)
		_, err = holder.ExecContext(bg, "BEGIN IMMEDIATE")
		dbtest.Must(t, "take the write lock", err)
	}
	unstall = func() {
		if holder != nil {
			_, _ = holder.ExecContext(bg, "ROLLBACK")
			holder.Close()
			holder = nil
		}
	}
	t.Cleanup(unstall)
	return b.db.Open(t), stall, unstall
}

// A worker cut off from the database stops its executions before their
// leases can expire; another worker then recovers the task, and nothing the
// cut-off worker writes later takes effect.
func TestSelfFencingWhenRenewalsFail(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		db, stall, unstall := stallable(t, b)
		type fenced struct {
			cause error
			at    time.Time
		}
		started := make(chan struct{})
		fences := make(chan fenced, 1)
		var book ledger
		cfg := testConfig()
		cfg.WorkerID = "cut-off"
		w, err := NewWorker(engineFor(b.kind, db), cfg)
		dbtest.Must(t, "worker", err)
		dbtest.Must(t, "handle", w.Handle("long", func(ctx context.Context, task *Task) error {
			i := book.start(task, "cut-off")
			defer book.end(i)
			close(started)
			<-ctx.Done()
			fences <- fenced{context.Cause(ctx), time.Now()}
			return ctx.Err()
		}))
		dbtest.Must(t, "start", w.Start(bg))
		t.Cleanup(func() { unstall(); _ = w.Stop(bg) })

		id := b.enqueue(t, "long")
		<-started
		time.Sleep(cfg.HeartbeatInterval * 2) // a renewal or two get through
		stall()
		f := <-fences
		if !errors.Is(f.cause, ErrLeaseExpiring) {
			t.Fatalf("cause = %v, want ErrLeaseExpiring", f.cause)
		}
		// Read the lease the stalled renewals left (reads still work).
		info, err := b.client.Get(bg, id)
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

		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"long": func(ctx context.Context, task *Task) error {
				defer book.end(book.start(task, "rescuer"))
				return nil
			},
		})
		if info := b.waitStatus(t, id, StatusSuccess, 10*time.Second); info.Attempt != 2 {
			t.Errorf("rescued on attempt %d, want 2", info.Attempt)
		}
		if s := w.Stats(); s.SelfFenced != 1 || s.HeartbeatFailures == 0 || s.Completed != 0 {
			t.Errorf("cut-off worker stats %+v: want one self-fenced execution, failed heartbeats, no completion", s)
		}
		checkLedger(t, book.intervals())
	})
}

// A claim whose reply arrives past its leases' self-fence point starts no
// handler: its tasks go back to the queue without using an attempt (also
// when the lease has already expired), and later run normally.
func TestLateClaimStartsNoHandler(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		cfg := testConfig()
		late := b.enqueue(t, "late")
		var calls atomic.Int32
		handler := func(context.Context, *Task) error { calls.Add(1); return nil }
		w := b.startWorker(t, cfg, map[string]HandlerFunc{"other": handler})
		req := driver.ClaimRequest{Owner: w.ID(), Lease: cfg.LeaseTimeout, Types: []string{"late"}, Max: 1}
		claimed, err := b.engine.store.Claim(bg, req)
		dbtest.Must(t, "claim", err)
		if len(claimed) != 1 {
			t.Fatalf("claimed %d tasks, want 1", len(claimed))
		}
		b.expire(t, late) // its reply came after the whole lease
		sent := w.cfg.Clock.Now().Add(-cfg.LeaseTimeout)
		if started := w.startClaimed(claimed, sent, req); started != 0 || calls.Load() != 0 {
			t.Fatalf("a claim sent a lease ago started %d executions (%d handler calls), want none", started, calls.Load())
		}
		if s := w.Stats(); s.LateClaims != 1 || s.Claimed != 0 {
			t.Errorf("stats %+v, want 1 late claim and no execution", s)
		}
		status := ""
		dbtest.Must(t, "read", b.db.DB.QueryRow("SELECT status FROM leasegen_tasks WHERE id = ?", late).Scan(&status))
		if used := b.db.Int(t, "SELECT attempt - free_attempts FROM leasegen_tasks WHERE id = ?", late); status != "QUEUED" || used != 0 {
			t.Errorf("after the late claim: status %s, %d attempts used; want QUEUED and none", status, used)
		}

		b.startWorker(t, cfg, map[string]HandlerFunc{"late": handler})
		info := b.waitStatus(t, late, StatusSuccess, 10*time.Second)
		if used := b.db.Int(t, "SELECT attempt - free_attempts FROM leasegen_tasks WHERE id = ?", late); calls.Load() != 1 || used != 1 {
			t.Errorf("then: %d handler calls, %d attempts used (attempt %d); want 1 and 1", calls.Load(), used, info.Attempt)
		}
	})
}
