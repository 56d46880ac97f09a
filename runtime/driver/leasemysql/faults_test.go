package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// Claims that hit lock-wait timeouts (InnoDB 1205) are retried at the top of
// the claim, counted, and lose nothing.
func TestFaultLockWaitTimeoutsAreRetried(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	// Sessions that give up on a row lock after one second.
	shortWait := b.DB.DSN + "&innodb_lock_wait_timeout=1"
	open := func() *sql.DB { return harness.OpenPool(t, shortWait) }
	cfgLimit := 6
	r := &systemtest.FaultRun{B: b, Tasks: 300}
	b.DB.MustExec(t, systemtest.EffectsTable)
	reqs := make([]runtime.Request, r.Tasks)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "work", Payload: []byte("5")}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	var engine *runtime.Engine
	for i := range 4 {
		db := open()
		engine = engineOn(db)
		cfg := systemtest.Config()
		// Claims may take up to a lease: longer than the one-second lock wait.
		cfg.LeaseTimeout, cfg.HeartbeatInterval = 3*time.Second, 500*time.Millisecond
		cfg.GlobalLimit = cfgLimit
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		owner := cfg.WorkerID
		w, err := runtime.NewWorker(engine, cfg)
		dbtest.Must(t, "worker", err)
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *runtime.Task) error {
			i := r.Book.Start(task, owner)
			time.Sleep(5 * time.Millisecond)
			// A commit that fails (its lease lapsed in a stall under load)
			// ends the execution too.
			return r.Book.EndIfFailed(i, systemtest.CommitEffect(ctx, &harness, db, task, owner, func() { r.Book.End(i) }))
		}))
		dbtest.Must(t, "start", w.Start(bg))
		r.Workers = append(r.Workers, w)
		t.Cleanup(func() { _ = w.Stop(bg) })
	}
	// Hold the global limit row for 1.5s at a time: claims wait and time out.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			tx, err := b.DB.DB.Begin()
			if err != nil {
				return
			}
			_, _ = tx.Exec("SELECT scope FROM leasegen_limits WHERE scope = '*' FOR UPDATE")
			time.Sleep(1500 * time.Millisecond)
			_ = tx.Rollback()
			time.Sleep(100 * time.Millisecond)
		}
	})
	// Enqueuers keep adding work under the same contention.
	enqueued := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := b.Client.Enqueue(bg, "work", []byte("5")); err != nil {
				t.Errorf("enqueue under contention: %v", err)
				return
			}
			enqueued++
			time.Sleep(20 * time.Millisecond)
		}
	})
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()
	r.Tasks += enqueued
	r.WaitFinished(t, r.Tasks, time.Minute)
	reran := r.Verify(t)
	retries := r.Workers[0].Stats().ConflictRetries + r.Workers[1].Stats().ConflictRetries +
		r.Workers[2].Stats().ConflictRetries + r.Workers[3].Stats().ConflictRetries
	if retries == 0 {
		t.Error("no conflict retries counted while claims hit lock-wait timeouts")
	}
	t.Logf("lock waits: %d tasks (%d enqueued during the contention), %d retries counted, %d tasks ran again, 0 lost", r.Tasks, enqueued, retries, reran)
}

// cutRun is a fleet of healthy workers plus one worker whose every
// connection goes through a proxy that cuts it off at a chosen statement,
// holding back its closes as a partition does. Each handler writes its
// effect and completes in one transaction (idempotent ones through
// RunIdempotent).
type cutRun struct {
	b     *systemtest.Bundle
	Book  systemtest.Ledger
	proxy *dbtest.Proxy
	cut   *runtime.Worker
	tasks int
}

// newCutRun enqueues n tasks of ms milliseconds and starts healthy workers
// and the cut-off one, all with cfg.
func newCutRun(t *testing.T, n, healthy int, ms int, cfg runtime.Config, idempotent bool) *cutRun {
	t.Helper()
	b := systemtest.Setup(t, &harness)
	b.DB.MustExec(t, systemtest.EffectsTable)
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "work", Payload: fmt.Appendf(nil, "%d", ms), Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(100)}}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	r := &cutRun{b: b, proxy: dbtest.NewProxy(t, harness.ServerAddr(b.DB.DSN)), tasks: n}
	for i := range healthy + 1 {
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		db := b.DB.Open(t)
		if i == healthy {
			cfg.WorkerID = "cut"
			db = harness.OpenPool(t, harness.WithServerAddr(b.DB.DSN, r.proxy.Addr()))
		}
		w, err := runtime.NewWorker(engineOn(db), cfg)
		dbtest.Must(t, "worker", err)
		owner := cfg.WorkerID
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *runtime.Task) error {
			i := r.Book.Start(task, owner)
			time.Sleep(time.Duration(ms) * time.Millisecond)
			if !idempotent {
				return r.Book.EndIfFailed(i, systemtest.CommitEffect(ctx, &harness, db, task, owner, func() { r.Book.End(i) }))
			}
			// The execution holds the task until its context ends: after its
			// commit, or when it self-fences (a COMMIT held up by the cut
			// may still be in flight then).
			context.AfterFunc(ctx, func() { r.Book.End(i) })
			return runtime.RunIdempotent(ctx, task, "", func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, ?)", task.ID, task.Attempt, owner)
				return err
			})
		}, runtime.WithBackoff(systemtest.FastBackoff)))
		dbtest.Must(t, "start", w.Start(bg))
		if owner == "cut" {
			r.cut = w
		}
		t.Cleanup(func() {
			r.proxy.Resume()
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			defer cancel()
			_ = w.Stop(ctx)
		})
	}
	return r
}

func (r *cutRun) waitSucceeded(t *testing.T, want int, timeout time.Duration) {
	t.Helper()
	(&systemtest.FaultRun{B: r.b}).WaitFinished(t, want, timeout)
}

// A worker cut off right after it locked the global limit row (a claim's
// UPDATE of it answered, then nothing more reaches the server or
// comes back, and no close either) stops the other workers' claims only
// until the server ends its idle session, claimSessionIdle later, not for as
// long as the cut lasts. Nothing is lost and nothing runs twice at once.
func TestFaultCutAtLimitLock(t *testing.T) {
	t.Parallel()
	cfg := systemtest.Config() // claims wait for the limit row up to its 5 s lease: longer than the bound
	cfg.GlobalLimit, cfg.MaxConcurrency = 8, 8
	r := newCutRun(t, 4000, 2, 5, cfg, false)
	r.waitSucceeded(t, 100, time.Minute)

	const cutFor = 8 * time.Second
	cut := r.proxy.CutAfter("UPDATE leasegen_limits")
	select {
	case <-cut:
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off worker never locked the limit row")
	}
	cutAt := time.Now()
	time.Sleep(cutFor)
	healedAt := time.Now()
	r.proxy.Resume()
	gap := r.Book.LongestPause(cutAt, healedAt, func(owner string) bool { return owner != "cut" })

	r.waitSucceeded(t, r.tasks, 2*time.Minute)
	systemtest.CheckEffects(t, r.b.DB, r.tasks)
	reran := systemtest.CheckLedger(t, r.Book.Intervals())
	if bound := claimSessionIdle + 1500*time.Millisecond; gap > bound {
		t.Errorf("no healthy worker started a task for %s of an %s cut at the limit lock; bound %s (the server's idle timeout for the claim session, %s, plus a claim)",
			gap.Round(time.Millisecond), cutFor, bound, claimSessionIdle)
	}
	t.Logf("cut at the limit lock for %s: the healthy workers' longest pause in task starts %s (session idle bound %s); %d tasks ran again, 0 lost",
		cutFor, gap.Round(time.Millisecond), claimSessionIdle, reran)
}

// A worker cut off inside an idempotent handler's transaction, after its
// fenced completion and before its COMMIT, holds the task's row lock only
// until the server ends the idle session (lease + 1s): then the
// transaction rolls back, the task is recovered and runs once more
// elsewhere, while the cut still lasts, and its effect exists exactly once.
func TestFaultCutBeforeIdempotentCommit(t *testing.T) {
	t.Parallel()
	cfg := systemtest.ShortLeases()
	cfg.MaxConcurrency = 4
	r := newCutRun(t, 600, 1, 20, cfg, true)
	r.waitSucceeded(t, 50, time.Minute)

	const cutFor = 10 * time.Second
	cut := r.proxy.CutAfter("status = 'SUCCESS'")
	select {
	case <-cut:
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off worker never completed a task")
	}
	cutAt := time.Now()
	// The tasks the cut-off worker held, the one in its COMMIT among them.
	rows, err := r.b.DB.DB.Query("SELECT id FROM leasegen_tasks WHERE lease_owner = 'cut' AND status IN ('RUNNING', 'CANCEL_REQUESTED')")
	dbtest.Must(t, "held tasks", err)
	var held []runtime.TaskID
	for rows.Next() {
		var id runtime.TaskID
		dbtest.Must(t, "scan", rows.Scan(&id))
		held = append(held, id)
	}
	dbtest.Must(t, "held tasks", rows.Err())
	if len(held) == 0 {
		t.Fatal("the cut-off worker held no task at the cut")
	}
	for _, id := range held {
		r.b.WaitStatus(t, id, runtime.StatusSuccess)
	}
	doneIn := time.Since(cutAt)
	if doneIn >= cutFor {
		t.Fatalf("the held tasks finished %s after the cut, not before it healed", doneIn)
	}
	time.Sleep(cutFor - doneIn)
	r.proxy.Resume()
	r.waitSucceeded(t, r.tasks, 2*time.Minute)
	systemtest.CheckEffects(t, r.b.DB, r.tasks)
	reran := systemtest.CheckLedger(t, r.Book.Intervals())
	t.Logf("cut before an idempotent COMMIT: the %d tasks the cut-off worker held finished elsewhere %s after the cut (cut %s); %d ran again, every effect once",
		len(held), doneIn.Round(time.Millisecond), cutFor, reran)
}
