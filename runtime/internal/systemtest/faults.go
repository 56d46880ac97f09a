package systemtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// FaultRun is a fleet of in-process workers, each on its own pool like a
// process of its own, working through tasks that commit an effect, while a
// test breaks the database.
type FaultRun struct {
	B       *Bundle
	Book    Ledger // every execution of the workers' handlers
	Workers []*runtime.Worker
	Tasks   int // how many tasks the run must finish
}

// NewFaultRun enqueues n tasks of 20 to 60 ms and starts workers on pools
// from open.
func NewFaultRun(t *testing.T, b *Bundle, n, workers int, open func() *sql.DB) *FaultRun {
	t.Helper()
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "work", Payload: fmt.Appendf(nil, "%d", 20+rand.IntN(40)), Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(100)}}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	r := &FaultRun{B: b, Tasks: n}
	for i := range workers {
		cfg := ShortLeases()
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		cfg.MaxConcurrency = 8
		db := open()
		w, err := runtime.NewWorker(b.EngineOn(db), cfg)
		dbtest.Must(t, "worker", err)
		owner := cfg.WorkerID
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *runtime.Task) error {
			i := r.Book.Start(task, owner)
			var ms int
			fmt.Sscan(string(task.Payload), &ms)
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				r.Book.End(i)
				return ctx.Err()
			}
			return r.Book.EndIfFailed(i, CommitEffect(ctx, b.H, db, task, owner, func() { r.Book.End(i) }))
		}, runtime.WithBackoff(FastBackoff)))
		dbtest.Must(t, "start", w.Start(bg))
		r.Workers = append(r.Workers, w)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(bg, 5*time.Second)
			defer cancel()
			_ = w.Stop(ctx)
		})
	}
	return r
}

// WaitFinished waits until succeeded tasks reach want, or fails t when
// none succeeded for stall: the workers' progress decides, not the
// machine's speed (an outage a test makes lasts seconds). It counts the
// stored tasks when the workers' reports say enough succeeded, and every
// second (for workers that do not report to the bundle: other processes).
func (r *FaultRun) WaitFinished(t *testing.T, want int, stall time.Duration) {
	t.Helper()
	most, progressed := -1, time.Now()
	var looked time.Time
	for {
		next := r.B.Signals.Next() // before the count: a report after it wakes the wait
		if r.B.Signals.Succeeded() >= want || time.Since(looked) >= testwait.Recheck {
			looked = time.Now()
			n, err := r.succeeded()
			if err == nil && n >= want {
				return
			}
			if err == nil && n > most {
				most, progressed = n, time.Now()
			}
			if time.Since(progressed) > stall {
				t.Fatalf("%d of %d tasks succeeded, none for %s (last error: %v)", most, want, stall, err)
			}
		}
		select {
		case <-next:
		case <-time.After(testwait.Recheck):
		}
	}
}

// succeeded counts the succeeded tasks; during an outage it fails. It
// gives up after countWait: on a frozen server (it accepts TCP and answers
// nothing) a count would wait forever.
func (r *FaultRun) succeeded() (int, error) {
	ctx, cancel := context.WithTimeout(bg, countWait)
	defer cancel()
	counts, err := statusCounts(ctx, r.B.Driver)
	return counts[runtime.StatusSuccess], err
}

// countWait bounds a FaultRun's count of its tasks: long enough for a
// loaded machine, short beside the stall that fails the run.
const countWait = 10 * time.Second

// Running counts RUNNING tasks (the tasks in flight when a fault hits).
func (r *FaultRun) Running(t *testing.T) int {
	return r.B.StatusCounts(t)[runtime.StatusRunning]
}

// Verify checks the end state: nothing lost, no duplicate effect, no
// overlapping executions. It returns the tasks that ran more than once.
func (r *FaultRun) Verify(t *testing.T) int {
	t.Helper()
	if lost := r.B.Unfinished(t); lost != 0 {
		t.Errorf("%d tasks did not succeed", lost)
	}
	CheckEffects(t, r.B.DB, r.Tasks)
	return CheckLedger(t, r.Book.Intervals())
}

// Stats sums the workers' statistics.
func (r *FaultRun) Stats() runtime.Stats {
	var sum runtime.Stats
	for _, w := range r.Workers {
		s := w.Stats()
		sum.SelfFenced += s.SelfFenced
		sum.StaleWrites += s.StaleWrites
		sum.HeartbeatFailures += s.HeartbeatFailures
		sum.Recovered += s.Recovered
		sum.LeasesLost += s.LeasesLost
	}
	return sum
}

// privateServer is a bundle on a database of a private server, which the
// test may take down.
func privateServer(t *testing.T, h *drivertest.Harness) (*Bundle, drivertest.Server) {
	t.Helper()
	server := h.PrivateServer(t)
	dsn := server.NewDatabase("faults")
	return SetupOn(t, h, drivertest.OpenDB(t, h, dsn)), server
}

// The server dies (SIGKILL) mid-run and comes back: workers reconnect and
// every task succeeds once; enqueues during the outage fail with
// ErrUnavailable and write nothing.
func testFaultDatabaseRestart(t *testing.T, h *drivertest.Harness) {
	b, server := privateServer(t, h)
	r := NewFaultRun(t, b, 600, 3, func() *sql.DB { return b.DB.Open(t) })
	r.WaitFinished(t, 150, time.Minute)
	inFlight := r.Running(t)
	server.Kill()
	down := time.Now()

	_, err := b.Client.EnqueueMany(bg, []runtime.Request{{Type: "work", Payload: []byte("1")}, {Type: "work", Payload: []byte("1")}})
	if !errors.Is(err, runtime.ErrUnavailable) {
		t.Errorf("enqueue during the outage: err = %v, want ErrUnavailable", err)
	}
	time.Sleep(1500 * time.Millisecond)
	server.Start()
	up := time.Now()
	r.WaitFinished(t, 600, 2*time.Minute)
	recovered := time.Since(up)
	if n := b.Total(t); n != 600 {
		t.Errorf("%d task rows, want 600: the failed enqueue wrote something", n)
	}
	reran := r.Verify(t)
	s := r.Stats()
	t.Logf("restart: %d tasks in flight, outage %s, all done %s after restart; %d ran again; %d recovered, %d self-fenced, %d heartbeat failures",
		inFlight, up.Sub(down).Round(time.Millisecond), recovered.Round(time.Millisecond), reran, s.Recovered, s.SelfFenced, s.HeartbeatFailures)
}

// The server freezes (SIGSTOP) for longer than the lease: the workers stop
// their executions before their leases can expire, and after the thaw the
// tasks are recovered and finish, with no overlapping holders.
func testFaultDatabaseStall(t *testing.T, h *drivertest.Harness) {
	b, server := privateServer(t, h)
	r := NewFaultRun(t, b, 600, 3, func() *sql.DB { return b.DB.Open(t) })
	r.WaitFinished(t, 150, time.Minute)
	inFlight := r.Running(t)
	server.Freeze()
	time.Sleep(2500 * time.Millisecond) // 2.5 leases
	server.Thaw()
	thawed := time.Now()
	r.WaitFinished(t, 600, 2*time.Minute)
	reran := r.Verify(t)
	s := r.Stats()
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
func testFaultOneWorkerCutOff(t *testing.T, b *Bundle) {
	proxy, dsn := b.H.Proxy(t, b.DB.DSN)
	r := NewFaultRun(t, b, 1500, 2, func() *sql.DB { return b.DB.Open(t) })
	cutDB := b.H.OpenPool(t, dsn)
	resumed := make(chan struct{})
	cfg := ShortLeases()
	cfg.WorkerID = "cut"
	cfg.MaxConcurrency = 8
	cut, err := runtime.NewWorker(b.EngineOn(cutDB), cfg)
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", cut.Handle("work", func(ctx context.Context, task *runtime.Task) error {
		i := r.Book.Start(task, "cut")
		select {
		case <-time.After(3 * time.Second): // longer than a lease: the cut finds it waiting here
			return r.Book.EndIfFailed(i, CommitEffect(ctx, b.H, cutDB, task, "cut", func() { r.Book.End(i) }))
		case <-ctx.Done():
			// Self-fenced: from here on this execution holds nothing. It
			// ignores the cancellation and tries to complete once back.
			r.Book.End(i)
			<-resumed
			return CommitEffect(context.Background(), b.H, cutDB, task, "cut", nil)
		}
	}, runtime.WithBackoff(FastBackoff)))
	dbtest.Must(t, "start", cut.Start(bg))
	t.Cleanup(func() { _ = cut.Stop(bg) })

	r.WaitFinished(t, 150, time.Minute)
	inFlight := b.RunningOf(t, "cut")
	proxy.Pause()
	time.Sleep(2500 * time.Millisecond)
	cutAt := cut.Stats().Claimed
	proxy.Resume()
	close(resumed)
	back := time.Now()
	r.WaitFinished(t, 1500, 2*time.Minute)
	done := time.Since(back)
	dbtest.Must(t, "stop the cut-off worker", cut.Stop(bg)) // its stale executions finish first
	reran := r.Verify(t)
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

// An enqueue whose statement reached the server but whose reply never came
// back fails with ErrOutcomeUnknown, not ErrUnavailable: the task may exist.
// Retried with its idempotency key (as a unique task's generated enqueue
// is), it returns that task and stores no second one.
func testEnqueueOutcomeUnknown(t *testing.T, b *Bundle) {
	proxy, dsn := b.H.Proxy(t, b.DB.DSN)
	client, err := runtime.NewClient(engine(b.H, b.H.OpenPool(t, dsn)), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = client.Enqueue(bg, "warm", nil) // the session check, before the cut
	dbtest.Must(t, "enqueue before the cut", err)

	cut := proxy.CutBeforeReply("INSERT INTO leasegen_tasks")
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	_, err = client.Enqueue(ctx, "report", []byte(`{}`), runtime.WithIdempotencyKey("r-1"))
	<-cut
	if !errors.Is(err, runtime.ErrOutcomeUnknown) || errors.Is(err, runtime.ErrUnavailable) {
		t.Fatalf("enqueue without a reply: err = %v, want ErrOutcomeUnknown (and not ErrUnavailable)", err)
	}
	proxy.Resume()
	reports := b.Tasks(t, runtime.Filter{Type: "report"})
	if len(reports) != 1 {
		t.Fatalf("%d report tasks after the unanswered enqueue, want 1: the test needs the server to have run it", len(reports))
	}
	id, err := client.Enqueue(bg, "report", []byte(`{}`), runtime.WithIdempotencyKey("r-1"))
	dbtest.Must(t, "retry with the key", err)
	if after := b.Tasks(t, runtime.Filter{Type: "report"}); len(after) != 1 || id != reports[0].ID {
		t.Errorf("the retry returned %d and left %d report tasks; want the stored task %d and 1", id, len(after), reports[0].ID)
	}
}

// stallable returns a pool on b's database whose statements can be made to
// hang: the harness's own way, else through a TCP proxy that stops
// forwarding.
func stallable(t *testing.T, b *Bundle) (db *sql.DB, stall, unstall func()) {
	t.Helper()
	if b.H.Stallable != nil {
		return b.H.Stallable(t, b.Bundle)
	}
	proxy, dsn := b.H.Proxy(t, b.DB.DSN)
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
	cfg := ShortLeases()
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
	// Paused until the rescue: a poll of the cut-off worker that runs once
	// it is reconnected, before its Stop begins, claims nothing. (A pause
	// leaves running tasks alone.)
	dbtest.Must(t, "pause", b.Client.Pause(bg, "long"))
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
	dbtest.Must(t, "resume", b.Client.Resume(bg, "long"))

	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"long": func(ctx context.Context, task *runtime.Task) error {
			defer book.End(book.Start(task, "rescuer"))
			return nil
		},
	})
	if info := b.WaitStatus(t, id, runtime.StatusSuccess); info.AttemptsUsed != 2 {
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

// An outcome lost with its connection, before the server saw it or after
// it ran it, is written again on a new connection: the fence makes the
// repeat safe, so the task goes on at once instead of waiting out its
// lease and running again. Each outcome the proxy can tell by its
// statement: a completion, a failure that runs the task again, a snooze;
// the second execution of the last two succeeds.
func testLostOutcomeIsRetried(t *testing.T, b *Bundle) {
	outcomes := []struct {
		name, statement string
		first           error // the first execution's outcome
		attemptsUsed    int
	}{
		{"completion", "status = 'SUCCESS'", nil, 1},
		{"failure", "name: TaskFail ", errors.New("once"), 2},
		{"snooze", "name: TaskRelease ", runtime.Snooze(10 * time.Millisecond), 1},
	}
	for _, o := range outcomes {
		for _, lost := range []string{"statement", "reply"} {
			t.Run(o.name+"/"+lost, func(t *testing.T) {
				proxy, dsn := b.H.Proxy(t, b.DB.DSN)
				var runs atomic.Int32
				cfg := Config()
				cfg.WorkerID = "lossy-" + o.name + "-" + lost
				w, err := runtime.NewWorker(b.EngineOn(b.H.OpenPool(t, dsn)), cfg)
				dbtest.Must(t, "worker", err)
				typ := o.name + "-" + lost
				dbtest.Must(t, "handle", w.Handle(typ, func(context.Context, *runtime.Task) error {
					if runs.Add(1) == 1 {
						return o.first
					}
					return nil
				}, runtime.WithBackoff(FastBackoff)))
				dbtest.Must(t, "start", w.Start(bg))
				t.Cleanup(func() { _ = w.Stop(bg) })

				lose := proxy.LoseStatement
				if lost == "reply" {
					lose = proxy.LoseReply
				}
				gone := lose(o.statement)
				id := b.Enqueue(t, typ, runtime.WithMaxAttempts(2))
				info := b.WaitStatus(t, id, runtime.StatusSuccess)
				// The row may read SUCCESS before the worker has written it
				// again and counted it: wait for the worker's report.
				want := int(runs.Load())
				b.Signals.Await(t, testwait.Bound, func() bool { return b.Signals.Finished(typ) == want }, func() string {
					return fmt.Sprintf("%d executions of %s ended, want %d", b.Signals.Finished(typ), typ, want)
				})
				select {
				case <-gone:
				default:
					t.Fatalf("no %s statement went through the proxy", o.name)
				}
				wantRuns := 2
				if o.first == nil {
					wantRuns = 1
				}
				if s := w.Stats(); info.AttemptsUsed != o.attemptsUsed || runs.Load() != int32(wantRuns) || s.Completed != 1 || s.StaleWrites != 0 || s.Recovered != 0 {
					t.Errorf("after a lost %s %s: %d attempts used, %d runs, stats %+v; want %d attempts, %d runs, one completion, no stale write, nothing recovered",
						o.name, lost, info.AttemptsUsed, runs.Load(), s, o.attemptsUsed, wantRuns)
				}
			})
		}
	}
}
