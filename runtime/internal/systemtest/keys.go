package systemtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// startLog records the order in which handlers started, by task.
type startLog struct {
	mu     sync.Mutex
	starts []runtime.TaskID
}

func (l *startLog) add(id runtime.TaskID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.starts = append(l.starts, id)
}

func (l *startLog) ran(id runtime.TaskID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.starts, id)
}

func (l *startLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.starts)
}

// before reports whether a started before b, both having started.
func (l *startLog) before(a, b runtime.TaskID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, j := slices.Index(l.starts, a), slices.Index(l.starts, b)
	return i >= 0 && j >= 0 && i < j
}

// checkStatuses fails t unless each task has its wanted status now.
func checkStatuses(t *testing.T, b *Bundle, want map[runtime.TaskID]runtime.Status) {
	t.Helper()
	for id, status := range want {
		info, err := b.Client.Get(bg, id)
		dbtest.Must(t, "get", err)
		if info.Status != status {
			t.Errorf("task %d is %s, want %s", id, info.Status, status)
		}
	}
}

// A key's limit holds: of six tasks under a limit of two, the first two
// are queued at the enqueue and four wait, two run while the others wait,
// and the rest run as running ones end; the key's row goes with its last
// task. (Slots go in enqueue order, but tasks that got theirs together
// start in any order: the sequential cases check the order.)
func testKeyConcurrencyLimit(t *testing.T, b *Bundle) {
	var ids []runtime.TaskID
	for range 6 {
		ids = append(ids, b.Enqueue(t, "wide", runtime.WithConcurrencyKey("account-1", 2)))
	}
	checkStatuses(t, b, map[runtime.TaskID]runtime.Status{
		ids[0]: runtime.StatusQueued, ids[1]: runtime.StatusQueued, ids[2]: runtime.StatusWaiting, ids[5]: runtime.StatusWaiting,
	})
	var log startLog
	release := make(chan struct{})
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"wide": func(ctx context.Context, task *runtime.Task) error {
			log.add(task.ID)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	})
	b.Signals.Await(t, testwait.Bound, func() bool { return log.count() == 2 }, func() string { return fmt.Sprintf("%d started, want 2", log.count()) })
	counts := b.StatusCounts(t)
	if counts[runtime.StatusRunning] != 2 || counts[runtime.StatusWaiting] != 4 {
		t.Errorf("with the first two running: %v, want 2 RUNNING and 4 WAITING", counts)
	}
	keys, err := b.Client.Keys(bg, 10)
	dbtest.Must(t, "list keys", err)
	if len(keys) != 1 || keys[0].Running != 2 || keys[0].Waiting != 4 || !keys[0].AtLimit() {
		t.Errorf("keys: %+v, want account-1 at its limit of 2 with 2 running and 4 waiting", keys)
	}
	close(release)
	for _, id := range ids {
		b.WaitStatus(t, id, runtime.StatusSuccess)
	}
	// The last task's release deletes the key's row.
	b.Signals.Await(t, testwait.Bound, func() bool {
		keys, err = b.Client.Keys(bg, 10)
		dbtest.Must(t, "list keys", err)
		return len(keys) == 0
	}, func() string { return fmt.Sprintf("keys after every task ended: %+v, want none", keys) })
}

// A sequence that blocks on failure holds its key with the failed task
// until it is discarded; one that continues hands the key on; a waiting
// task cancelled never runs and the ones behind it do.
func testKeySequenceFailureRules(t *testing.T, b *Bundle) {
	var log startLog
	gate := make(chan struct{})
	fails := map[runtime.TaskID]bool{}
	var failsMu sync.Mutex
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"seq": func(ctx context.Context, task *runtime.Task) error {
			log.add(task.ID)
			failsMu.Lock()
			fail := fails[task.ID]
			failsMu.Unlock()
			if fail {
				return runtime.Permanent(errors.New("bad step"))
			}
			return nil
		},
		"gated": func(ctx context.Context, task *runtime.Task) error {
			log.add(task.ID)
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}, runtime.WithBackoff(FastBackoff))
	enqueueFailing := func(fail bool, opt runtime.EnqueueOption) runtime.TaskID {
		failsMu.Lock()
		defer failsMu.Unlock()
		id := b.Enqueue(t, "seq", opt, runtime.WithMaxAttempts(1))
		fails[id] = fail
		return id
	}

	// Block: the failed head keeps the slot until it is discarded.
	block := runtime.WithSequentialKey("ledger-7", runtime.SequenceBlock)
	released := b.Signals.Releases()
	head := enqueueFailing(true, block)
	second, third := enqueueFailing(false, block), enqueueFailing(false, block)
	b.WaitStatus(t, head, runtime.StatusFailed)
	b.Signals.Await(t, testwait.Bound, func() bool { return b.Signals.Releases() > released }, func() string { return "no release after the head failed" })
	checkStatuses(t, b, map[runtime.TaskID]runtime.Status{second: runtime.StatusWaiting, third: runtime.StatusWaiting})
	dbtest.Must(t, "discard the failed head", b.Client.Discard(bg, head))
	b.WaitStatus(t, third, runtime.StatusSuccess)
	b.WaitStatus(t, second, runtime.StatusSuccess)
	if !log.before(second, third) {
		t.Errorf("starts %v: %d must start before %d", log.starts, second, third)
	}

	// Continue: the next task starts after the failure.
	cont := runtime.WithSequentialKey("ledger-8", runtime.SequenceContinue)
	failed, next := enqueueFailing(true, cont), enqueueFailing(false, cont)
	b.WaitStatus(t, failed, runtime.StatusFailed)
	b.WaitStatus(t, next, runtime.StatusSuccess)

	// Cancel a waiting task: it never runs, the one behind it does.
	key := runtime.WithConcurrencyKey("sync-3", 1)
	running := b.Enqueue(t, "gated", key)
	cancelled, last := b.Enqueue(t, "gated", key), b.Enqueue(t, "gated", key)
	checkStatuses(t, b, map[runtime.TaskID]runtime.Status{cancelled: runtime.StatusWaiting, last: runtime.StatusWaiting})
	dbtest.Must(t, "cancel a waiting task", b.Client.Cancel(bg, cancelled))
	close(gate)
	b.WaitStatus(t, running, runtime.StatusSuccess)
	b.WaitStatus(t, last, runtime.StatusSuccess)
	checkStatuses(t, b, map[runtime.TaskID]runtime.Status{cancelled: runtime.StatusCancelled})
	if log.ran(cancelled) {
		t.Errorf("cancelled waiting task %d ran", cancelled)
	}
}

// Three worker processes over 1,200 tasks of 20 keys, two fair, ten under
// a limit of 2 and eight sequential, six of them with a rate of 10 starts
// per 250 ms, while random workers are killed with SIGKILL
// and restarted: besides what every kill -9 run checks (nothing lost,
// nothing done twice), no key ever ran more tasks at once than its limit,
// each sequential key's tasks started in enqueue order (a task killed
// mid-run runs again before the next one starts), and no window held more
// starts of a key with a rate than it allows (claims on the database's
// clock, killed executions included).
func testKill9KeyedWorkers(t *testing.T, b *Bundle) {
	if testing.Short() {
		t.Skip("kill -9 run skipped in -short mode")
	}
	const (
		tasks      = 1200
		keys       = 20
		sequential = 8 // the last keys
		keyLimit   = 2
		rated      = 4 // the keys before the sequential ones, and the last two
		fair       = 2 // the first keys: fairness keys without a limit
		rateLimit  = 10
		rateWindow = 250 * time.Millisecond
	)
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, tasks)
	limits := map[string]int{}
	rates := map[string]int{}
	for i := range reqs {
		k := i % keys
		key := fmt.Sprintf("k%02d", k)
		opts := []runtime.EnqueueOption{runtime.WithConcurrencyKey(key, keyLimit), runtime.WithMaxAttempts(50)}
		limits[key] = keyLimit
		switch {
		case k >= keys-sequential:
			opts[0] = runtime.WithSequentialKey(key, runtime.SequenceContinue)
			limits[key] = 1
		case k < fair:
			opts[0] = runtime.WithFairnessKey(key, 1+k) // no concurrency limit
			delete(limits, key)
		}
		if (k >= keys-sequential-rated && k < keys-sequential) || k >= keys-2 {
			opts = append(opts, runtime.WithKeyRate(key, rateLimit, rateWindow))
			rates[key] = rateLimit
		}
		reqs[i] = runtime.Request{Type: "chaos", Payload: fmt.Appendf(nil, `{"SleepMS":%d}`, 10+rand.IntN(30)), Options: opts}
	}
	ids, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	sampled, stopSampling := sampleKeys(t, b)
	run := killWorkers(t, b, tasks)
	samples := stopSampling()
	for key, n := range sampled {
		if limit, ok := limits[key]; ok && n > limit {
			t.Errorf("key %s had %d tasks running in a sample of the database, its limit is %d", key, n, limit)
		}
	}
	peak := peakBy(run.rows, func(r Interval) string { return r.Key })
	for key, limit := range limits {
		if peak[key] > limit {
			t.Errorf("key %s ran %d tasks at once, its limit is %d", key, peak[key], limit)
		}
	}
	busiest := checkWindows(t, run.rows, rateWindow, rates, func(r Interval) string { return r.Key })
	order := map[runtime.TaskID]int{} // enqueue order
	for i, id := range ids {
		order[id] = i
	}
	rows := slices.Clone(run.rows)
	slices.SortFunc(rows, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	last := map[string]int{}
	for _, r := range rows {
		if limits[r.Key] != 1 {
			continue
		}
		if at, ok := last[r.Key]; ok && order[r.Task] < at {
			t.Errorf("sequential key %s: task %d (enqueued %d) started after a task enqueued %d", r.Key, r.Task, order[r.Task], at)
		}
		last[r.Key] = order[r.Task]
	}
	t.Logf("%d tasks over %d keys, %s: %d executions, %d tasks ran again, %d lost, %d duplicate effects; peak running per key %v (ledger), %v (%d samples); most starts of a rated key in %s: %v (rate %d)",
		tasks, keys, run, len(run.rows), run.reran, run.lost, run.dups, peak, sampled, samples, rateWindow, busiest, rateLimit)
}

// sampleKeys reads the running tasks of every key (Client.Keys) over and
// over until the returned stop is called, and keeps each key's most; stop
// returns how many samples it took.
func sampleKeys(t *testing.T, b *Bundle) (most map[string]int, stop func() int) {
	most = map[string]int{}
	done := make(chan struct{})
	finished := make(chan int)
	go func() {
		samples := 0
		for {
			select {
			case <-done:
				finished <- samples
				return
			case <-time.After(5 * time.Millisecond): // leave the workers the machine
			}
			keys, err := b.Client.Keys(bg, 1000)
			if err != nil {
				t.Errorf("sample the keys: %v", err)
				finished <- samples
				<-done
				return
			}
			for _, k := range keys {
				most[k.Key] = max(most[k.Key], k.Running)
			}
			samples++
		}
	}()
	return most, func() int {
		close(done)
		return <-finished
	}
}
