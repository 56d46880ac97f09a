package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
)

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
				defer book.End(i)
				select {
				case <-time.After(2500 * time.Millisecond): // 2.5 leases
				case <-ctx.Done():
					return ctx.Err()
				}
				return CommitEffect(ctx, b.DB.DB, task, owner, nil)
			},
		})
	}
	var long []runtime.TaskID
	for range 4 {
		long = append(long, b.Enqueue(t, "long"))
	}

	for _, id := range long {
		if info := b.WaitStatus(t, id, runtime.StatusSuccess, 15*time.Second); info.Attempt != 1 {
			t.Errorf("task %d needed attempt %d: a skewed worker took a live lease", id, info.Attempt)
		}
	}
	info := b.WaitStatus(t, abandoned, runtime.StatusSuccess, 15*time.Second)
	bound := cfg.LeaseTimeout + cfg.RecoveryInterval + cfg.PollInterval
	if delay := info.StartedAt.Sub(leaseUntil); info.Attempt != 2 || delay < 0 || delay > bound {
		t.Errorf("abandoned task restarted %s after its lease expired (attempt %d), bound %s", delay, info.Attempt, bound)
	}
	CheckLedger(t, book.Intervals())
	CheckEffects(t, b.DB, len(long)+1)
}
