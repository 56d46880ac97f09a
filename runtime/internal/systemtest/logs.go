package systemtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// LogBook is a slog handler's output, safe for concurrent writers; it
// rings its bell at each line.
type LogBook struct {
	testwait.Text
}

// WaitLines waits until n lines of msg were logged, failing t after
// testwait.Bound.
func (l *LogBook) WaitLines(t *testing.T, msg string, n int) {
	t.Helper()
	l.Await(t, testwait.Bound, func() bool { return len(l.Lines(t, msg)) >= n }, func() string {
		return fmt.Sprintf("%d lines %q logged, want %d", len(l.Lines(t, msg)), msg, n)
	})
}

// Lines returns the records logged so far with message "leasegen: "+msg,
// or, for a msg ending in "*", starting with it.
func (l *LogBook) Lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var rec map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got := strings.TrimPrefix(rec["msg"].(string), "leasegen: ")
		if got == msg || (strings.HasSuffix(msg, "*") && strings.HasPrefix(got, strings.TrimSuffix(msg, "*"))) {
			out = append(out, rec)
		}
	}
	return out
}

func (l *LogBook) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Each failed attempt is logged once: WARN while the task will run again
// (with its attempt, max attempts, error and next run), ERROR when it failed
// for good or its handler panicked, with the stack.
func testFailuresAreLogged(t *testing.T, b *Bundle) {
	var book LogBook
	// The lines counted below are the handlers' failures alone, not a
	// loaded machine's stalls.
	cfg := Config()
	cfg.Logger = book.Logger()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the worker's log:\n%s", book.String())
		}
	})
	retried := b.Enqueue(t, "flaky", runtime.WithMaxAttempts(3))
	permanent := b.Enqueue(t, "broken")
	panicking := b.Enqueue(t, "panics", runtime.WithMaxAttempts(2))
	var flakyRuns sync.Map
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"flaky": func(_ context.Context, task *runtime.Task) error {
			if _, again := flakyRuns.LoadOrStore(task.Attempt, true); task.Attempt < 3 && !again {
				return errors.New("upstream 503")
			}
			return nil
		},
		"broken": func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("bad input")) },
		"panics": func(context.Context, *runtime.Task) error { panic("nil map") },
	}, runtime.WithBackoff(FastBackoff))
	b.WaitStatus(t, retried, runtime.StatusSuccess)
	b.WaitStatus(t, permanent, runtime.StatusFailed)
	b.WaitStatus(t, panicking, runtime.StatusFailed)

	// A task's status changes before its worker logs the write's outcome.
	book.WaitLines(t, "handler panicked*", 2)
	book.WaitLines(t, "task failed for good", 1)
	warns := book.Lines(t, "task attempt failed; it will run again")
	if len(warns) != 2 {
		t.Fatalf("%d retry lines, want 2 (attempts 1 and 2 of the flaky task)", len(warns))
	}
	w := warns[0]
	if w["level"] != "WARN" || w["task_type"] != "flaky" || w["attempts_used"] != 1.0 || w["max_attempts"] != 3.0 || w["err"] != "upstream 503" || w["next_run_in"] == nil {
		t.Errorf("retry line %v: want WARN with task_type, attempts_used 1, max_attempts 3, err and next_run_in", w)
	}
	if got := book.Lines(t, "task failed for good"); len(got) != 1 || got[0]["level"] != "ERROR" || got[0]["task_type"] != "broken" {
		t.Errorf("failed-for-good lines %v, want one ERROR for the broken task", got)
	}
	panics := book.Lines(t, "handler panicked*")
	if len(panics) != 2 || panics[1]["level"] != "ERROR" || !strings.Contains(panics[1]["msg"].(string), "failed for good") ||
		!strings.Contains(panics[1]["err"].(string), "nil map") || !strings.Contains(panics[1]["err"].(string), "goroutine") {
		t.Errorf("panic lines %v, want two ERRORs (retry, then failed for good) with the stack", panics)
	}
}

// A database outage under a busy worker logs one line when polls start to
// fail and one when they work again, and the polls back off meanwhile
// instead of retrying at the busy pace (an 8 s cut used to log 97 lines).
func testOutageLogsOnceAndBacksOff(t *testing.T, h *drivertest.Harness) {
	b, server := privateServer(t, h)
	var book LogBook
	cfg := Config()
	cfg.Logger, cfg.PollInterval = book.Logger(), time.Second
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"work": func(context.Context, *runtime.Task) error { return nil },
	})
	feeding, stopFeed := context.WithCancel(bg)
	defer stopFeed()
	go func() { // keep the worker busy: each local enqueue also wakes it
		for feeding.Err() == nil {
			_, _ = b.Client.Enqueue(feeding, "work", nil)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	waitFinished(t, b, "work", 20, "tasks running before the outage")

	server.Kill()
	time.Sleep(3 * time.Second)
	server.Start()
	waitFinished(t, b, "work", b.Signals.Finished("work")+20, "tasks running after the outage")

	failed := book.Lines(t, "poll failed; retrying with back-off")
	back := book.Lines(t, "poll works again")
	if len(failed) != 1 || failed[0]["level"] != "ERROR" || failed[0]["err"] == nil {
		t.Errorf("%d lines saying polls fail, want one ERROR with the error: %v", len(failed), failed)
	}
	if len(back) != 1 || back[0]["level"] != "INFO" {
		t.Fatalf("%d lines saying polls work again, want one INFO: %v", len(back), back)
	}
	// Waits of 50 ms doubling to PollInterval, with jitter: at most about
	// ten polls in a 3 s outage (plus the server's start-up).
	if n := back[0]["failures"].(float64); n < 2 || n > 16 {
		t.Errorf("%v failed polls during a 3 s outage, want a few: the poller did not back off", n)
	}
	t.Logf("a 3 s outage: %d log lines about polls, %v failed polls, back after %v", len(failed)+len(back), back[0]["failures"], time.Duration(back[0]["outage"].(float64)))
	if still := book.Lines(t, "poll still failing"); len(still) > 1 {
		t.Errorf("%d 'still failing' lines in a short outage, want at most one", len(still))
	}
}

// A handler that ignores its context and returns after Stop handed its task
// back logs that its outcome is discarded, not that a completion failed.
func testHandlerReturningAfterStopIsNotAFailure(t *testing.T, b *Bundle) {
	var book LogBook
	cfg := Config()
	cfg.Logger = book.Logger()
	id := b.Enqueue(t, "stubborn")
	running, stopped, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
		"stubborn": func(context.Context, *runtime.Task) error {
			close(running)
			<-stopped // ignores its context, and returns once Stop handed its task back
			defer close(returned)
			return nil
		},
	})
	<-running
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	err := w.Stop(ctx)
	close(stopped)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stop: %v, want it to hand the task back", err)
	}
	<-returned
	book.WaitLines(t, "handler returned after Stop handed its task back*", 1)
	if n := len(book.Lines(t, "handler returned after Stop handed its task back*")); n != 1 {
		t.Errorf("%d lines say the outcome was discarded, want 1", n)
	}
	if got := book.Lines(t, "complete failed*"); len(got) != 0 {
		t.Errorf("log says a completion failed after Stop requeued the task: %v", got)
	}
	if info, _ := b.Client.Get(bg, id); info.Status != runtime.StatusQueued {
		t.Errorf("task %s after Stop handed it back, want QUEUED", info.Status)
	}
}

// waitFinished waits until n executions of taskType have ended on b's
// workers.
func waitFinished(t *testing.T, b *Bundle, taskType string, n int, what string) {
	t.Helper()
	b.Signals.Await(t, testwait.Bound, func() bool { return b.Signals.Finished(taskType) >= n }, func() string {
		return fmt.Sprintf("%s: %d of %s finished, want %d", what, b.Signals.Finished(taskType), taskType, n)
	})
}
