package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver"
)

// runningRows counts the tasks the database holds RUNNING.
func runningRows(t *testing.T, c *Client) int {
	t.Helper()
	st, err := c.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tc := range st.Counts {
		if tc.Status == StatusRunning {
			n += tc.Tasks
		}
	}
	return n
}

// pipelinedWorker starts a one-slot worker whose claim pipeline believes
// its handlers are quick, with a handler that blocks until release closes.
func pipelinedWorker(t *testing.T, e *Engine, release <-chan struct{}, clock Clock) *Worker {
	t.Helper()
	w, err := NewWorker(e, Config{MaxConcurrency: 1, PollInterval: 20 * time.Millisecond, Logger: quietLogger(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	w.prefetch.avgRun.Store(int64(time.Microsecond))
	w.prefetch.avgClaim.Store(int64(time.Millisecond))
	if err := w.Handle("block", func(ctx context.Context, _ *Task) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(bg); err != nil {
		t.Fatal(err)
	}
	return w
}

func enqueueBlocking(t *testing.T, c *Client, n int) []TaskID {
	t.Helper()
	ids := make([]TaskID, n)
	for i := range ids {
		id, err := c.Enqueue(bg, "block", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// waitRunning waits until want tasks are RUNNING (claimed ahead or
// started).
func waitRunning(t *testing.T, c *Client, want int) {
	t.Helper()
	bellOf(c).Await(t, testwait.Bound, func() bool { return runningRows(t, c) == want }, func() string {
		return fmt.Sprintf("%d tasks RUNNING, want %d", runningRows(t, c), want)
	})
}

// Tasks claimed ahead of a busy slot go back unstarted, without using an
// attempt, once they waited maxReadyWait, and the worker stops claiming
// ahead: it holds only its running task until that returns. All run once.
func TestReadyTasksGoBackWhenTheSlotStaysBusy(t *testing.T) {
	e := newSQLiteEngine(t)
	c, _ := NewClient(e, ClientConfig{})
	ids := enqueueBlocking(t, c, 6)
	release := make(chan struct{})
	w := pipelinedWorker(t, e, release, nil)
	t.Cleanup(func() { _ = w.Stop(bg) })
	waitRunning(t, c, 6) // one running, five ready
	waitRunning(t, c, 1) // handed back after maxReadyWait
	time.Sleep(3 * maxReadyWait / 2)
	if n := runningRows(t, c); n != 1 {
		t.Errorf("%d tasks RUNNING after the hand-back, want 1: the worker claimed ahead again behind a busy slot", n)
	}
	close(release)
	for _, id := range ids {
		info := waitStatus(t, c, id, StatusSuccess)
		if info.AttemptsUsed != 1 {
			t.Errorf("task %d used %d attempts, want 1: handing back a ready task uses none", id, info.AttemptsUsed)
		}
	}
	// A task reads SUCCESS a moment before its worker counts it: Stop
	// returns once every execution ended, and with it every count.
	if err := w.Stop(bg); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Released < 5 || s.Completed != 6 {
		t.Errorf("Stats: %d released, %d completed; want at least 5 and 6", s.Released, s.Completed)
	}
}

// Stop hands the ready tasks back at once, so that other workers can run
// them while the running one drains. The worker's clock stands still: its
// ready tasks never wait out maxReadyWait, so only Stop can hand them back.
func TestStopHandsReadyTasksBack(t *testing.T) {
	e := newSQLiteEngine(t)
	c, _ := NewClient(e, ClientConfig{})
	enqueueBlocking(t, c, 5)
	release := make(chan struct{})
	w := pipelinedWorker(t, e, release, stoppedClock{time.Now()})
	waitRunning(t, c, 5)
	stopped := make(chan error, 1)
	go func() { stopped <- w.Stop(bg) }()
	waitRunning(t, c, 1)
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	st, _ := c.Stats(bg)
	queued := 0
	for _, tc := range st.Counts {
		if tc.Status == StatusQueued {
			queued += tc.Tasks
		}
	}
	if queued != 4 {
		t.Errorf("%d tasks QUEUED after Stop, want the 4 that waited for the slot", queued)
	}
}

func waitStatus(t *testing.T, c *Client, id TaskID, want Status) TaskInfo {
	t.Helper()
	var info TaskInfo
	bellOf(c).Await(t, testwait.Bound, func() bool {
		var err error
		if info, err = c.Get(bg, id); err != nil {
			t.Fatal(err)
		}
		return info.Status == want
	}, func() string { return fmt.Sprintf("task %d is %s, want %s", id, info.Status, want) })
	return info
}

// A worker claims for its free slots and its ready queue's room, and no
// further than the outcomes that may wait for their write allow: as many
// as the slots and the ready queue hold. So claims run ahead of quick
// handlers while the completion loop keeps up, and stop when it lags.
func TestFreeSlotsBoundTheOutcomesThatWait(t *testing.T) {
	w, err := NewWorker(newSQLiteEngine(t), Config{MaxConcurrency: 10, Prefetch: 20, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	w.prefetch.avgRun.Store(int64(time.Microsecond))
	w.prefetch.avgClaim.Store(int64(time.Millisecond)) // quick handlers: the ready queue's target is its limit, 20
	for _, c := range []struct {
		name                   string
		running, ready, active int
		want                   int
	}{
		{"idle", 0, 0, 0, 30},
		{"slots and ready queue full", 10, 20, 30, 0},
		{"half the slots busy", 5, 0, 5, 25},
		{"45 outcomes waiting", 0, 0, 45, 15},
		{"as many outcomes waiting as slots and queue hold", 0, 0, 60, 0},
		{"busy slots, outcomes waiting", 10, 0, 50, 10},
	} {
		w.running, w.ready = c.running, make([]readyTask, c.ready)
		w.active = make(map[driver.LeaseRef]*execution, c.active)
		for i := range c.active {
			w.active[driver.LeaseRef{ID: TaskID(i + 1), Attempt: 1}] = nil
		}
		if got := w.freeSlots(); got != c.want {
			t.Errorf("%s (%d running, %d ready, %d active): freeSlots = %d, want %d", c.name, c.running, c.ready, c.active, got, c.want)
		}
	}
}

// stoppedClock always tells the same time.
type stoppedClock struct{ at time.Time }

func (c stoppedClock) Now() time.Time { return c.at }
