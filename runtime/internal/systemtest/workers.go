package systemtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// newTestWorker is a worker with one no-op handler of taskType, not started.
func newTestWorker(t *testing.T, b *Bundle, cfg runtime.Config, taskType string, opts ...runtime.HandlerOption) *runtime.Worker {
	t.Helper()
	w, err := runtime.NewWorker(b.Engine, cfg)
	dbtest.Must(t, "new worker", err)
	dbtest.Must(t, "handle", w.Handle(taskType, func(context.Context, *runtime.Task) error { return nil }, opts...))
	t.Cleanup(func() { _ = w.Stop(bg) })
	return w
}

// Two live workers never share a WorkerID, and never count one limit to
// different numbers; a stopped worker frees its id at once; live workers
// are listed with their limits, and their rows are renewed.
func testWorkerRegistry(t *testing.T, b *Bundle) {
	cfg := Config()
	cfg.WorkerID, cfg.GlobalLimit = "w-a", 10
	first := newTestWorker(t, b, cfg, "thumbnail", runtime.WithConcurrency(3))
	dbtest.Must(t, "start the first worker", first.Start(bg))

	twin := newTestWorker(t, b, cfg, "thumbnail", runtime.WithConcurrency(3))
	if err := twin.Start(bg); !errors.Is(err, runtime.ErrWorkerIDInUse) || !strings.Contains(err.Error(), `"w-a" is held by a live worker`) {
		t.Errorf("a second worker with the id: %v, want ErrWorkerIDInUse", err)
	}

	cfg.WorkerID = "w-b"
	other := newTestWorker(t, b, cfg, "thumbnail", runtime.WithConcurrency(2))
	if err := other.Start(bg); !errors.Is(err, runtime.ErrLimitMismatch) || !strings.Contains(err.Error(), `task type "thumbnail"'s concurrency is 2 here but 3 on live worker "w-a"`) {
		t.Errorf("a worker with another concurrency: %v, want ErrLimitMismatch naming both values", err)
	}
	cfg.GlobalLimit = 0
	other = newTestWorker(t, b, cfg, "resize")
	if err := other.Start(bg); !errors.Is(err, runtime.ErrLimitMismatch) || !strings.Contains(err.Error(), `GlobalLimit is none here but 10 on live worker "w-a"`) {
		t.Errorf("a worker with another global limit: %v, want ErrLimitMismatch naming both values", err)
	}
	cfg.GlobalLimit = 10
	other = newTestWorker(t, b, cfg, "resize") // other types may have other limits
	dbtest.Must(t, "start a worker with the same limits", other.Start(bg))

	// Both rows are renewed past their first TTL (a renewal a loaded
	// machine stalls lets a row lapse until the next: wait for both).
	var workers []runtime.WorkerInfo
	b.Signals.Await(t, testwait.Bound, func() bool {
		var err error
		workers, err = b.Client.Workers(bg)
		dbtest.Must(t, "workers", err)
		renewed := 0
		for _, w := range workers {
			if w.AliveUntil.Sub(w.StartedAt) > 2*cfg.RecoveryInterval {
				renewed++
			}
		}
		return renewed == 2
	}, func() string { return fmt.Sprintf("live workers %+v, want w-a and w-b, each renewed", workers) })
	host, _ := os.Hostname()
	got := map[string]runtime.WorkerInfo{}
	for _, w := range workers {
		if w.Host != host || w.PID != os.Getpid() || w.StartedAt.IsZero() || w.MaxConcurrency != 100 {
			t.Errorf("worker %+v: want this host, this pid, a start time and MaxConcurrency 100", w)
		}
		got[w.ID] = w
	}
	want := map[string]map[string]int{"w-a": {"thumbnail": 3}, "w-b": {"resize": 0}}
	if diff := cmp.Diff(want, map[string]map[string]int{"w-a": got["w-a"].TaskLimits, "w-b": got["w-b"].TaskLimits}); diff != "" || len(got) != 2 {
		t.Errorf("live workers %+v (-want +got limits):\n%s", workers, diff)
	}

	dbtest.Must(t, "stop", first.Stop(bg))
	cfg.WorkerID = "w-a"
	again := newTestWorker(t, b, cfg, "thumbnail", runtime.WithConcurrency(3))
	dbtest.Must(t, "start a new worker with a stopped worker's id", again.Start(bg))
	if err := first.Start(bg); !errors.Is(err, runtime.ErrWorkerStopped) {
		t.Errorf("Start after Stop: %v, want ErrWorkerStopped", err)
	}
}

// A row left by a worker that died is no obstacle: on another host once it
// expires, on this host as soon as its process is gone.
func testWorkerRegistryDeadRows(t *testing.T, b *Bundle) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	dbtest.Must(t, "run a short process", dead.Run())
	store := b.Driver
	dbtest.Must(t, "a crashed predecessor's row", bookkeeping.RegisterWorker(bg, store.Tables(), driver.WorkerRegistration{
		ID: "w-local", Host: host, PID: dead.Process.Pid, TaskLimits: map[string]int{"a": 0}, TTL: time.Hour}, false))

	cfg := Config()
	cfg.WorkerID = "w-local"
	dbtest.Must(t, "start with a dead predecessor's id", newTestWorker(t, b, cfg, "a").Start(bg))
	// The other host's row lives ttl; a start must meet it alive. On a
	// machine too loaded to start a worker within ttl, try again with a
	// row that lives twice as long.
	cfg.WorkerID = "w-remote"
	var remote *runtime.Worker
	for ttl := time.Second; ; ttl *= 2 {
		remote = newTestWorker(t, b, cfg, "a")
		before := time.Now() // the row lives from some instant between before and registered
		dbtest.Must(t, "another host's row", bookkeeping.RegisterWorker(bg, store.Tables(), driver.WorkerRegistration{
			ID: "w-remote", Host: "elsewhere", PID: 1, TaskLimits: map[string]int{"a": 0}, TTL: ttl}, false))
		registered := time.Now()
		err := remote.Start(bg)
		if took := time.Since(before); took >= ttl {
			if ttl >= time.Minute {
				t.Fatalf("registering and starting took %s, more than the row's %s", took, ttl)
			}
			if err == nil { // it met the row expired
				dbtest.Must(t, "stop", remote.Stop(bg))
			}
			continue
		}
		if !errors.Is(err, runtime.ErrWorkerIDInUse) || !strings.Contains(err.Error(), "elsewhere") {
			t.Errorf("start with a live row's id on another host: %v, want ErrWorkerIDInUse naming the host", err)
		}
		time.Sleep(time.Until(registered.Add(ttl + 100*time.Millisecond))) // the row's life runs out: nothing to signal it
		break
	}
	dbtest.Must(t, "start once the other host's row expired", remote.Start(bg))
}
