package systemtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

func testAdminListRetryStats(t *testing.T, b *Bundle) {
	ok := b.Enqueue(t, "a", runtime.WithOwner("o1"), runtime.WithIdempotencyKey("k-1"))
	broken := b.Enqueue(t, "b", runtime.WithOwner("o2"), runtime.WithMaxAttempts(1))
	queued := b.Enqueue(t, "c", runtime.WithDelay(time.Hour))
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"a": func(context.Context, *runtime.Task) error { return nil },
		"b": func(context.Context, *runtime.Task) error { return errors.New("no") },
	})
	b.WaitStatus(t, ok, runtime.StatusSuccess)
	b.WaitStatus(t, broken, runtime.StatusFailed)

	list := func(f runtime.Filter) []runtime.TaskID {
		infos, err := b.Client.List(bg, f)
		dbtest.Must(t, "list", err)
		out := []runtime.TaskID{}
		for _, i := range infos {
			out = append(out, i.ID)
		}
		return out
	}
	for name, c := range map[string]struct {
		f    runtime.Filter
		want []runtime.TaskID
	}{
		"all":      {runtime.Filter{}, []runtime.TaskID{queued, broken, ok}},
		"status":   {runtime.Filter{Status: runtime.StatusFailed}, []runtime.TaskID{broken}},
		"type":     {runtime.Filter{Type: "c"}, []runtime.TaskID{queued}},
		"owner":    {runtime.Filter{Owner: "o1"}, []runtime.TaskID{ok}},
		"age":      {runtime.Filter{OlderThan: time.Hour}, []runtime.TaskID{}},
		"limit":    {runtime.Filter{Limit: 1}, []runtime.TaskID{queued}},
		"key":      {runtime.Filter{Key: "k-1"}, []runtime.TaskID{ok}},
		"page 2":   {runtime.Filter{BeforeID: queued, Limit: 1}, []runtime.TaskID{broken}},
		"page 3":   {runtime.Filter{BeforeID: broken, Limit: 5}, []runtime.TaskID{ok}},
		"past end": {runtime.Filter{BeforeID: ok}, []runtime.TaskID{}},
		"no match": {runtime.Filter{Type: "c", Status: runtime.StatusSuccess}, []runtime.TaskID{}},
	} {
		if diff := cmp.Diff(c.want, list(c.f)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	st, err := b.Client.Stats(bg)
	dbtest.Must(t, "stats", err)
	counts := map[string]int{}
	for _, c := range st.Counts {
		counts[c.Type+"/"+string(c.Status)] = c.Tasks
	}
	if diff := cmp.Diff(map[string]int{"a/SUCCESS": 1, "b/FAILED": 1, "c/QUEUED": 1}, counts); diff != "" {
		t.Errorf("stats counts (-want +got):\n%s", diff)
	}
	if _, has := st.OldestQueued["c"]; !has || len(st.RunningByWorker) != 0 {
		t.Errorf("stats: oldest %v, running %v", st.OldestQueued, st.RunningByWorker)
	}

	if err := b.Client.Retry(bg, ok); !errors.Is(err, runtime.ErrTaskNotRetryable) {
		t.Errorf("retry of a succeeded task: %v", err)
	}
	if err := b.Client.Retry(bg, 424242); !errors.Is(err, runtime.ErrTaskNotFound) {
		t.Errorf("retry of an unknown task: %v", err)
	}
	dbtest.Must(t, "retry", b.Client.Retry(bg, broken))
	info, _ := b.Client.Get(bg, broken)
	if info.Status == runtime.StatusFailed && info.Attempt == 1 {
		t.Errorf("retried task still failed on its first attempt: %+v", info)
	}
	b.WaitStatus(t, broken, runtime.StatusFailed) // ran again with its attempt back
	// A claim whose reply came late hands its tasks back without using an
	// attempt: the fencing token may pass 2, the attempts used stay 1.
	if info, _ := b.Client.Get(bg, broken); info.Attempt < 2 || info.AttemptsUsed != 1 || info.LeaseOwner == "" {
		t.Errorf("retried task: attempt %d, attempts used %d, lease owner %q; want 2 or more, 1 of 1 and the worker that ran it",
			info.Attempt, info.AttemptsUsed, info.LeaseOwner)
	}
}

// A task Stop handed back is queued with no lease owner and no attempt
// used; its start time stays as history.
func testReleasedTaskInfo(t *testing.T, b *Bundle) {
	id := b.Enqueue(t, "slow", runtime.WithMaxAttempts(2))
	running := make(chan struct{})
	w := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"slow": func(ctx context.Context, _ *runtime.Task) error {
			close(running)
			<-ctx.Done()
			return ctx.Err()
		},
	})
	<-running
	if info, _ := b.Client.Get(bg, id); info.LeaseOwner == "" || info.AttemptsUsed != 1 {
		t.Errorf("running task: lease owner %q, attempts used %d; want its worker and 1", info.LeaseOwner, info.AttemptsUsed)
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if err := w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stop: %v, want it to hand the running task back", err)
	}
	info, _ := b.Client.Get(bg, id)
	if info.Status != runtime.StatusQueued || info.LeaseOwner != "" || info.AttemptsUsed != 0 || info.Attempt != 1 || info.StartedAt.IsZero() {
		t.Errorf("released task: %s, lease owner %q, attempts used %d, attempt %d, started %v; want QUEUED, none, 0, 1 and a start time",
			info.Status, info.LeaseOwner, info.AttemptsUsed, info.Attempt, info.StartedAt)
	}
}

// Retention deletes finished tasks past their age, in batches, and nothing
// else; Purge does the same on demand.
func testRetentionAndPurge(t *testing.T, b *Bundle) {
	reqs := make([]runtime.Request, 1200)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "done"}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	keep := b.Enqueue(t, "later", runtime.WithDelay(time.Hour))
	cfg := Config()
	cfg.Retention, cfg.RetentionInterval = 200*time.Millisecond, 300*time.Millisecond
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"done": func(context.Context, *runtime.Task) error { return nil }})
	// The last batch is counted after it commits: wait for both.
	b.Signals.Await(t, testwait.Bound, func() bool { return w.Stats().Pruned == 1200 && b.Total(t) == 1 }, func() string {
		return fmt.Sprintf("%d tasks left after retention, pruned %d, want 1 and 1200", b.Total(t), w.Stats().Pruned)
	})
	if _, err := b.Client.Get(bg, keep); err != nil {
		t.Errorf("retention deleted a queued task: %v", err)
	}
	dbtest.Must(t, "stop the worker", w.Stop(bg)) // its retention would race the purge for the cancelled task
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, keep))
	time.Sleep(10 * time.Millisecond) // finished strictly before the purge's cutoff
	n, err := b.Client.Purge(bg, 0, 10)
	dbtest.Must(t, "purge", err)
	if n != 1 || b.Total(t) != 0 {
		t.Errorf("purge deleted %d", n)
	}
}

// Bulk actions by filter: a count first, then a retry of the failures
// whose error holds a text, up to a cap, newest first, then a cancel of
// what they queued; tasks in other states are passed over.
func testBulkActionsByFilter(t *testing.T, b *Bundle) {
	reqs := make([]runtime.Request, 12)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "bulk", Payload: fmt.Appendf(nil, "%d", i), Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(1)}}
	}
	ids, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	w := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"bulk": func(_ context.Context, task *runtime.Task) error {
		if task.Payload[len(task.Payload)-1]%2 == 0 {
			return errors.New("disk full on /var")
		}
		return errors.New("upstream timeout")
	}})
	for _, id := range ids {
		b.WaitStatus(t, id, runtime.StatusFailed)
	}
	dbtest.Must(t, "stop the worker", w.Stop(bg)) // what the retry queues stays queued

	disk := runtime.Filter{Type: "bulk", Status: runtime.StatusFailed, ErrorContains: "disk full"}
	if n, err := b.Client.CountMatching(bg, disk, 100); err != nil || n != 6 {
		t.Errorf("count of the disk failures = %d, %v; want 6", n, err)
	}
	if n, err := b.Client.CountMatching(bg, disk, 4); err != nil || n != 4 {
		t.Errorf("count up to 4 = %d, %v", n, err)
	}
	if n, err := b.Client.RetryMatching(bg, disk, 4); err != nil || n != 4 {
		t.Errorf("retry of up to 4 disk failures = %d, %v; want 4", n, err)
	}
	queued := b.Tasks(t, runtime.Filter{Type: "bulk", Status: runtime.StatusQueued})
	if len(queued) != 4 || queued[0].ID != ids[10] || !strings.Contains(queued[0].LastError, "disk full") {
		t.Errorf("queued after the retry: %d tasks, the newest %+v; want the 4 newest disk failures", len(queued), queued)
	}
	// A retry of every bulk task passes over the queued ones.
	if n, err := b.Client.RetryMatching(bg, runtime.Filter{Type: "bulk"}, 100); err != nil || n != 8 {
		t.Errorf("retry of every bulk task = %d, %v; want the 8 still failed", n, err)
	}
	if n, err := b.Client.CancelMatching(bg, runtime.Filter{Type: "bulk", ErrorContains: "timeout"}, 100); err != nil || n != 6 {
		t.Errorf("cancel of the timeouts = %d, %v; want 6", n, err)
	}
	if got := b.StatusCounts(t); got[runtime.StatusCancelled] != 6 || got[runtime.StatusQueued] != 6 {
		t.Errorf("statuses after the bulk actions: %v; want 6 cancelled, 6 queued", got)
	}
	if _, err := b.Client.RetryMatching(bg, disk, 0); !errors.Is(err, runtime.ErrInvalidTask) {
		t.Errorf("a bulk action without a cap: %v, want ErrInvalidTask", err)
	}
	// Discard deletes what no worker holds, never a running task.
	running := b.Claim(t, "w", 1, "bulk")
	if len(running) != 1 {
		t.Fatalf("claimed %v, want one queued bulk task", running)
	}
	if err := b.Client.Discard(bg, running[0].ID); !errors.Is(err, runtime.ErrTaskRunning) {
		t.Errorf("discard of a running task: %v, want ErrTaskRunning", err)
	}
	if n, err := b.Client.DiscardMatching(bg, runtime.Filter{Type: "bulk"}, 100); err != nil || n != 11 {
		t.Errorf("discard of every bulk task = %d, %v; want the 11 no worker holds", n, err)
	}
	if n := b.Total(t); n != 1 {
		t.Errorf("%d tasks left after the discard, want the running one", n)
	}
}

// ListFinished pages through the tasks of a final status, the latest
// finished first (ties by id, downward), each once; by type too; a status
// that is not final is refused.
func testListFinished(t *testing.T, b *Bundle) {
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"bad":   func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("no")) },
		"worse": func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("no")) },
		"ok":    func(context.Context, *runtime.Task) error { return nil },
	})
	wants := map[runtime.TaskID]runtime.Status{}
	for _, typ := range []string{"bad", "bad", "worse", "bad", "ok", "bad", "worse", "bad", "bad", "ok"} {
		wants[b.Enqueue(t, typ)] = map[bool]runtime.Status{true: runtime.StatusSuccess, false: runtime.StatusFailed}[typ == "ok"]
	}
	for id, want := range wants {
		b.WaitStatus(t, id, want)
	}
	for _, c := range []struct {
		typ  string
		want int
	}{{"", 8}, {"bad", 6}} {
		var got []runtime.TaskInfo
		f := runtime.FinishedFilter{Status: runtime.StatusFailed, Type: c.typ, Limit: 3}
		for range 10 {
			page, err := b.Client.ListFinished(bg, f)
			dbtest.Must(t, "list finished", err)
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			last := page[len(page)-1]
			f.BeforeFinishedAt, f.BeforeID = last.FinishedAt, last.ID
		}
		seen := map[runtime.TaskID]bool{}
		for i, info := range got {
			if info.Status != runtime.StatusFailed || (c.typ != "" && info.Type != c.typ) || seen[info.ID] {
				t.Errorf("type %q: task %d (%s, %s) listed, or listed twice", c.typ, info.ID, info.Type, info.Status)
			}
			seen[info.ID] = true
			if i > 0 {
				prev := got[i-1]
				if info.FinishedAt.After(prev.FinishedAt) || info.FinishedAt.Equal(prev.FinishedAt) && info.ID > prev.ID {
					t.Errorf("type %q: task %d finished %v listed after task %d finished %v", c.typ, info.ID, info.FinishedAt, prev.ID, prev.FinishedAt)
				}
			}
		}
		if len(got) != c.want {
			t.Errorf("type %q: %d failed tasks listed in pages of 3, want %d", c.typ, len(got), c.want)
		}
	}
	if _, err := b.Client.ListFinished(bg, runtime.FinishedFilter{Status: runtime.StatusQueued}); !errors.Is(err, runtime.ErrInvalidTask) {
		t.Errorf("ListFinished of QUEUED = %v, want ErrInvalidTask", err)
	}
}
