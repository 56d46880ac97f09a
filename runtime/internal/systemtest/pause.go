package systemtest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// A paused type is claimed by no claim, limited or not, and by no other
// engine on the database, while other types are; the idle poll does not
// see its tasks; a running task of it still completes; pausing twice keeps
// the first instant; Resume makes its tasks claimable again.
func testPauseSkipsClaims(t *testing.T, b *Bundle) {
	a1, a2, b1 := b.Enqueue(t, "a"), b.Enqueue(t, "a"), b.Enqueue(t, "b")
	running := b.Claim(t, "w0", 1, "c")
	if len(running) != 0 {
		t.Fatalf("claimed %v before any c was queued", running)
	}
	// The running task's lease must outlast the case's statements, which
	// two CPU burners stretched past a second: its end is not the subject.
	c := b.Enqueue(t, "c")
	running, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w0", Lease: testwait.Bound, Types: []string{"c"}, Max: 1})
	if err != nil || len(running) != 1 || running[0].ID != c {
		t.Fatalf("claim of c = %v, %v; want task %d", running, err, c)
	}
	dbtest.Must(t, "pause a", b.Client.Pause(bg, "a"))
	dbtest.Must(t, "pause c", b.Client.Pause(bg, "c"))
	st, err := b.Client.Stats(bg)
	dbtest.Must(t, "stats", err)
	pausedAt := st.Paused["a"]
	if len(st.Paused) != 2 || pausedAt.IsZero() || st.Paused["c"].IsZero() {
		t.Fatalf("Stats.Paused = %v, want a and c", st.Paused)
	}
	time.Sleep(5 * time.Millisecond)
	dbtest.Must(t, "pause a again", b.Client.Pause(bg, "a"))
	if st, _ := b.Client.Stats(bg); !st.Paused["a"].Equal(pausedAt) {
		t.Errorf("pausing again moved paused_at from %v to %v", pausedAt, st.Paused["a"])
	}

	if p, err := b.Driver.Probe(bg, []string{"a"}, nil); err != nil || p.Claimable {
		t.Errorf("Probe(a) while a is paused = %+v, %v; want not claimable", p, err)
	}
	if p, err := b.Driver.Probe(bg, []string{"a", "b"}, nil); err != nil || !p.Claimable {
		t.Errorf("Probe(a, b) = %+v, %v; want claimable for b", p, err)
	}
	if got := drivertest.IDs(b.Claim(t, "w1", 10, "a", "b")); !slices.Equal(got, []runtime.TaskID{b1}) {
		t.Errorf("claim of a and b while a is paused took %v, want only %d", got, b1)
	}
	dbtest.Must(t, "ensure limits", b.Driver.EnsureLimits(bg, []string{driver.GlobalScope, "a"}))
	limited, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w1", Lease: time.Second, Types: []string{"a"}, Max: 10,
		TypeLimits: map[string]int{"a": 5}, GlobalLimit: 20})
	dbtest.Must(t, "limited claim", err)
	if len(limited) != 0 {
		t.Errorf("a limited claim took %v of a paused type", drivertest.IDs(limited))
	}
	other := b.H.New(b.DB.Open(t))
	runtime.NewEngine(other) // attaches the driver, as an engine of another process would
	if got, err := other.Claim(bg, driver.ClaimRequest{Owner: "w2", Lease: time.Second, Types: []string{"a"}, Max: 10}); err != nil || len(got) != 0 {
		t.Errorf("another engine on the database claimed %v (%v) of a paused type", drivertest.IDs(got), err)
	}
	ok, err := b.Driver.Complete(bg, b.DB.DB, "w0", driver.LeaseRef{ID: running[0].ID, Attempt: running[0].Attempt}, "")
	if err != nil || !ok {
		t.Errorf("completing a running task of a paused type: %v, %v; want it completed", ok, err)
	}

	dbtest.Must(t, "resume a", b.Client.Resume(bg, "a"))
	dbtest.Must(t, "resume a again", b.Client.Resume(bg, "a"))
	if got := drivertest.IDs(b.Claim(t, "w1", 10, "a")); !slices.Equal(got, []runtime.TaskID{a1, a2}) {
		t.Errorf("claim after Resume took %v, want %d and %d", got, a1, a2)
	}
	if st, _ := b.Client.Stats(bg); len(st.Paused) != 1 {
		t.Errorf("Stats.Paused after resuming a = %v, want c alone", st.Paused)
	}
	for _, bad := range []string{"", "a b"} {
		if err := b.Client.Pause(bg, bad); !errors.Is(err, runtime.ErrInvalidTask) {
			t.Errorf("Pause(%q) = %v, want ErrInvalidTask", bad, err)
		}
	}
}

// A worker leaves the queued tasks of a paused type alone across its
// claims, and runs them once the type is resumed.
func testPausedTypeWaitsForResume(t *testing.T, b *Bundle) {
	dbtest.Must(t, "pause", b.Client.Pause(bg, "p"))
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"p": func(context.Context, *runtime.Task) error { return nil },
		"q": func(context.Context, *runtime.Task) error { return nil },
	})
	paused, other := b.Enqueue(t, "p"), b.Enqueue(t, "q")
	b.WaitStatus(t, other, runtime.StatusSuccess)
	for range 3 { // three more claims pass the paused task by
		b.WaitStatus(t, b.Enqueue(t, "q"), runtime.StatusSuccess)
	}
	if info, _ := b.Client.Get(bg, paused); info.Status != runtime.StatusQueued || info.Attempt != 0 {
		t.Fatalf("task of the paused type is %s at attempt %d after four claims of another type, want QUEUED and never claimed", info.Status, info.Attempt)
	}
	dbtest.Must(t, "resume", b.Client.Resume(bg, "p"))
	b.WaitStatus(t, paused, runtime.StatusSuccess)
}
