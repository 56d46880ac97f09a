package drivertest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// Two tasks with one idempotency key: the work runs once, both succeed, and
// the second's result names the task that did the work.
func testRunIdempotentSkipsRecordedKey(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	var ran atomic.Int32
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"charge": func(ctx context.Context, task *runtime.Task) error {
			return runtime.RunIdempotent(ctx, task, string(task.Payload), func(ctx context.Context, tx *sql.Tx) error {
				ran.Add(1)
				_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects VALUES (?, ?, 'w')"), task.ID, task.Attempt)
				return err
			})
		},
	})
	first, err := b.Client.Enqueue(bg, "charge", []byte("order-1"))
	dbtest.Must(t, "enqueue", err)
	b.WaitStatus(t, first, runtime.StatusSuccess, 5*time.Second)
	second, err := b.Client.Enqueue(bg, "charge", []byte("order-1"))
	dbtest.Must(t, "enqueue", err)
	info := b.WaitStatus(t, second, runtime.StatusSuccess, 5*time.Second)
	if want := fmt.Sprintf(`skipped: task %d already did the work of idempotency key "order-1"`, first); info.Result != want {
		t.Errorf("the skipped task's result is %q, want %q", info.Result, want)
	}
	if info, _ := b.Client.Get(bg, first); info.Result != "" {
		t.Errorf("the task that did the work has result %q, want none", info.Result)
	}
	if ran.Load() != 1 || b.DB.Int(t, "SELECT COUNT(*) FROM effects") != 1 {
		t.Errorf("work ran %d times, %d effects; want once", ran.Load(), b.DB.Int(t, "SELECT COUNT(*) FROM effects"))
	}
}

// When the fence fails at completion, the handler's writes roll back; the
// recovered task runs again and commits once.
func testRunIdempotentLostLeaseRollsBack(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	var calls atomic.Int32
	var firstErr atomic.Value
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"charge": func(ctx context.Context, task *runtime.Task) error {
			if calls.Add(1) == 1 { // the lease runs out before the handler commits
				b.Expire(t, task.ID)
			}
			err := runtime.RunIdempotent(ctx, task, "k", func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects VALUES (?, ?, 'w')"), task.ID, task.Attempt)
				return err
			})
			if task.Attempt == 1 {
				firstErr.Store(err)
			}
			return err
		},
	})
	id := b.Enqueue(t, "charge")
	info := b.WaitStatus(t, id, runtime.StatusSuccess, 10*time.Second)
	if err, _ := firstErr.Load().(error); !errors.Is(err, runtime.ErrLeaseLost) {
		t.Errorf("first attempt returned %v, want ErrLeaseLost", err)
	}
	if info.Attempt != 2 || b.DB.Int(t, "SELECT COUNT(*) FROM effects") != 1 || b.DB.Int(t, "SELECT attempt FROM effects") != 2 {
		t.Errorf("attempt %d, effects %d: want one effect, from attempt 2", info.Attempt, b.DB.Int(t, "SELECT COUNT(*) FROM effects"))
	}
}

func testWithLeaseSetsTheTypesLease(t *testing.T, b *Bundle) {
	started := make(chan runtime.TaskID, 1)
	release := make(chan struct{})
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"slow": func(ctx context.Context, task *runtime.Task) error { started <- task.ID; <-release; return nil },
	}, runtime.WithLease(5*time.Second))
	id := b.Enqueue(t, "slow")
	<-started
	left := b.LeaseMillisLeft(t, id)
	close(release)
	if left < 4000 || left > 5000 {
		t.Errorf("lease ends in %dms, want about 5000", left)
	}
	w, err := runtime.NewWorker(b.Engine, Config())
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", w.Handle("short", func(context.Context, *runtime.Task) error { return nil }, runtime.WithLease(300*time.Millisecond)))
	if err := w.Start(bg); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("lease below twice the heartbeat: Start = %v, want ErrInvalidConfig", err)
	}
}
