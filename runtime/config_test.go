package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

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
	if err != nil {
		t.Fatal(err)
	}
	if w.cfg.LeaseTimeout != time.Minute || w.cfg.HeartbeatInterval != 10*time.Second || w.cfg.RecoveryInterval != 30*time.Second ||
		w.cfg.MaxExecutionTime != 5*time.Minute || w.cfg.PollInterval != time.Second || w.cfg.RecoveryBatchSize != 100 {
		t.Errorf("defaults = %+v", w.cfg)
	}
	if err := w.Handle("a", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil handler: %v", err)
	}
	if err := w.Handle("a", func(context.Context, *Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("a", func(context.Context, *Task) error { return nil }); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("duplicate handler: %v", err)
	}
	if err := w.Handle("b", func(context.Context, *Task) error { return nil }, WithConcurrency(-1)); err == nil {
		t.Error("negative concurrency accepted")
	}
	for _, rate := range []HandlerOption{WithRate(0, time.Second), WithRate(10_001, time.Second), WithRate(5, 0), WithRate(5, 1500*time.Microsecond)} {
		if err := w.Handle("c", func(context.Context, *Task) error { return nil }, rate); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "WithRate") {
			t.Errorf("a bad rate: %v, want ErrInvalidConfig naming WithRate", err)
		}
	}
}

func TestExponentialBackoff(t *testing.T) {
	t.Parallel()
	for attempt, want := range map[int]time.Duration{1: 2 * time.Second, 3: 8 * time.Second, 40: maxBackoff} {
		for range 50 {
			if d := Exponential(2 * time.Second)(attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: %s, want in [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}

// The default heartbeat is derived from the shortest lease: LeaseTimeout's
// without a database, a task type's once Start knows them.
func TestShortLeaseDerivesTheHeartbeat(t *testing.T) {
	t.Parallel()
	w, err := NewWorker(&Engine{}, Config{LeaseTimeout: 3 * time.Second, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if w.cfg.HeartbeatInterval != 500*time.Millisecond {
		t.Errorf("heartbeat for LeaseTimeout 3s: %s, want 500ms", w.cfg.HeartbeatInterval)
	}
	w = startWorker(t, newSQLiteEngine(t), Config{Logger: quietLogger()}, "thumbnail",
		func(context.Context, *Task) error { return nil }, WithLease(600*time.Millisecond))
	if w.cfg.HeartbeatInterval != 100*time.Millisecond {
		t.Errorf("derived heartbeat %s, want the lease / 6 = 100ms", w.cfg.HeartbeatInterval)
	}
}

// Handle refuses a task type that Enqueue would refuse: one rule for both,
// so a handler can never wait for tasks that cannot be stored.
func TestHandleRefusesWhatEnqueueRefuses(t *testing.T) {
	t.Parallel()
	w, err := NewWorker(newSQLiteEngine(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, *Task) error { return nil }
	for _, typ := range []string{"", "a b", "tâche", "tab\t", strings.Repeat("x", maxTaskTypeLen+1)} {
		err := w.Handle(typ, noop)
		if !errors.Is(err, ErrInvalidConfig) || checkTaskType(typ) == nil {
			t.Errorf("Handle(%.20q) = %v, want ErrInvalidConfig for a type Enqueue refuses too (%v)", typ, err, checkTaskType(typ))
		}
	}
	if err := w.Handle("import.csv:v2", noop); err != nil {
		t.Errorf("Handle of a type Enqueue accepts: %v", err)
	}
}
