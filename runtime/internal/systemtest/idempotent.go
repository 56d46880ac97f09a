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
	"github.com/leasegen/leasegen/runtime"
)

// Two tasks with one idempotency key: the work runs once, both succeed, and
// the second's result names the task that did the work.
func testRunIdempotentSkipsRecordedKey(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	var ran atomic.Int32
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"charge": func(ctx context.Context, task *runtime.Task) error {
			return runtime.RunIdempotent(ctx, task, strings.Trim(string(task.Payload), `"`), func(ctx context.Context, tx *sql.Tx) error {
				ran.Add(1)
				_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects VALUES (?, ?, 'w')"), task.ID, task.Attempt)
				return err
			})
		},
	})
	first, err := b.Client.Enqueue(bg, "charge", []byte(`"order-1"`))
	dbtest.Must(t, "enqueue", err)
	b.WaitStatus(t, first, runtime.StatusSuccess)
	second, err := b.Client.Enqueue(bg, "charge", []byte(`"order-1"`))
	dbtest.Must(t, "enqueue", err)
	info := b.WaitStatus(t, second, runtime.StatusSuccess)
	if want := fmt.Sprintf(`skipped: task %d already did the work of idempotency key "order-1"`, first); info.Result != want {
		t.Errorf("the skipped task's result is %q, want %q", info.Result, want)
	}
	if info, _ := b.Client.Get(bg, first); info.Result != "" || info.WorkKey != "order-1" {
		t.Errorf("the task that did the work has result %q and work key %q, want none and order-1", info.Result, info.WorkKey)
	}
	if info, _ := b.Client.Get(bg, second); info.WorkKey != "" {
		t.Errorf("the task that skipped the work has work key %q, want none: the key names the work done", info.WorkKey)
	}
	// An operator finds the task that did the work by its key, whichever
	// kind of key it is.
	byKey, err := b.Client.List(bg, runtime.Filter{Key: "order-1"})
	if err != nil || len(byKey) != 1 || byKey[0].ID != first || byKey[0].WorkKey != "order-1" {
		t.Errorf("List by the work key = %+v, %v; want task %d", byKey, err, first)
	}
	if other, err := b.Client.List(bg, runtime.Filter{Key: "order-1", Type: "refund"}); err != nil || len(other) != 0 {
		t.Errorf("List by the work key and another type = %+v, %v; want nothing", other, err)
	}
	if ran.Load() != 1 || b.DB.Int(t, "SELECT COUNT(*) FROM effects") != 1 {
		t.Errorf("work ran %d times, %d effects; want once", ran.Load(), b.DB.Int(t, "SELECT COUNT(*) FROM effects"))
	}
}

// When the fence fails at completion, the handler's writes roll back; the
// recovered task runs again and commits once. The first execution is not
// always attempt 1: on a slow machine a claim whose reply comes too late
// hands its tasks back unstarted, and the next claim is attempt 2.
func testRunIdempotentLostLeaseRollsBack(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	var calls atomic.Int32
	type outcome struct {
		attempt int
		err     error
	}
	expired := make(chan outcome, 1)
	// The fenced completion or a renewal, not a stall, finds the lease gone.
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"charge": func(ctx context.Context, task *runtime.Task) error {
			first := calls.Add(1) == 1
			if first { // the lease runs out before the handler commits
				b.Expire(t, task.ID)
			}
			err := runtime.RunIdempotent(ctx, task, "k", func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects VALUES (?, ?, 'w')"), task.ID, task.Attempt)
				return err
			})
			if first {
				expired <- outcome{task.Attempt, err}
			}
			return err
		},
	})
	id := b.Enqueue(t, "charge")
	info := b.WaitStatus(t, id, runtime.StatusSuccess)
	var lost outcome
	select {
	case lost = <-expired:
	case <-time.After(10 * time.Second):
		t.Fatal("the execution whose lease ran out has not returned 10s after the task succeeded")
	}
	if !errors.Is(lost.err, runtime.ErrLeaseLost) {
		t.Errorf("the execution whose lease ran out (attempt %d) returned %v, want ErrLeaseLost", lost.attempt, lost.err)
	}
	effects, from := b.DB.Int(t, "SELECT COUNT(*) FROM effects"), b.DB.Int(t, "SELECT MAX(attempt) FROM effects")
	if info.Attempt <= lost.attempt || effects != 1 || from != info.Attempt {
		t.Errorf("succeeded at attempt %d, %d effects from attempt %d; want one effect, from the attempt after %d that succeeded",
			info.Attempt, effects, from, lost.attempt)
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
