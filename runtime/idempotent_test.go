package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// Two tasks with one idempotency key: the work runs once, both succeed, and
// the second's result names the task that did the work.
func TestRunIdempotentSkipsRecordedKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		b.db.Exec(t, effectsTable)
		var ran atomic.Int32
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"charge": func(ctx context.Context, task *Task) error {
				return RunIdempotent(ctx, task, string(task.Payload), func(ctx context.Context, tx *sql.Tx) error {
					ran.Add(1)
					_, err := tx.ExecContext(ctx, "INSERT INTO effects VALUES (?, ?, 'w')", task.ID, task.Attempt)
					return err
				})
			},
		})
		first, err := b.client.Enqueue(bg, "charge", []byte("order-1"))
		dbtest.Must(t, "enqueue", err)
		b.waitStatus(t, first, StatusSuccess, 5*time.Second)
		second, err := b.client.Enqueue(bg, "charge", []byte("order-1"))
		dbtest.Must(t, "enqueue", err)
		info := b.waitStatus(t, second, StatusSuccess, 5*time.Second)
		if want := fmt.Sprintf(`skipped: task %d already did the work of idempotency key "order-1"`, first); info.Result != want {
			t.Errorf("the skipped task's result is %q, want %q", info.Result, want)
		}
		if info, _ := b.client.Get(bg, first); info.Result != "" {
			t.Errorf("the task that did the work has result %q, want none", info.Result)
		}
		if ran.Load() != 1 || b.db.Int(t, "SELECT COUNT(*) FROM effects") != 1 {
			t.Errorf("work ran %d times, %d effects; want once", ran.Load(), b.db.Int(t, "SELECT COUNT(*) FROM effects"))
		}
	})
}

// When the fence fails at completion, the handler's writes roll back; the
// recovered task runs again and commits once.
func TestRunIdempotentLostLeaseRollsBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		b.db.Exec(t, effectsTable)
		var calls atomic.Int32
		var firstErr atomic.Value
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"charge": func(ctx context.Context, task *Task) error {
				if calls.Add(1) == 1 { // the lease runs out before the handler commits
					b.expire(t, task.ID)
				}
				err := RunIdempotent(ctx, task, "k", func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO effects VALUES (?, ?, 'w')", task.ID, task.Attempt)
					return err
				})
				if task.Attempt == 1 {
					firstErr.Store(err)
				}
				return err
			},
		})
		id := b.enqueue(t, "charge")
		info := b.waitStatus(t, id, StatusSuccess, 10*time.Second)
		if err, _ := firstErr.Load().(error); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("first attempt returned %v, want ErrLeaseLost", err)
		}
		if info.Attempt != 2 || b.db.Int(t, "SELECT COUNT(*) FROM effects") != 1 || b.db.Int(t, "SELECT attempt FROM effects") != 2 {
			t.Errorf("attempt %d, effects %d: want one effect, from attempt 2", info.Attempt, b.db.Int(t, "SELECT COUNT(*) FROM effects"))
		}
	})
}

func TestWithLeaseSetsTheTypesLease(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		started := make(chan TaskID, 1)
		release := make(chan struct{})
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"slow": func(ctx context.Context, task *Task) error { started <- task.ID; <-release; return nil },
		}, WithLease(5*time.Second))
		id := b.enqueue(t, "slow")
		<-started
		left := b.msUntil(t, "due_at", id)
		close(release)
		if left < 4000 || left > 5000 {
			t.Errorf("lease ends in %dms, want about 5000", left)
		}
		w, err := NewWorker(b.engine, testConfig())
		dbtest.Must(t, "worker", err)
		dbtest.Must(t, "handle", w.Handle("short", func(context.Context, *Task) error { return nil }, WithLease(300*time.Millisecond)))
		if err := w.Start(bg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("lease below twice the heartbeat: Start = %v, want ErrInvalidConfig", err)
		}
	})
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
