package runtime

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
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

// A claim whose reply comes after its leases' self-fence point starts no
// handler: its tasks go back without using an attempt, and a later claim
// runs them.
func TestLateClaimStartsNoHandler(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	client, err := NewClient(e, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	late, err := client.Enqueue(bg, "late", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	handler := func(context.Context, *Task) error { calls.Add(1); return nil }
	cfg := Config{LeaseTimeout: time.Second, PollInterval: 50 * time.Millisecond, Logger: quietLogger()}
	w := startWorker(t, e, cfg, "other", handler)
	req := driver.ClaimRequest{Owner: w.ID(), Lease: cfg.LeaseTimeout, Types: []string{"late"}, Max: 1}
	claimed, err := e.driver.Claim(bg, req)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %d tasks, %v; want 1", len(claimed), err)
	}
	sent := w.cfg.Clock.Now().Add(-cfg.LeaseTimeout) // its reply came after the whole lease
	if started := newPoller(w, req).startClaimed(bg, claimed, sent, req); started != 0 || calls.Load() != 0 {
		t.Fatalf("a claim sent a lease ago started %d executions (%d handler calls), want none", started, calls.Load())
	}
	if s := w.Stats(); s.LateClaims != 1 || s.Claimed != 0 {
		t.Errorf("stats %+v, want 1 late claim and no execution", s)
	}
	info, err := client.Get(bg, late)
	if err != nil || info.Status != StatusQueued || info.AttemptsUsed != 0 {
		t.Errorf("after the late claim: %+v, %v; want QUEUED with no attempt used", info, err)
	}

	startWorker(t, e, cfg, "late", handler)
	info = waitStatus(t, client, late, StatusSuccess)
	if info.Status != StatusSuccess || calls.Load() != 1 || info.AttemptsUsed != 1 {
		t.Errorf("then: %s after %d handler calls with %d attempts used, %v; want SUCCESS, 1 and 1", info.Status, calls.Load(), info.AttemptsUsed, err)
	}
}

// A poll fills the free slots: after a full batch it claims again at once,
// after a short one it waits minPollWait; once the queue is empty it only
// probes, and its idle waits double up to PollInterval.
func TestPollerClaimsThenBacksOff(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	enqueueN(t, e, "a", 3)
	clock := &steppedClock{now: time.Now()}
	w := unstartedWorker(t, e)
	w.cfg.Clock, w.cfg.PollInterval = clock, 80*time.Millisecond
	p := newPoller(w, driver.ClaimRequest{Owner: w.ID(), Lease: time.Minute, Types: []string{"a"}})
	var started []driver.ClaimedTask
	p.freeSlots = func() int { return 2 }
	p.start = func(claimed []driver.ClaimedTask, _ time.Time, _ driver.ClaimRequest) {
		started = append(started, claimed...)
	}

	var waits []time.Duration
	for woken := true; len(waits) < 7; woken = false {
		wait, stopped := p.poll(bg, nil, woken)
		if stopped {
			t.Fatal("the poll stopped")
		}
		waits = append(waits, wait)
		clock.now = clock.now.Add(wait + 100*time.Millisecond) // past PollInterval: no work found recently
	}
	want := []time.Duration{0, minPollWait, minPollWait, 2 * minPollWait, 4 * minPollWait, 80 * time.Millisecond, 80 * time.Millisecond}
	if len(started) != 3 || !slices.Equal(waits, want) {
		t.Errorf("started %d tasks, waits %v; want 3 and %v", len(started), waits, want)
	}
}
