package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// skewedClock is a wall clock off by a fixed amount, without the monotonic
// reading, like a worker on a machine whose clock is wrong.
type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew).Round(0) }

// Workers whose clocks are ten minutes fast and slow share tasks correctly:
// a task longer than the lease keeps its first holder (nobody recovers a
// live lease), and an abandoned lease is recovered within its bound.
func TestWorkerClockSkewDoesNotMatter(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		b.db.Exec(t, effectsTable)
		cfg := testConfig()
		// A lease abandoned by a dead worker: claimed, never renewed.
		abandoned := b.enqueue(t, "long", WithPriority(-1))
		claimed, err := b.engine.store.Claim(bg, driver.ClaimRequest{Owner: "dead", Lease: cfg.LeaseTimeout, Types: []string{"long"}, Max: 1})
		dbtest.Must(t, "claim", err)
		if len(claimed) != 1 || claimed[0].ID != abandoned {
			t.Fatalf("the dead worker claimed %v, want the abandoned task %d", ids(claimed), abandoned)
		}
		held, err := b.client.Get(bg, abandoned)
		dbtest.Must(t, "get the abandoned task", err)
		leaseUntil := held.LeaseUntil

		var book ledger
		for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
			cfg.Clock = skewedClock{skew}
			cfg.WorkerID = fmt.Sprintf("skew%s", skew)
			owner := cfg.WorkerID
			b.startWorker(t, cfg, map[string]HandlerFunc{
				"long": func(ctx context.Context, task *Task) error {
					i := book.start(task, owner)
					defer book.end(i)
					select {
					case <-time.After(2500 * time.Millisecond): // 2.5 leases
					case <-ctx.Done():
						return ctx.Err()
					}
					return commitEffect(ctx, b.db.DB, task, owner, nil)
				},
			})
		}
		var long []TaskID
		for range 4 {
			long = append(long, b.enqueue(t, "long"))
		}

		for _, id := range long {
			if info := b.waitStatus(t, id, StatusSuccess, 15*time.Second); info.Attempt != 1 {
				t.Errorf("task %d needed attempt %d: a skewed worker took a live lease", id, info.Attempt)
			}
		}
		info := b.waitStatus(t, abandoned, StatusSuccess, 15*time.Second)
		bound := cfg.LeaseTimeout + cfg.RecoveryInterval + cfg.PollInterval
		if delay := info.StartedAt.Sub(leaseUntil); info.Attempt != 2 || delay < 0 || delay > bound {
			t.Errorf("abandoned task restarted %s after its lease expired (attempt %d), bound %s", delay, info.Attempt, bound)
		}
		checkLedger(t, book.intervals())
		checkEffects(t, b.db, len(long)+1)
	})
}
