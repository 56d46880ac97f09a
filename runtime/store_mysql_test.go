package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
)

var bg = context.Background()

func (b *testBundle) enqueue(t *testing.T, typ string, opts ...EnqueueOption) TaskID {
	t.Helper()
	id, err := b.client.Enqueue(bg, typ, []byte(`{}`), opts...)
	dbtest.Must(t, "enqueue", err)
	return id
}

func (b *testBundle) claim(t *testing.T, owner string, max int, types ...string) []driver.ClaimedTask {
	t.Helper()
	got, err := b.engine.store.Claim(bg, driver.ClaimRequest{Owner: owner, Lease: time.Second, Types: types, Max: max})
	dbtest.Must(t, "claim", err)
	return got
}

func ids(tasks []driver.ClaimedTask) []TaskID {
	out := make([]TaskID, len(tasks))
	for i, c := range tasks {
		out[i] = c.ID
	}
	return out
}

func TestClaimOrderAndAvailability(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		low := b.enqueue(t, "a", WithPriority(1))
		high := b.enqueue(t, "a", WithPriority(10))
		b.enqueue(t, "a", WithPriority(100), WithDelay(time.Hour))
		b.enqueue(t, "a", WithPriority(100), WithRunAt(time.Now().Add(time.Hour)))
		other := b.enqueue(t, "other", WithPriority(50))
		mid := b.enqueue(t, "a", WithPriority(1))

		got := b.claim(t, "w1", 10, "a")
		if diff := cmp.Diff([]TaskID{high, low, mid}, ids(got)); diff != "" {
			t.Errorf("claimed (-want +got):\n%s", diff)
		}
		for _, c := range got {
			info, err := b.client.Get(bg, c.ID)
			dbtest.Must(t, "get", err)
			// The claim reads the clock a statement before the UPDATE that
			// stores started_at.
			if gap := info.StartedAt.Sub(c.StartedAt); c.Attempt != 1 || info.Status != StatusRunning || info.Attempt != 1 ||
				info.LeaseOwner != "w1" || gap < 0 || gap > time.Second {
				t.Errorf("claimed %d at attempt %d, started %v; the row reads %s attempt %d owner %q started %v",
					c.ID, c.Attempt, c.StartedAt, info.Status, info.Attempt, info.LeaseOwner, info.StartedAt)
			}
			// The lease is on the database's clock: about one second from now.
			left := 1000 * b.msUntil(t, "due_at", c.ID)
			if left < 500_000 || left > 1_000_000 {
				t.Errorf("lease of %d ends in %dus, want about 1s", c.ID, left)
			}
		}
		if got := b.claim(t, "w1", 10, "other"); len(got) != 1 || got[0].ID != other {
			t.Errorf("claim of other = %v", ids(got))
		}
	})
}

// Claims in concurrent, committed transactions take disjoint tasks.
func TestConcurrentClaimsAreDisjoint(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		reqs := make([]Request, 400)
		for i := range reqs {
			reqs[i] = Request{Type: "a", Payload: []byte(`{}`)}
		}
		_, err := b.client.EnqueueMany(bg, reqs)
		dbtest.Must(t, "enqueue", err)

		var mu sync.Mutex
		seen := map[TaskID]string{}
		var wg sync.WaitGroup
		for w := range 8 {
			owner := string(rune('A' + w))
			wg.Go(func() {
				for {
					got, err := b.engine.store.Claim(bg, driver.ClaimRequest{Owner: owner, Lease: time.Minute, Types: []string{"a"}, Max: 7})
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
	})
}

// A stale execution (its lease expired and the task was claimed again, even
// by the same worker) can write nothing.
func TestFenceRejectsStaleExecution(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		id := b.enqueue(t, "a")
		first := b.claim(t, "w", 1, "a")[0]
		b.expire(t, id)

		stale := driver.LeaseRef{ID: id, Attempt: first.Attempt}
		ok, err := b.engine.store.Complete(bg, b.engine.db, "w", stale, "")
		dbtest.Must(t, "complete", err)
		if ok {
			t.Fatal("completion with an expired lease took effect")
		}
		rec, err := b.engine.store.RecoverBatch(bg, 10)
		dbtest.Must(t, "recover", err)
		if len(rec) != 1 || rec[0].Outcome != driver.RecoveryRequeued || rec[0].Overdue < time.Second {
			t.Fatalf("recovered = %+v", rec)
		}
		second := b.claim(t, "w", 1, "a")[0]
		if second.Attempt != first.Attempt+1 {
			t.Fatalf("second claim attempt = %d, want %d", second.Attempt, first.Attempt+1)
		}

		writes := map[string]func() (bool, error){
			"complete": func() (bool, error) { return b.engine.store.Complete(bg, b.engine.db, "w", stale, "") },
			"fail":     func() (bool, error) { return b.engine.store.Fail(bg, "w", stale, driver.Failure{Message: "x"}) },
			"release":  func() (bool, error) { return b.engine.store.Release(bg, "w", stale, 0) },
			"other owner": func() (bool, error) {
				return b.engine.store.Complete(bg, b.engine.db, "intruder", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "")
			},
		}
		for name, write := range writes {
			ok, err := write()
			dbtest.Must(t, name, err)
			if ok {
				t.Errorf("stale %s took effect", name)
			}
		}
		states, err := b.engine.store.Renew(bg, "w", time.Second, []driver.LeaseRef{stale})
		dbtest.Must(t, "renew", err)
		if states[0].Held {
			t.Error("renewal reports a stale execution as holding the lease")
		}
		ok, err = b.engine.store.Complete(bg, b.engine.db, "w", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "done")
		dbtest.Must(t, "complete current", err)
		info, _ := b.client.Get(bg, id)
		if !ok || info.Status != StatusSuccess || info.Result != "done" {
			t.Errorf("current execution's completion: ok=%v status=%s result=%q", ok, info.Status, info.Result)
		}
	})
}

func TestRenewReportsEachLease(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		held := b.enqueue(t, "a")
		lost := b.enqueue(t, "a")
		cancelled := b.enqueue(t, "a")
		claimed := b.claim(t, "w", 3, "a")
		refs := make([]driver.LeaseRef, len(claimed))
		for i, c := range claimed {
			refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
		}
		b.expire(t, lost)
		dbtest.Must(t, "cancel", b.client.Cancel(bg, cancelled))

		states, err := b.engine.store.Renew(bg, "w", 5*time.Second, refs)
		dbtest.Must(t, "renew", err)
		got := map[TaskID]driver.LeaseState{}
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
		left := b.msUntil(t, "due_at", held)
		if left < 4000 {
			t.Errorf("renewed lease ends in %dms, want about 5000", left)
		}
	})
}

func TestRecoveryOutcomes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		requeue := b.enqueue(t, "a", WithMaxAttempts(2))
		exhausted := b.enqueue(t, "a", WithMaxAttempts(1))
		cancel := b.enqueue(t, "a", WithMaxAttempts(5))
		b.claim(t, "w", 3, "a")
		dbtest.Must(t, "cancel", b.client.Cancel(bg, cancel))
		for _, id := range []TaskID{requeue, exhausted, cancel} {
			b.expire(t, id)
		}
		rec, err := b.engine.store.RecoverBatch(bg, 2)
		dbtest.Must(t, "recover", err)
		more, err := b.engine.store.RecoverBatch(bg, 2)
		dbtest.Must(t, "recover", err)
		rec = append(rec, more...)
		outcomes := map[TaskID]string{}
		for _, r := range rec {
			outcomes[r.ID] = r.Outcome
		}
		want := map[TaskID]string{requeue: driver.RecoveryRequeued, exhausted: driver.RecoveryFailed, cancel: driver.RecoveryCancelled}
		if diff := cmp.Diff(want, outcomes); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		wantStatus := map[TaskID]Status{requeue: StatusQueued, exhausted: StatusFailed, cancel: StatusCancelled}
		for id, st := range wantStatus {
			info, _ := b.client.Get(bg, id)
			if info.Status != st || info.LeaseUntil != (time.Time{}) {
				t.Errorf("task %d: %s lease %v, want %s and no lease", id, info.Status, info.LeaseUntil, st)
			}
			if st.Terminal() == info.FinishedAt.IsZero() {
				t.Errorf("task %d: status %s with finished_at %v", id, info.Status, info.FinishedAt)
			}
		}
		if again, _ := b.engine.store.RecoverBatch(bg, 10); len(again) != 0 {
			t.Errorf("second pass recovered %d rows", len(again))
		}
	})
}

// A released (or snoozed) claim does not use an attempt; the attempt number
// still rises, so it stays a fencing token.
func TestReleaseDoesNotUseAnAttempt(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		id := b.enqueue(t, "a", WithMaxAttempts(1))
		c := b.claim(t, "w", 1, "a")[0]
		ok, err := b.engine.store.Release(bg, "w", driver.LeaseRef{ID: id, Attempt: c.Attempt}, 0)
		dbtest.Must(t, "release", err)
		if !ok {
			t.Fatal("release rejected")
		}
		c2 := b.claim(t, "w", 1, "a")[0]
		if c2.Attempt != 2 || c2.FreeAttempts != 1 {
			t.Fatalf("after release: attempt %d free %d", c2.Attempt, c2.FreeAttempts)
		}
		if !driver.AttemptsLeft(1, 1, 1) || driver.AttemptsLeft(c2.Attempt, c2.FreeAttempts, c2.MaxAttempts) {
			t.Error("AttemptsLeft miscounts free attempts")
		}
	})
}

func TestClaimHonoursLimits(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		for range 5 {
			b.enqueue(t, "limited")
			b.enqueue(t, "free")
		}
		dbtest.Must(t, "limits", b.engine.store.EnsureLimits(bg, []string{globalScope, "limited"}))
		req := driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"free", "limited"}, Max: 100,
			TypeLimits: map[string]int{"limited": 2}}
		got, err := b.engine.store.Claim(bg, req)
		dbtest.Must(t, "claim", err)
		count := map[string]int{}
		for _, c := range got {
			count[c.Type]++
		}
		if count["limited"] != 2 || count["free"] != 5 {
			t.Errorf("claimed %v, want 2 limited and 5 free", count)
		}
		again, err := b.engine.store.Claim(bg, req)
		dbtest.Must(t, "claim", err)
		if len(again) != 0 {
			t.Errorf("claimed %d more while the limit is reached", len(again))
		}

		// The global limit counts every running task of every type.
		b.enqueue(t, "free")
		req.GlobalLimit = 8
		got, err = b.engine.store.Claim(bg, req)
		dbtest.Must(t, "claim", err)
		if len(got) != 1 {
			t.Errorf("global limit 8 with 7 running: claimed %d, want 1", len(got))
		}
		b.enqueue(t, "free")
		if got, _ := b.engine.store.Claim(bg, req); len(got) != 0 {
			t.Errorf("global limit reached: claimed %d", len(got))
		}
	})
}

func TestLimitScopesAreSorted(t *testing.T) {
	got := limitScopes(driver.ClaimRequest{Types: []string{"b", "a", "c"}, TypeLimits: map[string]int{"c": 1, "a": 1}, GlobalLimit: 3})
	if !slices.Equal(got, []string{"*", "a", "c"}) {
		t.Errorf("limitScopes = %v", got)
	}
}

// A grouped completion completes the executions that hold their lease,
// each with its own result, and rejects the stale ones in the same batch.
func TestCompleteManyFencesEachRow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		var ids []TaskID
		for range 4 {
			ids = append(ids, b.enqueue(t, "a"))
		}
		claimed := b.claim(t, "w", 4, "a")
		byID := map[TaskID]driver.ClaimedTask{}
		for _, c := range claimed {
			byID[c.ID] = c
		}
		b.expire(t, ids[1]) // lease expired
		reqs := []driver.CompletionRequest{
			{Ref: driver.LeaseRef{ID: ids[0], Attempt: byID[ids[0]].Attempt}, Result: "r0"},
			{Ref: driver.LeaseRef{ID: ids[1], Attempt: byID[ids[1]].Attempt}, Result: "r1"},
			{Ref: driver.LeaseRef{ID: ids[2], Attempt: byID[ids[2]].Attempt + 1}}, // wrong attempt
			{Ref: driver.LeaseRef{ID: ids[3], Attempt: byID[ids[3]].Attempt}},
		}
		oks, err := b.engine.store.CompleteMany(bg, "w", reqs)
		dbtest.Must(t, "complete many", err)
		if diff := cmp.Diff([]bool{true, false, false, true}, oks); diff != "" {
			t.Errorf("completions (-want +got):\n%s", diff)
		}
		if oks, _ := b.engine.store.CompleteMany(bg, "intruder", reqs[3:]); oks[0] {
			t.Error("another owner's grouped completion took effect")
		}
		want := map[TaskID]struct {
			status Status
			result string
		}{ids[0]: {StatusSuccess, "r0"}, ids[1]: {StatusRunning, ""}, ids[2]: {StatusRunning, ""}, ids[3]: {StatusSuccess, ""}}
		for id, w := range want {
			info, _ := b.client.Get(bg, id)
			if info.Status != w.status || info.Result != w.result {
				t.Errorf("task %d: %s %q, want %s %q", id, info.Status, info.Result, w.status, w.result)
			}
		}
	})
}
