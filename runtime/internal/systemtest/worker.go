package systemtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

func FastBackoff(int) time.Duration { return 10 * time.Millisecond }

func testWorkerRetriesThenSucceeds(t *testing.T, b *Bundle) {
	var calls atomic.Int32
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"flaky": func(ctx context.Context, task *runtime.Task) error {
			if calls.Add(1) < 3 {
				return errors.New("try again")
			}
			return nil
		},
	}, runtime.WithBackoff(FastBackoff))
	id := b.Enqueue(t, "flaky", runtime.WithMaxAttempts(3))
	info := b.WaitStatus(t, id, runtime.StatusSuccess)
	if info.Attempt != 3 || info.LastError != "try again" {
		t.Errorf("attempt %d, last error %q", info.Attempt, info.LastError)
	}
}

func testWorkerFailsAfterLastAttempt(t *testing.T, b *Bundle) {
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"broken": func(context.Context, *runtime.Task) error { return errors.New("always") },
		"fatal":  func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("bad input")) },
	}, runtime.WithBackoff(FastBackoff))
	broken := b.Enqueue(t, "broken", runtime.WithMaxAttempts(2))
	fatal := b.Enqueue(t, "fatal", runtime.WithMaxAttempts(5))
	if info := b.WaitStatus(t, broken, runtime.StatusFailed); info.AttemptsUsed != 2 || info.FinishedAt.IsZero() {
		t.Errorf("broken: %d attempts used, finished %v", info.AttemptsUsed, info.FinishedAt)
	}
	if info := b.WaitStatus(t, fatal, runtime.StatusFailed); info.AttemptsUsed != 1 || !strings.Contains(info.LastError, "bad input") {
		t.Errorf("permanent failure: %d attempts used, error %q, want one attempt", info.AttemptsUsed, info.LastError)
	}
}

func testWorkerRecordsPanicWithStack(t *testing.T, b *Bundle) {
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"panics": func(context.Context, *runtime.Task) error { panic("boom") },
	}, runtime.WithBackoff(FastBackoff))
	id := b.Enqueue(t, "panics", runtime.WithMaxAttempts(2))
	info := b.WaitStatus(t, id, runtime.StatusFailed)
	if info.AttemptsUsed != 2 || !strings.Contains(info.LastError, "panic: boom") || !strings.Contains(info.LastError, "testWorkerRecordsPanicWithStack") {
		t.Errorf("%d attempts used, last error %q: want 2 attempts and the stack", info.AttemptsUsed, info.LastError)
	}
}

func testWorkerSnoozeKeepsAttempts(t *testing.T, b *Bundle) {
	var calls atomic.Int32
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"later": func(ctx context.Context, task *runtime.Task) error {
			if calls.Add(1) <= 3 {
				return runtime.Snooze(20 * time.Millisecond)
			}
			return nil
		},
	})
	id := b.Enqueue(t, "later", runtime.WithMaxAttempts(1))
	info := b.WaitStatus(t, id, runtime.StatusSuccess)
	if info.Attempt != 4 || calls.Load() != 4 {
		t.Errorf("attempt %d after %d calls; snoozes must not use the single attempt", info.Attempt, calls.Load())
	}
}

func testCancelQueuedTaskNeverRuns(t *testing.T, b *Bundle) {
	id := b.Enqueue(t, "a")
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, id))
	ran := make(chan runtime.TaskID, 10)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"a": func(_ context.Context, task *runtime.Task) error { ran <- task.ID; return nil },
	})
	marker := b.Enqueue(t, "a")
	b.WaitStatus(t, marker, runtime.StatusSuccess)
	if got := <-ran; got != marker {
		t.Errorf("ran task %d, want only the marker %d", got, marker)
	}
	if info, _ := b.Client.Get(bg, id); info.Status != runtime.StatusCancelled || info.Attempt != 0 {
		t.Errorf("cancelled task: %s attempt %d", info.Status, info.Attempt)
	}
}

func testCancelRequestReachesRunningHandler(t *testing.T, b *Bundle) {
	started := make(chan struct{})
	cause := make(chan error, 1)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"long": func(ctx context.Context, task *runtime.Task) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		},
	})
	id := b.Enqueue(t, "long")
	<-started
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, id))
	select {
	case err := <-cause:
		if !errors.Is(err, runtime.ErrCancelRequested) {
			t.Errorf("context cause = %v, want ErrCancelRequested", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the handler's context was not cancelled")
	}
	b.WaitStatus(t, id, runtime.StatusCancelled)
}

func testMaxExecutionTime(t *testing.T, b *Bundle) {
	cause := make(chan error, 1)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"slow": func(ctx context.Context, task *runtime.Task) error {
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		},
	}, runtime.WithTimeout(100*time.Millisecond))
	id := b.Enqueue(t, "slow", runtime.WithMaxAttempts(1))
	info := b.WaitStatus(t, id, runtime.StatusFailed)
	if err := <-cause; !errors.Is(err, runtime.ErrExecutionTimeout) {
		t.Errorf("cause = %v, want ErrExecutionTimeout", err)
	}
	if !strings.Contains(info.LastError, "max execution time") {
		t.Errorf("last error %q does not say why", info.LastError)
	}
}

// Stop keeps renewing while a task longer than the lease drains: no other
// worker takes it, and it completes on its first attempt.
func testStopDrainsWhileRenewing(t *testing.T, b *Bundle) {
	started := make(chan struct{})
	cfg := Config()
	// Renewals must keep this lease for 2.5 leases: 3 s, well above the
	// stalls of a loaded machine (one of 0.9 s self-fenced a 1 s lease on
	// MySQL under two CPU burners), renewed every 500 ms.
	cfg.LeaseTimeout, cfg.HeartbeatInterval = 3*time.Second, 500*time.Millisecond
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"long": func(ctx context.Context, task *runtime.Task) error {
			close(started)
			select {
			case <-time.After(5 * cfg.LeaseTimeout / 2): // 2.5 leases
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	})
	id := b.Enqueue(t, "long")
	<-started
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"long": func(context.Context, *runtime.Task) error {
			t.Error("a second worker ran the draining task")
			return nil
		},
	})
	ctx, cancel := context.WithTimeout(bg, testwait.Bound)
	defer cancel()
	dbtest.Must(t, "stop", w.Stop(ctx))
	info, _ := b.Client.Get(bg, id)
	if info.Status != runtime.StatusSuccess || info.AttemptsUsed != 1 {
		t.Errorf("after a draining stop: %s with %d attempts used, want SUCCESS on the first", info.Status, info.AttemptsUsed)
	}
}

// When the drain timeout ends first, running tasks are cancelled and
// released at once, without using an attempt.
func testStopTimeoutReleases(t *testing.T, b *Bundle) {
	started := make(chan struct{})
	w := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"long": func(ctx context.Context, task *runtime.Task) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		},
	})
	id := b.Enqueue(t, "long", runtime.WithMaxAttempts(1))
	<-started
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if err := w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop = %v, want the drain deadline", err)
	}
	info, _ := b.Client.Get(bg, id)
	if info.Status != runtime.StatusQueued || info.Attempt != 1 || !info.LeaseUntil.IsZero() {
		t.Fatalf("released task: %s attempt %d lease %v", info.Status, info.Attempt, info.LeaseUntil)
	}
	// Its single attempt is still unused: another worker completes it.
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"long": func(context.Context, *runtime.Task) error { return nil }})
	b.WaitStatus(t, id, runtime.StatusSuccess)
}

// A handler that ignores its context does not hold Stop past its bound.
func testStopIsBoundedWhenHandlerIgnoresContext(t *testing.T, b *Bundle) {
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	w := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"stubborn": func(context.Context, *runtime.Task) error { close(started); <-release; return nil },
	})
	id := b.Enqueue(t, "stubborn")
	<-started
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_ = w.Stop(ctx)
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("Stop took %s with a stubborn handler", took)
	}
	if info, _ := b.Client.Get(bg, id); info.Status != runtime.StatusQueued {
		t.Errorf("stubborn task is %s, want QUEUED (released)", info.Status)
	}
}

// A task type no worker knows is left alone: not claimed, not failed, still
// visible to listings, while known types keep flowing.
func testUnknownTypeStaysQueued(t *testing.T, b *Bundle) {
	ghost := b.Enqueue(t, "ghost", runtime.WithOwner("o"))
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"known": func(context.Context, *runtime.Task) error { return nil },
	})
	for range 3 {
		b.WaitStatus(t, b.Enqueue(t, "known"), runtime.StatusSuccess)
	}
	info, err := b.Client.Get(bg, ghost)
	dbtest.Must(t, "get", err)
	if info.Status != runtime.StatusQueued || info.Attempt != 0 {
		t.Errorf("unknown type: %s after %d attempts, want QUEUED and untouched", info.Status, info.Attempt)
	}
	if list, _ := b.Client.ListByOwner(bg, "o", 10, runtime.StatusQueued); len(list) != 1 {
		t.Errorf("listing shows %d queued tasks of the owner, want the ghost", len(list))
	}
}

// A task type's short lease needs no Config of its own: the default
// heartbeat follows the shortest lease, and a task that runs for several
// leases keeps its one lease. A configured heartbeat too slow for the lease
// is refused with the value to set.
func testShortLeaseKeepsItsLease(t *testing.T, b *Bundle) {
	// The type's lease, 3 s, is well above the stalls of a loaded machine
	// (a 600 ms one self-fenced on MySQL under two CPU burners); the
	// default Config's lease is 60 s, so only a heartbeat that follows the
	// type's lease (every 500 ms) keeps it.
	const lease = 3 * time.Second
	w := b.StartWorker(t, runtime.Config{Logger: QuietLogger(), PollInterval: 50 * time.Millisecond}, map[string]runtime.HandlerFunc{
		"thumbnail": func(context.Context, *runtime.Task) error {
			time.Sleep(5 * lease / 2) // 2.5 leases
			return nil
		},
	}, runtime.WithLease(lease))
	id := b.Enqueue(t, "thumbnail")
	info := b.WaitStatus(t, id, runtime.StatusSuccess)
	if s := w.Stats(); info.AttemptsUsed != 1 || s.LeasesLost != 0 || s.SelfFenced != 0 {
		t.Errorf("a task of 2.5 leases: %d attempts used, %d leases lost, %d self-fenced; want its one lease renewed throughout", info.AttemptsUsed, s.LeasesLost, s.SelfFenced)
	}

	slow, err := runtime.NewWorker(b.Engine, runtime.Config{Logger: QuietLogger(), HeartbeatInterval: 10 * time.Second})
	dbtest.Must(t, "new worker", err)
	dbtest.Must(t, "handle", slow.Handle("thumbnail", func(context.Context, *runtime.Task) error { return nil }, runtime.WithLease(5*time.Second)))
	if err := slow.Start(bg); !errors.Is(err, runtime.ErrInvalidConfig) || !strings.Contains(err.Error(), "set it to at most 1.25s, or leave it 0") {
		t.Errorf("a configured heartbeat of 10s for a 5s lease: %v, want ErrInvalidConfig saying what to set", err)
	}
}

func testWorkerCompletesTask(t *testing.T, b *Bundle) {
	got := make(chan string, 1)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"echo": func(ctx context.Context, task *runtime.Task) error {
			got <- string(task.Payload)
			task.SetResult("artifact-1")
			return nil
		},
	})
	id, err := b.Client.Enqueue(context.Background(), "echo", []byte(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	info := b.WaitStatus(t, id, runtime.StatusSuccess)
	if p := <-got; p != `{"x":1}` {
		t.Errorf("payload = %s", p)
	}
	if info.Result != "artifact-1" || info.AttemptsUsed != 1 || info.FinishedAt.IsZero() || !info.LeaseUntil.IsZero() {
		t.Errorf("finished task = %+v", info)
	}
}

// WorkOne runs one due task through the real worker and returns it as its
// outcome left it: a success, a retry, an idempotent handler's commit; with
// nothing due it says so.
func testWorkOne(t *testing.T, b *Bundle) {
	newWorker := func(fn runtime.HandlerFunc) *runtime.Worker {
		w, err := runtime.NewWorker(b.Engine, Config())
		dbtest.Must(t, "new worker", err)
		dbtest.Must(t, "handle", w.Handle("a", fn, runtime.WithBackoff(FastBackoff)))
		return w
	}
	ok := func(context.Context, *runtime.Task) error { return nil }
	if _, err := newWorker(ok).WorkOne(bg); !errors.Is(err, runtime.ErrNoTaskDue) {
		t.Fatalf("WorkOne on an empty queue: %v, want ErrNoTaskDue", err)
	}
	low, high := b.Enqueue(t, "a"), b.Enqueue(t, "a", runtime.WithPriority(5), runtime.WithMaxAttempts(2))
	info, err := newWorker(func(context.Context, *runtime.Task) error { return errors.New("not yet") }).WorkOne(bg)
	dbtest.Must(t, "work one failing task", err)
	if info.ID != high || info.Status != runtime.StatusQueued || info.Attempt != 1 || info.LastError != "not yet" {
		t.Errorf("a failing task with attempts left: %+v; want task %d QUEUED again after attempt 1 with its error", info, high)
	}
	if other, _ := b.Client.Get(bg, low); other.Status != runtime.StatusQueued || other.Attempt != 0 {
		t.Errorf("the other task: %s at attempt %d; want it untouched", other.Status, other.Attempt)
	}

	b.DB.MustExec(t, EffectsTable)
	info, err = newWorker(func(ctx context.Context, task *runtime.Task) error {
		return runtime.RunIdempotent(ctx, task, fmt.Sprint(task.ID), func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, 'w')"), task.ID, task.Attempt)
			return err
		})
	}).WorkOne(bg)
	dbtest.Must(t, "work one idempotent task", err)
	if effects := b.DB.Int(t, "SELECT COUNT(*) FROM effects WHERE task_id = ?", info.ID); info.Status != runtime.StatusSuccess || effects != 1 {
		t.Errorf("an idempotent task: %+v with %d effects; want SUCCESS with its one effect", info, effects)
	}
}

// Wait returns a task once it is finished, with its result; a wait that
// outlives its context returns the task as last read and the context's
// error; an unknown id is ErrTaskNotFound at once.
func testClientWait(t *testing.T, b *Bundle) {
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"slow": func(ctx context.Context, task *runtime.Task) error {
		time.Sleep(100 * time.Millisecond)
		task.SetResult(`{"done":true}`)
		return nil
	}})
	id := b.Enqueue(t, "slow")
	info, err := b.Client.Wait(bg, id)
	if err != nil || info.Status != runtime.StatusSuccess || info.Result != `{"done":true}` {
		t.Errorf("Wait = %+v, %v; want SUCCESS with its result", info, err)
	}
	queued := b.Enqueue(t, "nobody-handles-it")
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if info, err := b.Client.Wait(ctx, queued); !errors.Is(err, context.DeadlineExceeded) || info.Status != runtime.StatusQueued {
		t.Errorf("Wait past its deadline = %s, %v; want QUEUED and DeadlineExceeded", info.Status, err)
	}
	if _, err := b.Client.Wait(bg, 1<<40); !errors.Is(err, runtime.ErrTaskNotFound) {
		t.Errorf("Wait for no task: %v, want ErrTaskNotFound", err)
	}
}

// skewedClock is a wall clock off by a fixed amount, without the monotonic
// reading, like a worker on a machine whose clock is wrong.
type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew).Round(0) }

// Workers whose clocks are ten minutes fast and slow share tasks correctly:
// a task longer than the lease keeps its first holder (nobody recovers a
// live lease), and an abandoned lease is recovered within its bound.
func testWorkerClockSkewDoesNotMatter(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	cfg := ShortLeases()
	// Twice ShortLeases': a lapse of a stalled renewal here would read as
	// a stolen lease (one stall of 0.8 s let all four 1 s leases lapse on
	// MySQL 9.7 on a loaded machine).
	cfg.LeaseTimeout = 2 * time.Second
	// A lease abandoned by a dead worker: claimed, never renewed.
	abandoned := b.Enqueue(t, "long", runtime.WithPriority(-1))
	claimed, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "dead", Lease: cfg.LeaseTimeout, Types: []string{"long"}, Max: 1})
	dbtest.Must(t, "claim", err)
	if len(claimed) != 1 || claimed[0].ID != abandoned {
		t.Fatalf("the dead worker claimed %v, want the abandoned task %d", drivertest.IDs(claimed), abandoned)
	}
	held, err := b.Client.Get(bg, abandoned)
	dbtest.Must(t, "get the abandoned task", err)
	leaseUntil := held.LeaseUntil

	var book Ledger
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		cfg.Clock = skewedClock{skew}
		cfg.WorkerID = fmt.Sprintf("skew%s", skew)
		owner := cfg.WorkerID
		b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
			"long": func(ctx context.Context, task *runtime.Task) error {
				i := book.Start(task, owner)
				select {
				case <-time.After(5 * cfg.LeaseTimeout / 2): // 2.5 leases
				case <-ctx.Done():
					book.End(i)
					return ctx.Err()
				}
				// The execution ends before its commit: once the commit
				// shows SUCCESS, the ledger has the end.
				return book.EndIfFailed(i, CommitEffect(ctx, b.H, b.DB.DB, task, owner, func() { book.End(i) }))
			},
		})
	}
	var long []runtime.TaskID
	for range 4 {
		long = append(long, b.Enqueue(t, "long"))
	}

	for _, id := range long {
		if info := b.WaitStatus(t, id, runtime.StatusSuccess); info.AttemptsUsed != 1 {
			t.Errorf("task %d used %d attempts: a skewed worker took a live lease", id, info.AttemptsUsed)
		}
	}
	// A clock 10 minutes off that decided recovery would restart the
	// task 10 minutes early or late; on the database's clock it restarts
	// after the expiry, within what a loaded machine's passes take.
	info := b.WaitStatus(t, abandoned, runtime.StatusSuccess)
	if delay := info.StartedAt.Sub(leaseUntil); info.AttemptsUsed != 2 || delay < 0 || delay > time.Minute {
		t.Errorf("abandoned task restarted %s after its lease expired (%d attempts used), want within a minute after", delay, info.AttemptsUsed)
	}
	CheckLedger(t, book.Intervals())
	CheckEffects(t, b.DB, len(long)+1)
}
