package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// The services' own tests run them on SQLite without a running worker:
// each is built from its dependencies and driven by hand.

// sqliteNowMs is SQLite's clock in milliseconds, as due_at holds it.
const sqliteNowMs = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"

// claimN enqueues n tasks of type "a" on e and claims them for owner on
// leases of lease.
func claimN(t *testing.T, e *Engine, owner string, n int, lease time.Duration) []driver.ClaimedTask {
	t.Helper()
	enqueueN(t, e, "a", n)
	claimed, err := e.driver.Claim(bg, driver.ClaimRequest{Owner: owner, Lease: lease, Types: []string{"a"}, Max: n})
	if err != nil || len(claimed) != n {
		t.Fatalf("claimed %d of %d: %v", len(claimed), n, err)
	}
	return claimed
}

// unstartedWorker is a worker on e with a handler for "a" that is not
// started: a test builds its executions and services by hand.
func unstartedWorker(t *testing.T, e *Engine) *Worker {
	t.Helper()
	w, err := NewWorker(e, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("a", func(context.Context, *Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	w.runCtx, w.execParent = bg, bg
	w.completions = newHandoff[*execution]()
	w.exec = w.newExecutor()
	t.Cleanup(w.fences.stop)
	return w
}

// enqueueN enqueues n tasks of taskType on e and returns their ids.
func enqueueN(t *testing.T, e *Engine, taskType string, n int) []TaskID {
	t.Helper()
	client, err := NewClient(e, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]TaskID, n)
	for i := range ids {
		if ids[i], err = client.Enqueue(bg, taskType, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// exec runs a statement on e's database, failing t on error.
func exec(t *testing.T, e *Engine, query string, args ...any) {
	t.Helper()
	if _, err := e.db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// A recovery pass resolves expired leases in batches, at most maxBatches
// of them, wakes the poller when it found some, and without expired leases
// runs no batch at all.
func TestRecovererPass(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	var recovered atomic.Int64
	woken := 0
	r := &recoverer{driver: e.driver, tables: e.tables, observer: BaseObserver{}, logger: quietLogger(), workerID: "r", historyWait: time.Second,
		interval: time.Second, batch: 2, maxBatches: 2, pause: time.Millisecond, recovered: &recovered,
		found: func() { woken++ }, renewRow: func(context.Context) {}}
	if n := r.pass(bg, nil); n != 0 || woken != 0 {
		t.Fatalf("a pass over an empty table resolved %d leases and woke the poller %d times", n, woken)
	}
	claimN(t, e, "dead", 5, time.Minute)
	exec(t, e, "UPDATE leasegen_tasks SET due_at = "+sqliteNowMs+" - 1000")
	if n := r.pass(bg, nil); n != 4 || recovered.Load() != 4 || woken != 2 {
		t.Errorf("a pass of 2 batches of 2 over 5 expired leases resolved %d (counted %d), woke %d times; want 4, 4, 2", n, recovered.Load(), woken)
	}
	if n := r.pass(bg, nil); n != 1 {
		t.Errorf("the next pass resolved %d, want the 1 left", n)
	}
}

// A retention pass deletes the tasks finished before the retention, batch
// by batch, and leaves the others.
func TestPrunerPass(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	claimed := claimN(t, e, "w", 5, time.Minute)
	reqs := make([]driver.CompletionRequest, len(claimed))
	for i, c := range claimed {
		reqs[i] = driver.CompletionRequest{Ref: driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}}
	}
	if _, err := e.driver.CompleteMany(bg, "w", reqs); err != nil {
		t.Fatal(err)
	}
	exec(t, e, "UPDATE leasegen_tasks SET due_at = "+sqliteNowMs+" - 3600000 WHERE id <> ?", claimed[0].ID)
	var pruned atomic.Int64
	p := &bookkeeping.Pruner{Tables: e.tables, Logger: quietLogger(), WorkerID: "p", Retention: time.Minute,
		Interval: time.Second, Bound: time.Second, Batch: 2, Pause: time.Millisecond, Pruned: &pruned}
	if n := p.Pass(bg, nil); n != 4 || pruned.Load() != 4 {
		t.Errorf("a pass in batches of 2 deleted %d (counted %d), want the 4 finished an hour ago", n, pruned.Load())
	}
	if _, err := e.tables.TaskGet(bg, claimed[0].ID); err != nil {
		t.Errorf("the task finished just now: %v, want it kept", err)
	}
}

// A heartbeat renews the leases the worker holds, cancels the executions
// whose leases are gone with ErrLeaseLost, and after a failed renewal
// changes nothing but the failure count.
func TestHeartbeaterBeat(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	w := unstartedWorker(t, e)
	claimed := claimN(t, e, w.ID(), 2, time.Second)
	execs := []*execution{w.newExecution(claimed[0], time.Minute), w.newExecution(claimed[1], time.Minute)}
	exec(t, e, "UPDATE leasegen_tasks SET due_at = "+sqliteNowMs+" - 1000 WHERE id = ?", claimed[1].ID)

	h := newHeartbeater(w)
	h.leases = func() []*execution { return execs }
	h.beat(bg)
	var leftMs int64
	if err := e.db.QueryRow("SELECT due_at - "+sqliteNowMs+" FROM leasegen_tasks WHERE id = ?", claimed[0].ID).Scan(&leftMs); err != nil {
		t.Fatal(err)
	}
	if leftMs < 50_000 || execs[0].ctx.Err() != nil {
		t.Errorf("held lease: %d ms left after the renewal (want about a minute), context %v", leftMs, context.Cause(execs[0].ctx))
	}
	if cause := context.Cause(execs[1].ctx); !errors.Is(cause, ErrLeaseLost) || h.lost.Load() != 1 {
		t.Errorf("expired lease: cause %v, %d counted lost; want ErrLeaseLost, 1", cause, h.lost.Load())
	}

	closed, err := leasesqlite.Open(t.TempDir() + "/closed.db")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	h.driver = leasesqlite.New(closed)
	h.beat(bg)
	if h.failures.Load() != 1 || execs[0].ctx.Err() != nil {
		t.Errorf("after a failed renewal: %d failures, context %v; want 1 and the execution left running", h.failures.Load(), context.Cause(execs[0].ctx))
	}
}

// A completer writes a queued batch with one fenced statement: the
// executions still holding their leases complete, a stale one is counted
// as such; and on stop it writes what is still queued before it returns.
func TestCompleterCompletesAndFlushesOnStop(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	w := unstartedWorker(t, e)
	claimed := claimN(t, e, w.ID(), 3, time.Minute)
	stale := claimed[2]
	exec(t, e, "UPDATE leasegen_tasks SET lease_owner = 'other' WHERE id = ?", stale.ID) // another worker holds it now
	c := newCompleter(w)
	for _, ct := range claimed {
		ex := w.newExecution(ct, time.Minute)
		w.active[ex.ref] = ex
		c.queue.push(ex)
	}
	stop := make(chan struct{})
	close(stop) // the queued executions are flushed on the way out
	c.run(bg, stop)
	for _, ct := range claimed[:2] {
		if info, err := e.tables.TaskGet(bg, ct.ID); err != nil || info.Status != StatusSuccess {
			t.Errorf("task %d: %s, %v; want SUCCESS", ct.ID, info.Status, err)
		}
	}
	if s := w.Stats(); s.Completed != 2 || s.StaleWrites != 1 || len(w.active) != 0 {
		t.Errorf("stats %+v with %d executions left; want 2 completed, 1 stale write, none left", s, len(w.active))
	}
	if c.queue.push(w.newExecution(claimed[0], time.Minute)) {
		t.Error("the stopped completer's queue took another execution")
	}
}
