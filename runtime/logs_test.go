package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBook is a slog handler's output, safe for concurrent writers.
type logBook struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBook) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the records logged so far with message "leasegen: "+msg,
// or, for a msg ending in "*", starting with it.
func (l *logBook) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
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

func (l *logBook) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Each failed attempt is logged once: WARN while the task will run again
// (with its attempt, max attempts, error and next run), ERROR when it failed
// for good or its handler panicked, with the stack.
func TestFailuresAreLogged(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		var book logBook
		cfg := testConfig()
		cfg.Logger = book.logger()
		retried := b.enqueue(t, "flaky", WithMaxAttempts(3))
		permanent := b.enqueue(t, "broken")
		panicking := b.enqueue(t, "panics", WithMaxAttempts(2))
		var flakyRuns sync.Map
		b.startWorker(t, cfg, map[string]HandlerFunc{
			"flaky": func(_ context.Context, task *Task) error {
				if _, again := flakyRuns.LoadOrStore(task.Attempt, true); task.Attempt < 3 && !again {
					return errors.New("upstream 503")
				}
				return nil
			},
			"broken": func(context.Context, *Task) error { return Permanent(errors.New("bad input")) },
			"panics": func(context.Context, *Task) error { panic("nil map") },
		}, WithBackoff(fastBackoff))
		b.waitStatus(t, retried, StatusSuccess, 10*time.Second)
		b.waitStatus(t, permanent, StatusFailed, 10*time.Second)
		b.waitStatus(t, panicking, StatusFailed, 10*time.Second)

		warns := book.lines(t, "task attempt failed; it will run again")
		if len(warns) != 2 {
			t.Fatalf("%d retry lines, want 2 (attempts 1 and 2 of the flaky task)", len(warns))
		}
		w := warns[0]
		if w["level"] != "WARN" || w["task_type"] != "flaky" || w["attempts_used"] != 1.0 || w["max_attempts"] != 3.0 || w["err"] != "upstream 503" || w["next_run_in"] == nil {
			t.Errorf("retry line %v: want WARN with task_type, attempts_used 1, max_attempts 3, err and next_run_in", w)
		}
		if got := book.lines(t, "task failed for good"); len(got) != 1 || got[0]["level"] != "ERROR" || got[0]["task_type"] != "broken" {
			t.Errorf("failed-for-good lines %v, want one ERROR for the broken task", got)
		}
		panics := book.lines(t, "handler panicked*")
		if len(panics) != 2 || panics[1]["level"] != "ERROR" || !strings.Contains(panics[1]["msg"].(string), "failed for good") ||
			!strings.Contains(panics[1]["err"].(string), "nil map") || !strings.Contains(panics[1]["err"].(string), "goroutine") {
			t.Errorf("panic lines %v, want two ERRORs (retry, then failed for good) with the stack", panics)
		}
	})
}
