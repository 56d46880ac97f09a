package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

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
	if started := w.startClaimed(claimed, sent, req); started != 0 || calls.Load() != 0 {
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
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err = client.Get(bg, late)
		if err != nil || info.Status == StatusSuccess || time.Now().After(deadline) {
			break
		}
	}
	if info.Status != StatusSuccess || calls.Load() != 1 || info.AttemptsUsed != 1 {
		t.Errorf("then: %s after %d handler calls with %d attempts used, %v; want SUCCESS, 1 and 1", info.Status, calls.Load(), info.AttemptsUsed, err)
	}
}
