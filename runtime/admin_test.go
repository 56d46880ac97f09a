package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
)

func TestAdminListRetryStats(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		ok := b.enqueue(t, "a", WithOwner("o1"))
		broken := b.enqueue(t, "b", WithOwner("o2"), WithMaxAttempts(1))
		queued := b.enqueue(t, "c", WithDelay(time.Hour))
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"a": func(context.Context, *Task) error { return nil },
			"b": func(context.Context, *Task) error { return errors.New("no") },
		})
		b.waitStatus(t, ok, StatusSuccess, 5*time.Second)
		b.waitStatus(t, broken, StatusFailed, 5*time.Second)

		list := func(f Filter) []TaskID {
			infos, err := b.client.List(bg, f)
			dbtest.Must(t, "list", err)
			out := []TaskID{}
			for _, i := range infos {
				out = append(out, i.ID)
			}
			return out
		}
		for name, c := range map[string]struct {
			f    Filter
			want []TaskID
		}{
			"all":      {Filter{}, []TaskID{queued, broken, ok}},
			"status":   {Filter{Status: StatusFailed}, []TaskID{broken}},
			"type":     {Filter{Type: "c"}, []TaskID{queued}},
			"owner":    {Filter{Owner: "o1"}, []TaskID{ok}},
			"age":      {Filter{OlderThan: time.Hour}, []TaskID{}},
			"limit":    {Filter{Limit: 1}, []TaskID{queued}},
			"no match": {Filter{Type: "c", Status: StatusSuccess}, []TaskID{}},
		} {
			if diff := cmp.Diff(c.want, list(c.f)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}

		st, err := b.client.Stats(bg)
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

		if err := b.client.Retry(bg, ok); !errors.Is(err, ErrTaskNotRetryable) {
			t.Errorf("retry of a succeeded task: %v", err)
		}
		if err := b.client.Retry(bg, 424242); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("retry of an unknown task: %v", err)
		}
		dbtest.Must(t, "retry", b.client.Retry(bg, broken))
		info, _ := b.client.Get(bg, broken)
		if info.Status == StatusFailed && info.Attempt == 1 {
			t.Errorf("retried task still failed on its first attempt: %+v", info)
		}
		b.waitStatus(t, broken, StatusFailed, 5*time.Second) // ran again with its attempt back
		if info, _ := b.client.Get(bg, broken); info.Attempt != 2 || info.AttemptsUsed != 1 || info.LeaseOwner == "" {
			t.Errorf("retried task: attempt %d, attempts used %d, lease owner %q; want 2, 1 of 1 and the worker that ran it",
				info.Attempt, info.AttemptsUsed, info.LeaseOwner)
		}
	})
}

// A task Stop handed back is queued with no lease owner and no attempt
// used; its start time stays as history.
func TestReleasedTaskInfo(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		id := b.enqueue(t, "slow", WithMaxAttempts(2))
		running := make(chan struct{})
		w := b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"slow": func(ctx context.Context, _ *Task) error {
				close(running)
				<-ctx.Done()
				return ctx.Err()
			},
		})
		<-running
		if info, _ := b.client.Get(bg, id); info.LeaseOwner == "" || info.AttemptsUsed != 1 {
			t.Errorf("running task: lease owner %q, attempts used %d; want its worker and 1", info.LeaseOwner, info.AttemptsUsed)
		}
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		defer cancel()
		if err := w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("stop: %v, want it to hand the running task back", err)
		}
		info, _ := b.client.Get(bg, id)
		if info.Status != StatusQueued || info.LeaseOwner != "" || info.AttemptsUsed != 0 || info.Attempt != 1 || info.StartedAt.IsZero() {
			t.Errorf("released task: %s, lease owner %q, attempts used %d, attempt %d, started %v; want QUEUED, none, 0, 1 and a start time",
				info.Status, info.LeaseOwner, info.AttemptsUsed, info.Attempt, info.StartedAt)
		}
	})
}

// Retention deletes finished tasks past their age, in batches, and nothing
// else; Purge does the same on demand.
func TestRetentionAndPurge(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		reqs := make([]Request, 1200)
		for i := range reqs {
			reqs[i] = Request{Type: "done"}
		}
		_, err := b.client.EnqueueMany(bg, reqs)
		dbtest.Must(t, "enqueue", err)
		keep := b.enqueue(t, "later", WithDelay(time.Hour))
		cfg := testConfig()
		cfg.Retention, cfg.RetentionInterval = 200*time.Millisecond, 300*time.Millisecond
		w := b.startWorker(t, cfg, map[string]HandlerFunc{"done": func(context.Context, *Task) error { return nil }})
		deadline := time.Now().Add(20 * time.Second)
		for b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks") > 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%d tasks left after retention", b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := b.client.Get(bg, keep); err != nil {
			t.Errorf("retention deleted a queued task: %v", err)
		}
		for w.Stats().Pruned != 1200 { // the last batch is counted after it commits
			if time.Now().After(deadline) {
				t.Fatalf("pruned %d, want 1200", w.Stats().Pruned)
			}
			time.Sleep(10 * time.Millisecond)
		}
		dbtest.Must(t, "cancel", b.client.Cancel(bg, keep))
		time.Sleep(10 * time.Millisecond) // finished strictly before the purge's cutoff
		n, err := b.client.Purge(bg, 0, 10)
		dbtest.Must(t, "purge", err)
		if n != 1 || b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks") != 0 {
			t.Errorf("purge deleted %d", n)
		}
	})
}
