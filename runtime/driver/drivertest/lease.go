package drivertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
)

var bg = context.Background()

func ids(tasks []driver.ClaimedTask) []runtime.TaskID {
	out := make([]runtime.TaskID, len(tasks))
	for i, c := range tasks {
		out[i] = c.ID
	}
	return out
}

func testClaimOrderAndAvailability(t *testing.T, b *Bundle) {
	low := b.Enqueue(t, "a", runtime.WithPriority(1))
	high := b.Enqueue(t, "a", runtime.WithPriority(10))
	b.Enqueue(t, "a", runtime.WithPriority(100), runtime.WithDelay(time.Hour))
	b.Enqueue(t, "a", runtime.WithPriority(100), runtime.WithRunAt(time.Now().Add(time.Hour)))
	other := b.Enqueue(t, "other", runtime.WithPriority(50))
	mid := b.Enqueue(t, "a", runtime.WithPriority(1))

	got := b.Claim(t, "w1", 10, "a")
	if diff := cmp.Diff([]runtime.TaskID{high, low, mid}, ids(got)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	for _, c := range got {
		info, err := b.Client.Get(bg, c.ID)
		dbtest.Must(t, "get", err)
		// The claim reads the clock a statement before the UPDATE that
		// stores started_at.
		if gap := info.StartedAt.Sub(c.StartedAt); c.Attempt != 1 || info.Status != runtime.StatusRunning || info.Attempt != 1 ||
			info.LeaseOwner != "w1" || gap < 0 || gap > time.Second {
			t.Errorf("claimed %d at attempt %d, started %v; the row reads %s attempt %d owner %q started %v",
				c.ID, c.Attempt, c.StartedAt, info.Status, info.Attempt, info.LeaseOwner, info.StartedAt)
		}
		// The lease is on the database's clock: about one second from now.
		left := 1000 * b.LeaseMillisLeft(t, c.ID)
		if left < 500_000 || left > 1_000_000 {
			t.Errorf("lease of %d ends in %dus, want about 1s", c.ID, left)
		}
	}
	if got := b.Claim(t, "w1", 10, "other"); len(got) != 1 || got[0].ID != other {
		t.Errorf("claim of other = %v", ids(got))
	}
}

// Claims in concurrent, committed transactions take disjoint tasks.
func testConcurrentClaimsAreDisjoint(t *testing.T, b *Bundle) {
	reqs := make([]runtime.Request, 400)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "a", Payload: []byte(`{}`)}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	var mu sync.Mutex
	seen := map[runtime.TaskID]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		owner := string(rune('A' + w))
		wg.Go(func() {
			for {
				got, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: owner, Lease: time.Minute, Types: []string{"a"}, Max: 7})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, c := range got {
					if prev, dup := seen[c.ID]; dup {
						t.Errorf("task %d claimed by %s and %s", c.ID, prev, owner)
					}
					seen[c.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(reqs) {
		t.Errorf("claimed %d distinct tasks, want %d", len(seen), len(reqs))
	}
}

// A stale execution (its lease expired and the task was claimed again, even
// by the same worker) can write nothing.
func testFenceRejectsStaleExecution(t *testing.T, b *Bundle) {
	id := b.Enqueue(t, "a")
	first := b.Claim(t, "w", 1, "a")[0]
	b.Expire(t, id)

	stale := driver.LeaseRef{ID: id, Attempt: first.Attempt}
	ok, err := b.Driver.Complete(bg, b.Engine.DB(), "w", stale, "")
	dbtest.Must(t, "complete", err)
	if ok {
		t.Fatal("completion with an expired lease took effect")
	}
	rec, err := b.Driver.RecoverBatch(bg, 10)
	dbtest.Must(t, "recover", err)
	if len(rec) != 1 || rec[0].Outcome != driver.RecoveryRequeued || rec[0].Overdue < time.Second {
		t.Fatalf("recovered = %+v", rec)
	}
	second := b.Claim(t, "w", 1, "a")[0]
	if second.Attempt != first.Attempt+1 {
		t.Fatalf("second claim attempt = %d, want %d", second.Attempt, first.Attempt+1)
	}

	writes := map[string]func() (bool, error){
		"complete": func() (bool, error) { return b.Driver.Complete(bg, b.Engine.DB(), "w", stale, "") },
		"fail":     func() (bool, error) { return b.Driver.Fail(bg, "w", stale, driver.Failure{Message: "x"}) },
		"release":  func() (bool, error) { return b.Driver.Release(bg, "w", stale, 0) },
		"other owner": func() (bool, error) {
			return b.Driver.Complete(bg, b.Engine.DB(), "intruder", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "")
		},
	}
	for name, write := range writes {
		ok, err := write()
		dbtest.Must(t, name, err)
		if ok {
			t.Errorf("stale %s took effect", name)
		}
	}
	states, err := b.Driver.Renew(bg, "w", time.Second, []driver.LeaseRef{stale})
	dbtest.Must(t, "renew", err)
	if states[0].Held {
		t.Error("renewal reports a stale execution as holding the lease")
	}
	ok, err = b.Driver.Complete(bg, b.Engine.DB(), "w", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "done")
	dbtest.Must(t, "complete current", err)
	info, _ := b.Client.Get(bg, id)
	if !ok || info.Status != runtime.StatusSuccess || info.Result != "done" {
		t.Errorf("current execution's completion: ok=%v status=%s result=%q", ok, info.Status, info.Result)
	}
}

func testRenewReportsEachLease(t *testing.T, b *Bundle) {
	held := b.Enqueue(t, "a")
	lost := b.Enqueue(t, "a")
	cancelled := b.Enqueue(t, "a")
	claimed := b.Claim(t, "w", 3, "a")
	refs := make([]driver.LeaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	b.Expire(t, lost)
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, cancelled))

	states, err := b.Driver.Renew(bg, "w", 5*time.Second, refs)
	dbtest.Must(t, "renew", err)
	got := map[runtime.TaskID]driver.LeaseState{}
	for _, s := range states {
		got[s.Ref.ID] = s
	}
	if s := got[held]; !s.Held || s.CancelRequested {
		t.Errorf("held task: %+v", s)
	}
	if s := got[lost]; s.Held {
		t.Errorf("expired task reported held: %+v", s)
	}
	if s := got[cancelled]; !s.Held || !s.CancelRequested {
		t.Errorf("cancel-requested task: %+v", s)
	}
	left := b.LeaseMillisLeft(t, held)
	if left < 4000 {
		t.Errorf("renewed lease ends in %dms, want about 5000", left)
	}
}

func testRecoveryOutcomes(t *testing.T, b *Bundle) {
	requeue := b.Enqueue(t, "a", runtime.WithMaxAttempts(2))
	exhausted := b.Enqueue(t, "a", runtime.WithMaxAttempts(1))
	cancel := b.Enqueue(t, "a", runtime.WithMaxAttempts(5))
	b.Claim(t, "w", 3, "a")
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, cancel))
	for _, id := range []runtime.TaskID{requeue, exhausted, cancel} {
		b.Expire(t, id)
	}
	rec, err := b.Driver.RecoverBatch(bg, 2)
	dbtest.Must(t, "recover", err)
	more, err := b.Driver.RecoverBatch(bg, 2)
	dbtest.Must(t, "recover", err)
	rec = append(rec, more...)
	outcomes := map[runtime.TaskID]string{}
	for _, r := range rec {
		outcomes[r.ID] = r.Outcome
	}
	want := map[runtime.TaskID]string{requeue: driver.RecoveryRequeued, exhausted: driver.RecoveryFailed, cancel: driver.RecoveryCancelled}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	wantStatus := map[runtime.TaskID]runtime.Status{requeue: runtime.StatusQueued, exhausted: runtime.StatusFailed, cancel: runtime.StatusCancelled}
	for id, st := range wantStatus {
		info, _ := b.Client.Get(bg, id)
		if info.Status != st || info.LeaseUntil != (time.Time{}) {
			t.Errorf("task %d: %s lease %v, want %s and no lease", id, info.Status, info.LeaseUntil, st)
		}
		if st.Terminal() == info.FinishedAt.IsZero() {
			t.Errorf("task %d: status %s with finished_at %v", id, info.Status, info.FinishedAt)
		}
	}
	if again, _ := b.Driver.RecoverBatch(bg, 10); len(again) != 0 {
		t.Errorf("second pass recovered %d rows", len(again))
	}
}

// A released (or snoozed) claim does not use an attempt; the attempt number
// still rises, so it stays a fencing token.
func testReleaseDoesNotUseAnAttempt(t *testing.T, b *Bundle) {
	id := b.Enqueue(t, "a", runtime.WithMaxAttempts(1))
	c := b.Claim(t, "w", 1, "a")[0]
	ok, err := b.Driver.Release(bg, "w", driver.LeaseRef{ID: id, Attempt: c.Attempt}, 0)
	dbtest.Must(t, "release", err)
	if !ok {
		t.Fatal("release rejected")
	}
	c2 := b.Claim(t, "w", 1, "a")[0]
	if c2.Attempt != 2 || c2.FreeAttempts != 1 {
		t.Fatalf("after release: attempt %d free %d", c2.Attempt, c2.FreeAttempts)
	}
	if !driver.AttemptsLeft(1, 1, 1) || driver.AttemptsLeft(c2.Attempt, c2.FreeAttempts, c2.MaxAttempts) {
		t.Error("AttemptsLeft miscounts free attempts")
	}
}

func testClaimHonoursLimits(t *testing.T, b *Bundle) {
	for range 5 {
		b.Enqueue(t, "limited")
		b.Enqueue(t, "free")
	}
	dbtest.Must(t, "limits", b.Driver.EnsureLimits(bg, []string{driver.GlobalScope, "limited"}))
	req := driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"free", "limited"}, Max: 100,
		TypeLimits: map[string]int{"limited": 2}}
	got, err := b.Driver.Claim(bg, req)
	dbtest.Must(t, "claim", err)
	count := map[string]int{}
	for _, c := range got {
		count[c.Type]++
	}
	if count["limited"] != 2 || count["free"] != 5 {
		t.Errorf("claimed %v, want 2 limited and 5 free", count)
	}
	again, err := b.Driver.Claim(bg, req)
	dbtest.Must(t, "claim", err)
	if len(again) != 0 {
		t.Errorf("claimed %d more while the limit is reached", len(again))
	}

	// The global limit counts every running task of every type.
	b.Enqueue(t, "free")
	req.GlobalLimit = 8
	got, err = b.Driver.Claim(bg, req)
	dbtest.Must(t, "claim", err)
	if len(got) != 1 {
		t.Errorf("global limit 8 with 7 running: claimed %d, want 1", len(got))
	}
	b.Enqueue(t, "free")
	if got, _ := b.Driver.Claim(bg, req); len(got) != 0 {
		t.Errorf("global limit reached: claimed %d", len(got))
	}
}

// A grouped completion completes the executions that hold their lease,
// each with its own result, and rejects the stale ones in the same batch.
func testCompleteManyFencesEachRow(t *testing.T, b *Bundle) {
	var ids []runtime.TaskID
	for range 4 {
		ids = append(ids, b.Enqueue(t, "a"))
	}
	claimed := b.Claim(t, "w", 4, "a")
	byID := map[runtime.TaskID]driver.ClaimedTask{}
	for _, c := range claimed {
		byID[c.ID] = c
	}
	b.Expire(t, ids[1]) // lease expired
	reqs := []driver.CompletionRequest{
		{Ref: driver.LeaseRef{ID: ids[0], Attempt: byID[ids[0]].Attempt}, Result: "r0"},
		{Ref: driver.LeaseRef{ID: ids[1], Attempt: byID[ids[1]].Attempt}, Result: "r1"},
		{Ref: driver.LeaseRef{ID: ids[2], Attempt: byID[ids[2]].Attempt + 1}}, // wrong attempt
		{Ref: driver.LeaseRef{ID: ids[3], Attempt: byID[ids[3]].Attempt}},
	}
	oks, err := b.Driver.CompleteMany(bg, "w", reqs)
	dbtest.Must(t, "complete many", err)
	if diff := cmp.Diff([]bool{true, false, false, true}, oks); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	if oks, _ := b.Driver.CompleteMany(bg, "intruder", reqs[3:]); oks[0] {
		t.Error("another owner's grouped completion took effect")
	}
	want := map[runtime.TaskID]struct {
		status runtime.Status
		result string
	}{ids[0]: {runtime.StatusSuccess, "r0"}, ids[1]: {runtime.StatusRunning, ""}, ids[2]: {runtime.StatusRunning, ""}, ids[3]: {runtime.StatusSuccess, ""}}
	for id, w := range want {
		info, _ := b.Client.Get(bg, id)
		if info.Status != w.status || info.Result != w.result {
			t.Errorf("task %d: %s %q, want %s %q", id, info.Status, info.Result, w.status, w.result)
		}
	}

	// The usual batch, every execution at one attempt and none with a
	// result, which an engine may write another way, is fenced the same.
	var plain []driver.CompletionRequest
	for range 3 {
		b.Enqueue(t, "b")
	}
	for _, c := range b.Claim(t, "w", 3, "b") {
		plain = append(plain, driver.CompletionRequest{Ref: driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}})
	}
	b.Expire(t, plain[1].Ref.ID)
	if oks, _ := b.Driver.CompleteMany(bg, "intruder", plain); slices.Contains(oks, true) {
		t.Errorf("another owner's grouped completion of one attempt took effect: %v", oks)
	}
	stale := []driver.CompletionRequest{{Ref: driver.LeaseRef{ID: plain[2].Ref.ID, Attempt: plain[2].Ref.Attempt + 1}}}
	if oks, _ := b.Driver.CompleteMany(bg, "w", stale); oks[0] {
		t.Error("a completion at another attempt took effect")
	}
	oks, err = b.Driver.CompleteMany(bg, "w", plain)
	dbtest.Must(t, "complete many, one attempt", err)
	if diff := cmp.Diff([]bool{true, false, true}, oks); diff != "" {
		t.Errorf("completions of one attempt (-want +got):\n%s", diff)
	}
}

// skewedClock is a wall clock off by a fixed amount, without the monotonic
// reading, like a worker on a machine whose clock is wrong.
type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew).Round(0) }

// Workers whose clocks are ten minutes fast and slow share tasks correctly:
// a task longer than the lease keeps its first holder (nobody recovers a
// live lease), and an abandoned lease is recovered within its bound.
func testWorkerClockSkewDoesNotMatter(t *testing.T, b *Bundle) {
	b.DB.MustExec(t, EffectsTable)
	cfg := Config()
	// Longer than the suite's 1 s: a lease here must outlive any renewal
	// that a loaded CI machine stalls (one stall of 0.8 s let all four
	// leases lapse on MySQL 9.7, which syncs its binary log at every
	// commit), or a lapse would read as a stolen lease.
	cfg.LeaseTimeout = 2 * time.Second
	// A lease abandoned by a dead worker: claimed, never renewed.
	abandoned := b.Enqueue(t, "long", runtime.WithPriority(-1))
	claimed, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "dead", Lease: cfg.LeaseTimeout, Types: []string{"long"}, Max: 1})
	dbtest.Must(t, "claim", err)
	if len(claimed) != 1 || claimed[0].ID != abandoned {
		t.Fatalf("the dead worker claimed %v, want the abandoned task %d", ids(claimed), abandoned)
	}
	held, err := b.Client.Get(bg, abandoned)
	dbtest.Must(t, "get the abandoned task", err)
	leaseUntil := held.LeaseUntil

	var book Ledger
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		cfg.Clock = skewedClock{skew}
		cfg.WorkerID = fmt.Sprintf("skew%s", skew)
		owner := cfg.WorkerID
		b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{
			"long": func(ctx context.Context, task *runtime.Task) error {
				i := book.Start(task, owner)
				select {
				case <-time.After(5 * cfg.LeaseTimeout / 2): // 2.5 leases
				case <-ctx.Done():
					book.End(i)
					return ctx.Err()
				}
				// The execution ends before its commit: once the commit
				// shows SUCCESS, the ledger has the end.
				return book.EndIfFailed(i, b.H.CommitEffect(ctx, b.DB.DB, task, owner, func() { book.End(i) }))
			},
		})
	}
	var long []runtime.TaskID
	for range 4 {
		long = append(long, b.Enqueue(t, "long"))
	}

	for _, id := range long {
		if info := b.WaitStatus(t, id, runtime.StatusSuccess, 15*time.Second); info.AttemptsUsed != 1 {
			t.Errorf("task %d used %d attempts: a skewed worker took a live lease", id, info.AttemptsUsed)
		}
	}
	info := b.WaitStatus(t, abandoned, runtime.StatusSuccess, 15*time.Second)
	bound := cfg.LeaseTimeout + cfg.RecoveryInterval + cfg.PollInterval
	if delay := info.StartedAt.Sub(leaseUntil); info.AttemptsUsed != 2 || delay < 0 || delay > bound {
		t.Errorf("abandoned task restarted %s after its lease expired (%d attempts used), bound %s", delay, info.AttemptsUsed, bound)
	}
	CheckLedger(t, book.Intervals())
	CheckEffects(t, b.DB, len(long)+1)
}
