package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// faultRun is a fleet of in-process workers, each on its own pool like a
// process of its own, working through tasks that commit an effect, while a
// test breaks the database.
type faultRun struct {
	b       *testBundle
	book    ledger
	workers []*Worker
	tasks   int
}

// newFaultRun enqueues n tasks of 20 to 60 ms and starts workers on pools
// from open.
func newFaultRun(t *testing.T, b *testBundle, n, workers int, open func() *sql.DB) *faultRun {
	t.Helper()
	b.db.Exec(t, effectsTable)
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{Type: "work", Payload: fmt.Appendf(nil, "%d", 20+rand.IntN(40)), Options: []EnqueueOption{WithMaxAttempts(100)}}
	}
	_, err := b.client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	r := &faultRun{b: b, tasks: n}
	for i := range workers {
		cfg := testConfig()
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		cfg.MaxConcurrency = 8
		db := open()
		w, err := NewWorker(engineFor(b.kind, db), cfg)
		dbtest.Must(t, "worker", err)
		owner := cfg.WorkerID
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *Task) error {
			i := r.book.start(task, owner)
			var ms int
			fmt.Sscan(string(task.Payload), &ms)
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				r.book.end(i)
				return ctx.Err()
			}
			err := commitEffect(ctx, db, task, owner, func() { r.book.end(i) })
			if err != nil && r.book.intervals()[i].End.IsZero() {
				r.book.end(i)
			}
			return err
		}, WithBackoff(fastBackoff)))
		dbtest.Must(t, "start", w.Start(bg))
		r.workers = append(r.workers, w)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(bg, 5*time.Second)
			defer cancel()
			_ = w.Stop(ctx)
		})
	}
	return r
}

// waitDone waits until finished tasks reach want, or fails t.
func (r *faultRun) waitFinished(t *testing.T, want int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var n int
		err := r.b.db.DB.QueryRow("SELECT COUNT(*) FROM leasegen_tasks WHERE status = 'SUCCESS'").Scan(&n)
		if err == nil && n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d tasks succeeded after %s (last error: %v)", n, want, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running counts RUNNING tasks (the tasks in flight when a fault hits).
func (r *faultRun) running(t *testing.T) int {
	return r.b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status = 'RUNNING'")
}

// verify checks the end state: nothing lost, no duplicate effect, no
// overlapping executions. It returns the tasks that ran more than once.
func (r *faultRun) verify(t *testing.T) int {
	t.Helper()
	if lost := r.b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status <> 'SUCCESS'"); lost != 0 {
		t.Errorf("%d tasks did not succeed", lost)
	}
	checkEffects(t, r.b.db, r.tasks)
	return checkLedger(t, r.book.intervals())
}

func (r *faultRun) stats() Stats {
	var sum Stats
	for _, w := range r.workers {
		s := w.Stats()
		sum.SelfFenced += s.SelfFenced
		sum.StaleWrites += s.StaleWrites
		sum.HeartbeatFailures += s.HeartbeatFailures
		sum.Recovered += s.Recovered
		sum.LeasesLost += s.LeasesLost
	}
	return sum
}

// privateMySQL is a test bundle on a database of a private server.
func privateMySQL(t *testing.T) (*testBundle, *dbtest.Server) {
	t.Helper()
	server := dbtest.StartServer(t)
	dsn := server.NewDatabase("faults")
	db := &testDB{DB: openDSN(t, dsn), DSN: dsn, kind: kindMySQL}
	engine := MySQL(db.DB)
	dbtest.Must(t, "migrate", engine.Migrate(bg))
	client, err := NewClient(engine, ClientConfig{})
	dbtest.Must(t, "client", err)
	return &testBundle{kind: kindMySQL, db: db, engine: engine, client: client}, server
}

func openDSN(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	return db
}

// The server dies (SIGKILL) mid-run and comes back: workers reconnect and
// every task succeeds once; enqueues during the outage fail with
// ErrUnavailable and write nothing.
func TestFaultDatabaseRestart(t *testing.T) {
	t.Parallel()
	b, server := privateMySQL(t)
	r := newFaultRun(t, b, 600, 3, func() *sql.DB { return b.db.Open(t) })
	r.waitFinished(t, 150, time.Minute)
	inFlight := r.running(t)
	server.Kill()
	down := time.Now()

	_, err := b.client.EnqueueMany(bg, []Request{{Type: "work", Payload: []byte("1")}, {Type: "work", Payload: []byte("1")}})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("enqueue during the outage: err = %v, want ErrUnavailable", err)
	}
	time.Sleep(1500 * time.Millisecond)
	server.Start()
	up := time.Now()
	r.waitFinished(t, 600, 2*time.Minute)
	recovered := time.Since(up)
	if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 600 {
		t.Errorf("%d task rows, want 600: the failed enqueue wrote something", n)
	}
	reran := r.verify(t)
	s := r.stats()
	t.Logf("restart: %d tasks in flight, outage %s, all done %s after restart; %d ran again; %d recovered, %d self-fenced, %d heartbeat failures",
		inFlight, up.Sub(down).Round(time.Millisecond), recovered.Round(time.Millisecond), reran, s.Recovered, s.SelfFenced, s.HeartbeatFailures)
}

// The server freezes (SIGSTOP) for longer than the lease: the workers stop
// their executions before their leases can expire, and after the thaw the
// tasks are recovered and finish, with no overlapping holders.
func TestFaultDatabaseStall(t *testing.T) {
	t.Parallel()
	b, server := privateMySQL(t)
	r := newFaultRun(t, b, 600, 3, func() *sql.DB { return b.db.Open(t) })
	r.waitFinished(t, 150, time.Minute)
	inFlight := r.running(t)
	server.Freeze()
	time.Sleep(2500 * time.Millisecond) // 2.5 leases
	server.Thaw()
	thawed := time.Now()
	r.waitFinished(t, 600, 2*time.Minute)
	reran := r.verify(t)
	s := r.stats()
	if s.SelfFenced == 0 {
		t.Errorf("no execution self-fenced during a stall of 2.5 leases: %+v", s)
	}
	t.Logf("stall: %d tasks in flight, frozen 2.5s (lease 1s), all done %s after the thaw; %d ran again; %d recovered, %d self-fenced, %d heartbeat failures",
		inFlight, time.Since(thawed).Round(time.Millisecond), reran, s.Recovered, s.SelfFenced, s.HeartbeatFailures)
}

// One worker loses its connection while the others keep theirs: its tasks
// are recovered by the others after expiry; its handlers, which ignore their
// context and try to complete after it reconnects, are rejected by the
// fence; and once reconnected it claims again.
func TestFaultOneWorkerCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	proxy := dbtest.NewProxy(t, b.db.DSN)
	r := newFaultRun(t, b, 1500, 2, func() *sql.DB { return b.db.Open(t) })
	cutDB := openDSN(t, proxy.DSN(t, b.db.DSN))
	resumed := make(chan struct{})
	cfg := testConfig()
	cfg.WorkerID = "cut"
	cfg.MaxConcurrency = 8
	cut, err := NewWorker(MySQL(cutDB), cfg)
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", cut.Handle("work", func(ctx context.Context, task *Task) error {
		i := r.book.start(task, "cut")
		select {
		case <-time.After(3 * time.Second): // longer than a lease: the cut finds it waiting here
			err := commitEffect(ctx, cutDB, task, "cut", func() { r.book.end(i) })
			if err != nil && r.book.intervals()[i].End.IsZero() {
				r.book.end(i)
			}
			return err
		case <-ctx.Done():
			// Self-fenced: from here on this execution holds nothing. It
			// ignores the cancellation and tries to complete once back.
			r.book.end(i)
			<-resumed
			return commitEffect(context.Background(), cutDB, task, "cut", nil)
		}
	}, WithBackoff(fastBackoff)))
	dbtest.Must(t, "start", cut.Start(bg))
	t.Cleanup(func() { _ = cut.Stop(bg) })

	r.waitFinished(t, 150, time.Minute)
	inFlight := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status = 'RUNNING' AND lease_owner = 'cut'")
	proxy.Pause()
	time.Sleep(2500 * time.Millisecond)
	cutAt := cut.Stats().Claimed
	proxy.Resume()
	close(resumed)
	back := time.Now()
	r.waitFinished(t, 1500, 2*time.Minute)
	done := time.Since(back)
	dbtest.Must(t, "stop the cut-off worker", cut.Stop(bg)) // its stale executions finish first
	reran := r.verify(t)
	s := cut.Stats()
	if inFlight > 0 && (s.SelfFenced == 0 || s.StaleWrites == 0) {
		t.Errorf("cut-off worker with %d tasks in flight: %+v; want self-fenced executions and rejected stale writes", inFlight, s)
	}
	if s.Claimed == cutAt {
		t.Error("the cut-off worker claimed nothing after reconnecting")
	}
	t.Logf("cut off: %d of its tasks in flight, cut 2.5s, all done %s after reconnecting; %d ran again; cut-off worker: %d self-fenced, %d stale writes rejected, %d claims after reconnecting",
		inFlight, done.Round(time.Millisecond), reran, s.SelfFenced, s.StaleWrites, s.Claimed-cutAt)
}

// Claims that hit lock-wait timeouts (InnoDB 1205) are retried at the top of
// the claim, counted, and lose nothing.
func TestFaultLockWaitTimeoutsAreRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Sessions that give up on a row lock after one second.
	shortWait := b.db.DSN + "&innodb_lock_wait_timeout=1"
	open := func() *sql.DB { return openDSN(t, shortWait) }
	cfgLimit := 6
	r := &faultRun{b: b, tasks: 300}
	b.db.Exec(t, effectsTable)
	reqs := make([]Request, r.tasks)
	for i := range reqs {
		reqs[i] = Request{Type: "work", Payload: []byte("5")}
	}
	_, err := b.client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	var engine *Engine
	for i := range 4 {
		db := open()
		engine = MySQL(db)
		cfg := testConfig()
		// Claims may take up to a lease: longer than the one-second lock wait.
		cfg.LeaseTimeout, cfg.HeartbeatInterval = 3*time.Second, 500*time.Millisecond
		cfg.GlobalLimit = cfgLimit
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		owner := cfg.WorkerID
		w, err := NewWorker(engine, cfg)
		dbtest.Must(t, "worker", err)
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *Task) error {
			i := r.book.start(task, owner)
			time.Sleep(5 * time.Millisecond)
			return commitEffect(ctx, db, task, owner, func() { r.book.end(i) })
		}))
		dbtest.Must(t, "start", w.Start(bg))
		r.workers = append(r.workers, w)
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
			tx, err := b.db.DB.Begin()
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
			if _, err := b.client.Enqueue(bg, "work", []byte("5")); err != nil {
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
	r.tasks += enqueued
	r.waitFinished(t, r.tasks, time.Minute)
	reran := r.verify(t)
	retries := r.workers[0].Stats().ConflictRetries + r.workers[1].Stats().ConflictRetries +
		r.workers[2].Stats().ConflictRetries + r.workers[3].Stats().ConflictRetries
	if retries == 0 {
		t.Error("no conflict retries counted while claims hit lock-wait timeouts")
	}
	t.Logf("lock waits: %d tasks (%d enqueued during the contention), %d retries counted, %d tasks ran again, 0 lost", r.tasks, enqueued, retries, reran)
}
