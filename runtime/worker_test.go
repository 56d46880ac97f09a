package runtime

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

func fastBackoff(int) time.Duration { return 10 * time.Millisecond }

func TestWorkerRetriesThenSucceeds(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		var calls atomic.Int32
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"flaky": func(ctx context.Context, task *Task) error {
				if calls.Add(1) < 3 {
					return errors.New("try again")
				}
				return nil
			},
		}, WithBackoff(fastBackoff))
		id := b.enqueue(t, "flaky", WithMaxAttempts(3))
		info := b.waitStatus(t, id, StatusSuccess, 5*time.Second)
		if info.Attempt != 3 || info.LastError != "try again" {
			t.Errorf("attempt %d, last error %q", info.Attempt, info.LastError)
		}
	})
}

func TestWorkerFailsAfterLastAttempt(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"broken": func(context.Context, *Task) error { return errors.New("always") },
			"fatal":  func(context.Context, *Task) error { return Permanent(errors.New("bad input")) },
		}, WithBackoff(fastBackoff))
		broken := b.enqueue(t, "broken", WithMaxAttempts(2))
		fatal := b.enqueue(t, "fatal", WithMaxAttempts(5))
		if info := b.waitStatus(t, broken, StatusFailed, 5*time.Second); info.Attempt != 2 || info.FinishedAt.IsZero() {
			t.Errorf("broken: attempt %d finished %v", info.Attempt, info.FinishedAt)
		}
		if info := b.waitStatus(t, fatal, StatusFailed, 5*time.Second); info.Attempt != 1 || !strings.Contains(info.LastError, "bad input") {
			t.Errorf("permanent failure: attempt %d error %q, want one attempt", info.Attempt, info.LastError)
		}
	})
}

func TestWorkerRecordsPanicWithStack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"panics": func(context.Context, *Task) error { panic("boom") },
		}, WithBackoff(fastBackoff))
		id := b.enqueue(t, "panics", WithMaxAttempts(2))
		info := b.waitStatus(t, id, StatusFailed, 5*time.Second)
		if info.Attempt != 2 || !strings.Contains(info.LastError, "panic: boom") || !strings.Contains(info.LastError, "worker_test.go") {
			t.Errorf("attempt %d, last error %q: want 2 attempts and the stack", info.Attempt, info.LastError)
		}
	})
}

func TestWorkerSnoozeKeepsAttempts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		var calls atomic.Int32
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"later": func(ctx context.Context, task *Task) error {
				if calls.Add(1) <= 3 {
					return Snooze(20 * time.Millisecond)
				}
				return nil
			},
		})
		id := b.enqueue(t, "later", WithMaxAttempts(1))
		info := b.waitStatus(t, id, StatusSuccess, 5*time.Second)
		if info.Attempt != 4 || calls.Load() != 4 {
			t.Errorf("attempt %d after %d calls; snoozes must not use the single attempt", info.Attempt, calls.Load())
		}
	})
}

func TestCancelQueuedTaskNeverRuns(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		id := b.enqueue(t, "a")
		dbtest.Must(t, "cancel", b.client.Cancel(bg, id))
		ran := make(chan TaskID, 10)
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"a": func(_ context.Context, task *Task) error { ran <- task.ID; return nil },
		})
		marker := b.enqueue(t, "a")
		b.waitStatus(t, marker, StatusSuccess, 5*time.Second)
		if got := <-ran; got != marker {
			t.Errorf("ran task %d, want only the marker %d", got, marker)
		}
		if info, _ := b.client.Get(bg, id); info.Status != StatusCancelled || info.Attempt != 0 {
			t.Errorf("cancelled task: %s attempt %d", info.Status, info.Attempt)
		}
	})
}

func TestCancelRequestReachesRunningHandler(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		started := make(chan struct{})
		cause := make(chan error, 1)
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"long": func(ctx context.Context, task *Task) error {
				close(started)
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return ctx.Err()
			},
		})
		id := b.enqueue(t, "long")
		<-started
		dbtest.Must(t, "cancel", b.client.Cancel(bg, id))
		select {
		case err := <-cause:
			if !errors.Is(err, ErrCancelRequested) {
				t.Errorf("context cause = %v, want ErrCancelRequested", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("the handler's context was not cancelled")
		}
		b.waitStatus(t, id, StatusCancelled, 5*time.Second)
	})
}

func TestMaxExecutionTime(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		cause := make(chan error, 1)
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"slow": func(ctx context.Context, task *Task) error {
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return ctx.Err()
			},
		}, WithTimeout(100*time.Millisecond))
		id := b.enqueue(t, "slow", WithMaxAttempts(1))
		info := b.waitStatus(t, id, StatusFailed, 5*time.Second)
		if err := <-cause; !errors.Is(err, ErrExecutionTimeout) {
			t.Errorf("cause = %v, want ErrExecutionTimeout", err)
		}
		if !strings.Contains(info.LastError, "max execution time") {
			t.Errorf("last error %q does not say why", info.LastError)
		}
	})
}

// Stop keeps renewing while a task longer than the lease drains: no other
// worker takes it, and it completes on its first attempt.
func TestStopDrainsWhileRenewing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		started := make(chan struct{})
		cfg := testConfig()
		w := b.startWorker(t, cfg, map[string]HandlerFunc{
			"long": func(ctx context.Context, task *Task) error {
				close(started)
				select {
				case <-time.After(2500 * time.Millisecond): // 2.5 leases
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			},
		})
		id := b.enqueue(t, "long")
		<-started
		b.startWorker(t, cfg, map[string]HandlerFunc{
			"long": func(context.Context, *Task) error { t.Error("a second worker ran the draining task"); return nil },
		})
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		dbtest.Must(t, "stop", w.Stop(ctx))
		info, _ := b.client.Get(bg, id)
		if info.Status != StatusSuccess || info.Attempt != 1 {
			t.Errorf("after a draining stop: %s attempt %d, want SUCCESS on attempt 1", info.Status, info.Attempt)
		}
	})
}

// When the drain timeout ends first, running tasks are cancelled and
// released at once, without using an attempt.
func TestStopTimeoutReleases(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		started := make(chan struct{})
		w := b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"long": func(ctx context.Context, task *Task) error {
				close(started)
				<-ctx.Done()
				return ctx.Err()
			},
		})
		id := b.enqueue(t, "long", WithMaxAttempts(1))
		<-started
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		defer cancel()
		if err := w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want the drain deadline", err)
		}
		info, _ := b.client.Get(bg, id)
		if info.Status != StatusQueued || info.Attempt != 1 || !info.LeaseUntil.IsZero() {
			t.Fatalf("released task: %s attempt %d lease %v", info.Status, info.Attempt, info.LeaseUntil)
		}
		// Its single attempt is still unused: another worker completes it.
		b.startWorker(t, testConfig(), map[string]HandlerFunc{"long": func(context.Context, *Task) error { return nil }})
		b.waitStatus(t, id, StatusSuccess, 5*time.Second)
	})
}

// A handler that ignores its context does not hold Stop past its bound.
func TestStopIsBoundedWhenHandlerIgnoresContext(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		started := make(chan struct{})
		release := make(chan struct{})
		defer close(release)
		w := b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"stubborn": func(context.Context, *Task) error { close(started); <-release; return nil },
		})
		id := b.enqueue(t, "stubborn")
		<-started
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		defer cancel()
		begin := time.Now()
		_ = w.Stop(ctx)
		if took := time.Since(begin); took > 2*time.Second {
			t.Errorf("Stop took %s with a stubborn handler", took)
		}
		if info, _ := b.client.Get(bg, id); info.Status != StatusQueued {
			t.Errorf("stubborn task is %s, want QUEUED (released)", info.Status)
		}
	})
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{LeaseTimeout: -time.Second}, "LeaseTimeout must be > 0"},
		{Config{LeaseTimeout: time.Second, HeartbeatInterval: 500 * time.Millisecond}, "HeartbeatInterval must be < LeaseTimeout/2 (500ms), got 500ms"},
		{Config{HeartbeatInterval: time.Minute}, "HeartbeatInterval must be < LeaseTimeout/2 (30s)"},
		{Config{RecoveryInterval: -1}, "RecoveryInterval must be > 0"},
		{Config{PollInterval: -1}, "PollInterval must be > 0"},
		{Config{RecoveryBatchSize: -5}, "RecoveryBatchSize must be > 0, got -5"},
		{Config{MaxConcurrency: -1}, "MaxConcurrency must be > 0"},
		{Config{GlobalLimit: -1}, "GlobalLimit must be >= 0"},
		{Config{WorkerID: strings.Repeat("w", 65)}, "WorkerID must be at most 64 bytes"},
		{Config{WorkerID: "worker 1"}, "WorkerID must be printable ASCII without spaces"},
		{Config{WorkerID: "wörker"}, "WorkerID must be printable ASCII without spaces"},
	}
	for _, c := range cases {
		c.cfg.Logger = quietLogger()
		_, err := NewWorker(&Engine{}, c.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
	w, err := NewWorker(&Engine{}, Config{Logger: quietLogger()})
	dbtest.Must(t, "defaults", err)
	if w.cfg.LeaseTimeout != time.Minute || w.cfg.HeartbeatInterval != 10*time.Second || w.cfg.RecoveryInterval != 30*time.Second ||
		w.cfg.MaxExecutionTime != 5*time.Minute || w.cfg.PollInterval != time.Second || w.cfg.RecoveryBatchSize != 100 {
		t.Errorf("defaults = %+v", w.cfg)
	}
	if err := w.Handle("a", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil handler: %v", err)
	}
	dbtest.Must(t, "handle", w.Handle("a", func(context.Context, *Task) error { return nil }))
	if err := w.Handle("a", func(context.Context, *Task) error { return nil }); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("duplicate handler: %v", err)
	}
	if err := w.Handle("b", func(context.Context, *Task) error { return nil }, WithConcurrency(-1)); err == nil {
		t.Error("negative concurrency accepted")
	}
}

// A task type no worker knows is left alone: not claimed, not failed, still
// visible to listings, while known types keep flowing.
func TestUnknownTypeStaysQueued(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		ghost := b.enqueue(t, "ghost", WithOwner("o"))
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"known": func(context.Context, *Task) error { return nil },
		})
		for range 3 {
			b.waitStatus(t, b.enqueue(t, "known"), StatusSuccess, 5*time.Second)
		}
		info, err := b.client.Get(bg, ghost)
		dbtest.Must(t, "get", err)
		if info.Status != StatusQueued || info.Attempt != 0 {
			t.Errorf("unknown type: %s after %d attempts, want QUEUED and untouched", info.Status, info.Attempt)
		}
		if list, _ := b.client.ListByOwner(bg, "o", 10, StatusQueued); len(list) != 1 {
			t.Errorf("listing shows %d queued tasks of the owner, want the ghost", len(list))
		}
	})
}

// A task type's short lease needs no Config of its own: the default
// heartbeat is derived from the shortest lease, and a task that runs for
// several leases keeps its one lease. A configured heartbeat too slow for
// the lease is refused with the value to set.
func TestShortLeaseDerivesTheHeartbeat(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		w, err := NewWorker(b.engine, Config{Logger: quietLogger(), PollInterval: 50 * time.Millisecond})
		dbtest.Must(t, "new worker", err)
		dbtest.Must(t, "handle", w.Handle("thumbnail", func(context.Context, *Task) error {
			time.Sleep(1500 * time.Millisecond) // 2.5 leases
			return nil
		}, WithLease(600*time.Millisecond)))
		dbtest.Must(t, "start with the default heartbeat", w.Start(bg))
		t.Cleanup(func() { _ = w.Stop(bg) })
		if w.cfg.HeartbeatInterval != 100*time.Millisecond {
			t.Errorf("derived heartbeat %s, want the lease / 6 = 100ms", w.cfg.HeartbeatInterval)
		}
		id := b.enqueue(t, "thumbnail")
		info := b.waitStatus(t, id, StatusSuccess, 10*time.Second)
		if s := w.Stats(); info.Attempt != 1 || s.LeasesLost != 0 || s.SelfFenced != 0 {
			t.Errorf("a task of 2.5 leases: attempt %d, %d leases lost, %d self-fenced; want its one lease renewed throughout", info.Attempt, s.LeasesLost, s.SelfFenced)
		}

		slow, err := NewWorker(b.engine, Config{Logger: quietLogger(), HeartbeatInterval: 10 * time.Second})
		dbtest.Must(t, "new worker", err)
		dbtest.Must(t, "handle", slow.Handle("thumbnail", func(context.Context, *Task) error { return nil }, WithLease(5*time.Second)))
		if err := slow.Start(bg); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "set it to at most 1.25s, or leave it 0") {
			t.Errorf("a configured heartbeat of 10s for a 5s lease: %v, want ErrInvalidConfig saying what to set", err)
		}
	})
	w, err := NewWorker(&Engine{}, Config{LeaseTimeout: 3 * time.Second, Logger: quietLogger()})
	dbtest.Must(t, "a short LeaseTimeout with the default heartbeat", err)
	if w.cfg.HeartbeatInterval != 500*time.Millisecond {
		t.Errorf("heartbeat for LeaseTimeout 3s: %s, want 500ms", w.cfg.HeartbeatInterval)
	}
}
