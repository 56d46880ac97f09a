package systemtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// outcomes lists a history's outcomes, space-separated.
func outcomes(attempts []runtime.AttemptInfo) string {
	out := make([]string, len(attempts))
	for i, a := range attempts {
		out[i] = a.Outcome
	}
	return strings.Join(out, " ")
}

// A task's history keeps every attempt: a failure, a panic, a snooze, a
// lease that expired and was recovered, the success that ended it, each
// with its worker, instants and run time; a task failed for good keeps
// its last attempt, and how it failed, through Retry; AttemptHistory bounds what is kept; retention
// deletes the history with its task.
func testAttemptHistory(t *testing.T, b *Bundle) {
	var calls atomic.Int32
	running := make(chan struct{}, 1)
	cfg := Config()
	cfg.AttemptHistory = 3
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"steps": func(ctx context.Context, _ *runtime.Task) error {
			switch calls.Add(1) {
			case 1:
				return errors.New("boom <1>")
			case 2:
				panic("kaboom")
			case 3:
				return runtime.Snooze(10 * time.Millisecond)
			}
			return nil
		},
		"once":   func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("bad input")) },
		"panics": func(context.Context, *runtime.Task) error { panic("always") },
		"cancel-me": func(ctx context.Context, task *runtime.Task) error {
			if task.Attempt == 1 {
				running <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
		"five": func(_ context.Context, task *runtime.Task) error {
			if task.Attempt < 5 {
				return errors.New("not yet")
			}
			return nil
		},
	}, runtime.WithBackoff(FastBackoff))
	steps := b.Enqueue(t, "steps", runtime.WithMaxAttempts(5))
	info := b.WaitStatus(t, steps, runtime.StatusSuccess)
	info, err := b.Client.Get(bg, steps)
	dbtest.Must(t, "get", err)
	if got := outcomes(info.Attempts); got != "error panic snoozed success" {
		t.Fatalf("history of steps = %q, want error panic snoozed success (%+v)", got, info.Attempts)
	}
	for i, a := range info.Attempts {
		if a.Attempt != i+1 || a.Worker != w.ID() || a.StartedAt.IsZero() || a.FinishedAt.Before(a.StartedAt) || a.Duration < 0 {
			t.Errorf("attempt %d = %+v", i+1, a)
		}
	}
	if a := info.Attempts; a[0].Error != "boom <1>" || !strings.Contains(a[1].Error, "kaboom") {
		t.Errorf("errors in the history: %q, %q", a[0].Error, a[1].Error)
	}

	if a := info.Attempts; a[1].Duration <= 0 { // a handler that errs at once may take under the microsecond stored
		t.Errorf("an attempt that panicked at once lasted %v, want its run time", a[1].Duration)
	}

	once := b.Enqueue(t, "once", runtime.WithMaxAttempts(1))
	b.WaitStatus(t, once, runtime.StatusFailed)
	dbtest.Must(t, "retry", b.Client.Retry(bg, once))
	b.WaitStatus(t, once, runtime.StatusFailed)
	if info, _ := b.Client.Get(bg, once); outcomes(info.Attempts) != "error error" || info.Attempts[0].Error != "permanent: bad input" {
		t.Errorf("history of a retried failure = %+v, want two attempts that failed with an error", info.Attempts)
	}

	// A task cancelled while it ran, then retried, keeps the attempt that
	// ended it with the instant it ended, not the retry's.
	cancelled := b.Enqueue(t, "cancel-me")
	<-running
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, cancelled))
	ended := b.WaitStatus(t, cancelled, runtime.StatusCancelled)
	var retryAt time.Time
	testwait.Until(t, func() bool { // the database's clock moves on before the retry
		var err error
		retryAt, err = b.Driver.Tables().Now(bg)
		dbtest.Must(t, "now", err)
		return retryAt.Sub(ended.FinishedAt) > 20*time.Millisecond
	}, func() string { return "the database's clock stands still" })
	dbtest.Must(t, "retry", b.Client.Retry(bg, cancelled))
	info, err = b.Client.Get(bg, cancelled)
	dbtest.Must(t, "get", err)
	if len(info.Attempts) == 0 || info.Attempts[0].Outcome != "cancelled" {
		t.Errorf("history of a retried cancellation = %+v, want the cancelled attempt", info.Attempts)
	} else if first := info.Attempts[0]; first.FinishedAt.Before(ended.FinishedAt.Add(-time.Millisecond)) || !first.FinishedAt.Before(retryAt) {
		t.Errorf("the cancelled attempt finished at %v in the history, the task at %v, the retry came at %v: want its end, not the retry's instant",
			first.FinishedAt, ended.FinishedAt, retryAt)
	}

	// A task that panics at every attempt says so at every attempt.
	panics := b.Enqueue(t, "panics", runtime.WithMaxAttempts(2))
	b.WaitStatus(t, panics, runtime.StatusFailed)
	if info, _ := b.Client.Get(bg, panics); outcomes(info.Attempts) != "panic panic" {
		t.Errorf("history of a task that always panics = %q, want panic panic", outcomes(info.Attempts))
	}

	five := b.Enqueue(t, "five", runtime.WithMaxAttempts(5))
	b.WaitStatus(t, five, runtime.StatusSuccess)
	if info, _ := b.Client.Get(bg, five); outcomes(info.Attempts) != "error error error success" || info.Attempts[0].Attempt != 2 {
		t.Errorf("history with AttemptHistory 3 = %+v, want attempts 2-4 failed and 5 succeeded", info.Attempts)
	}

	// A lease that expires: its task is recovered, runs again and succeeds.
	lost := b.Enqueue(t, "lost")
	if claimed := b.Claim(t, "gone-worker", 1, "lost"); len(claimed) != 1 {
		t.Fatalf("claimed %v", claimed)
	}
	b.Expire(t, lost)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"lost": func(context.Context, *runtime.Task) error { return nil }})
	b.WaitStatus(t, lost, runtime.StatusSuccess)
	// Recovery records the lost attempt after it requeued the task: the
	// task may run and succeed first. Wait for the record.
	var recovered runtime.TaskInfo
	b.Signals.Await(t, testwait.Bound, func() bool {
		recovered, _ = b.Client.Get(bg, lost)
		return len(recovered.Attempts) == 2
	}, func() string {
		return fmt.Sprintf("history of a recovered task = %+v, want two attempts", recovered.Attempts)
	})
	if outcomes(recovered.Attempts) != "lease_lost success" || recovered.Attempts[0].Worker != "gone-worker" {
		t.Errorf("history of a recovered task = %+v, want lease_lost by gone-worker, then success", recovered.Attempts)
	}

	if stored, err := b.Driver.Tables().AttemptList(bg, lost); err != nil || len(stored) == 0 {
		t.Fatalf("attempts stored of the recovered task: %v, %v; want its lost attempt", stored, err)
	}
	_, err = b.Client.Purge(bg, 0, 100)
	dbtest.Must(t, "purge", err)
	if orphans, err := b.Driver.Tables().AttemptOrphans(bg, 100); err != nil || len(orphans) != 0 {
		t.Errorf("tasks with attempts left after every task was purged: %v, %v", orphans, err)
	}
}
