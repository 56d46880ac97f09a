package runtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// An outage logs once when it starts, a "still failing" line per 10 s with
// the failures since the last one, and one line when it ends; its back-off
// stays within 25 ms..1 s.
func TestOutageReportsEachInterval(t *testing.T) {
	t.Parallel()
	clock := &steppedClock{now: time.Unix(0, 0)}
	var rec recorder
	o := newOutage("poll", Config{WorkerID: "w1", Logger: slog.New(&rec), Clock: clock}, time.Second)
	for range 25 { // 25 failures, 1 s apart
		if wait := o.failed(errors.New("connection refused")); wait > time.Second || wait < 25*time.Millisecond {
			t.Fatalf("back-off %s, want 25 ms..1 s", wait)
		}
		clock.now = clock.now.Add(time.Second)
	}
	o.succeeded()
	if still := rec.failures("leasegen: poll still failing"); len(still) != 2 || still[0] != 10 || still[1] != 10 {
		t.Errorf("still-failing lines count %v failures, want two lines of 10", still)
	}
	if back := rec.failures("leasegen: poll works again"); len(back) != 1 || back[0] != 25 {
		t.Errorf("works-again lines count %v failures, want one line of 25", back)
	}
}

// steppedClock is a clock a test moves by hand.
type steppedClock struct{ now time.Time }

func (c *steppedClock) Now() time.Time { return c.now }

// recorder is a slog handler that keeps its records.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}

// failures returns the "failures" attribute of each record with message
// msg, in order.
func (r *recorder) failures(msg string) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int64
	for _, rec := range r.records {
		if rec.Message != msg {
			continue
		}
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "failures" {
				out = append(out, a.Value.Int64())
			}
			return true
		})
	}
	return out
}
