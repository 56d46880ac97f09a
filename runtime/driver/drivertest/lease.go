package drivertest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

var bg = context.Background()

// IDs are the claimed tasks' ids.
func IDs(tasks []driver.ClaimedTask) []leasetype.TaskID {
	out := make([]leasetype.TaskID, len(tasks))
	for i, c := range tasks {
		out[i] = c.ID
	}
	return out
}

func testClaimOrderAndAvailability(t *testing.T, b *Bundle) {
	low := b.InsertOne(t, driver.NewTask{Type: "a", Priority: 1})
	high := b.InsertOne(t, driver.NewTask{Type: "a", Priority: 10})
	b.InsertOne(t, driver.NewTask{Type: "a", Priority: 100, Delay: time.Hour})
	b.InsertOne(t, driver.NewTask{Type: "a", Priority: 100, RunAt: time.Now().Add(time.Hour)})
	other := b.InsertOne(t, driver.NewTask{Type: "other", Priority: 50})
	mid := b.InsertOne(t, driver.NewTask{Type: "a", Priority: 1})

	claimedAt := time.Now()
	got := b.Claim(t, "w1", 10, "a")
	if diff := cmp.Diff([]leasetype.TaskID{high, low, mid}, IDs(got)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	for _, c := range got {
		info := b.Get(t, c.ID)
		// The claim reads the clock a statement before the UPDATE that
		// stores started_at.
		if gap := info.StartedAt.Sub(c.StartedAt); c.Attempt != 1 || info.Status != leasetype.StatusRunning || info.Attempt != 1 ||
			info.LeaseOwner != "w1" || gap < 0 || gap > time.Second {
			t.Errorf("claimed %d at attempt %d, started %v; the row reads %s attempt %d owner %q started %v",
				c.ID, c.Attempt, c.StartedAt, info.Status, info.Attempt, info.LeaseOwner, info.StartedAt)
		}
		// The lease is on the database's clock: a second from the claim,
		// less what has passed since (a stalled machine passes more).
		left := time.Duration(b.LeaseMillisLeft(t, c.ID)) * time.Millisecond
		if since := time.Since(claimedAt); left > time.Second+10*time.Millisecond || left < time.Second-since-10*time.Millisecond {
			t.Errorf("lease of %d ends in %v, %v after the claim began; want a second from the claim", c.ID, left, since)
		}
	}
	if got := b.Claim(t, "w1", 10, "other"); len(got) != 1 || got[0].ID != other {
		t.Errorf("claim of other = %v", IDs(got))
	}
}

// Claims in concurrent, committed transactions take disjoint tasks.
func testConcurrentClaimsAreDisjoint(t *testing.T, b *Bundle) {
	reqs := make([]driver.NewTask, 400)
	b.Insert(t, reqs...)

	var mu sync.Mutex
	seen := map[leasetype.TaskID]string{}
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
	id := b.InsertOne(t, driver.NewTask{Type: "a"})
	first := b.Claim(t, "w", 1, "a")[0]
	b.Expire(t, id)

	stale := driver.LeaseRef{ID: id, Attempt: first.Attempt}
	ok, err := b.Driver.Complete(bg, b.DB.DB, "w", stale, "")
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
		"complete": func() (bool, error) { return b.Driver.Complete(bg, b.DB.DB, "w", stale, "") },
		"fail":     func() (bool, error) { return b.Driver.Fail(bg, "w", stale, driver.Failure{Message: "x"}) },
		"release":  func() (bool, error) { return b.Driver.Release(bg, "w", stale, 0) },
		"other owner": func() (bool, error) {
			return b.Driver.Complete(bg, b.DB.DB, "intruder", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "")
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
	ok, err = b.Driver.Complete(bg, b.DB.DB, "w", driver.LeaseRef{ID: id, Attempt: second.Attempt}, "done")
	dbtest.Must(t, "complete current", err)
	info := b.Get(t, id)
	if !ok || info.Status != leasetype.StatusSuccess || info.Result != "done" {
		t.Errorf("current execution's completion: ok=%v status=%s result=%q", ok, info.Status, info.Result)
	}
}

func testRenewReportsEachLease(t *testing.T, b *Bundle) {
	held := b.InsertOne(t, driver.NewTask{Type: "a"})
	lost := b.InsertOne(t, driver.NewTask{Type: "a"})
	cancelled := b.InsertOne(t, driver.NewTask{Type: "a"})
	claimed := b.Claim(t, "w", 3, "a")
	refs := make([]driver.LeaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	b.Expire(t, lost)
	dbtest.Must(t, "cancel", errOf(b.Driver.Tables().TaskCancelRequest(bg, cancelled)))

	states, err := b.Driver.Renew(bg, "w", 5*time.Second, refs)
	dbtest.Must(t, "renew", err)
	got := map[leasetype.TaskID]driver.LeaseState{}
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
	requeue := b.InsertOne(t, driver.NewTask{Type: "a", MaxAttempts: 2})
	exhausted := b.InsertOne(t, driver.NewTask{Type: "a", MaxAttempts: 1})
	cancel := b.InsertOne(t, driver.NewTask{Type: "a", MaxAttempts: 5})
	b.Claim(t, "w", 3, "a")
	dbtest.Must(t, "cancel", errOf(b.Driver.Tables().TaskCancelRequest(bg, cancel)))
	for _, id := range []leasetype.TaskID{requeue, exhausted, cancel} {
		b.Expire(t, id)
	}
	rec, err := b.Driver.RecoverBatch(bg, 2)
	dbtest.Must(t, "recover", err)
	more, err := b.Driver.RecoverBatch(bg, 2)
	dbtest.Must(t, "recover", err)
	rec = append(rec, more...)
	outcomes := map[leasetype.TaskID]string{}
	for _, r := range rec {
		outcomes[r.ID] = r.Outcome
	}
	want := map[leasetype.TaskID]string{requeue: driver.RecoveryRequeued, exhausted: driver.RecoveryFailed, cancel: driver.RecoveryCancelled}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	wantStatus := map[leasetype.TaskID]leasetype.Status{requeue: leasetype.StatusQueued, exhausted: leasetype.StatusFailed, cancel: leasetype.StatusCancelled}
	for id, st := range wantStatus {
		info := b.Get(t, id)
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
	id := b.InsertOne(t, driver.NewTask{Type: "a", MaxAttempts: 1})
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
		b.InsertOne(t, driver.NewTask{Type: "limited"})
		b.InsertOne(t, driver.NewTask{Type: "free"})
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
	b.InsertOne(t, driver.NewTask{Type: "free"})
	req.GlobalLimit = 8
	got, err = b.Driver.Claim(bg, req)
	dbtest.Must(t, "claim", err)
	if len(got) != 1 {
		t.Errorf("global limit 8 with 7 running: claimed %d, want 1", len(got))
	}
	b.InsertOne(t, driver.NewTask{Type: "free"})
	if got, _ := b.Driver.Claim(bg, req); len(got) != 0 {
		t.Errorf("global limit reached: claimed %d", len(got))
	}
}

// A grouped completion completes the executions that hold their lease,
// each with its own result, and rejects the stale ones in the same batch.
func testCompleteManyFencesEachRow(t *testing.T, b *Bundle) {
	var ids []leasetype.TaskID
	for range 4 {
		ids = append(ids, b.InsertOne(t, driver.NewTask{Type: "a"}))
	}
	claimed := b.Claim(t, "w", 4, "a")
	byID := map[leasetype.TaskID]driver.ClaimedTask{}
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
	want := map[leasetype.TaskID]struct {
		status leasetype.Status
		result string
	}{ids[0]: {leasetype.StatusSuccess, "r0"}, ids[1]: {leasetype.StatusRunning, ""}, ids[2]: {leasetype.StatusRunning, ""}, ids[3]: {leasetype.StatusSuccess, ""}}
	for id, w := range want {
		info := b.Get(t, id)
		if info.Status != w.status || info.Result != w.result {
			t.Errorf("task %d: %s %q, want %s %q", id, info.Status, info.Result, w.status, w.result)
		}
	}

	// The usual batch, every execution at one attempt and none with a
	// result, which an engine may write another way, is fenced the same.
	var plain []driver.CompletionRequest
	for range 3 {
		b.InsertOne(t, driver.NewTask{Type: "b"})
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
