package systemtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// BoundedStats reads at most bound+1 tasks of each status: a status with
// more is Capped and counted as bound+1; with room, it equals Stats.
func testBoundedStats(t *testing.T, b *Bundle) {
	for range 5 {
		b.Enqueue(t, "a")
	}
	for range 3 {
		b.Enqueue(t, "b", runtime.WithDelay(time.Hour))
	}
	cancelled := b.Enqueue(t, "a")
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, cancelled))
	if _, err := b.Client.BoundedStats(bg, 0); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("BoundedStats(0) = %v, want ErrInvalidConfig", err)
	}
	exact, err := b.Client.Stats(bg)
	dbtest.Must(t, "stats", err)
	roomy, err := b.Client.BoundedStats(bg, 100)
	dbtest.Must(t, "bounded stats", err)
	if len(roomy.Capped) != 0 || !sameCounts(exact.Counts, roomy.Counts) || len(roomy.OldestQueued) != 2 ||
		!roomy.OldestQueued["a"].Equal(exact.OldestQueued["a"]) || !roomy.OldestQueued["b"].Equal(exact.OldestQueued["b"]) {
		t.Errorf("BoundedStats(100) = %+v, want Stats %+v and nothing capped", roomy, exact)
	}
	// With no count stored, and the turn to count held (a worker counting,
	// say), a capped status's counts are lower bounds.
	if mine, err := b.Driver.Tables().CountTurnTake(bg, time.Hour); err != nil || !mine {
		t.Fatalf("take the turn to count: %v, %v", mine, err)
	}
	tight, err := b.Client.BoundedStats(bg, 6)
	dbtest.Must(t, "bounded stats", err)
	queued := 0
	for _, c := range tight.Counts {
		if c.Status == runtime.StatusQueued {
			queued += c.Tasks
		}
	}
	if !tight.Capped[runtime.StatusQueued] || len(tight.Capped) != 1 || queued != 7 || !tight.CountedAt.IsZero() {
		t.Errorf("BoundedStats(6) of 8 queued tasks: capped %v, %d queued counted at %v; want QUEUED capped at 7, no count stored",
			tight.Capped, queued, tight.CountedAt)
	}

	// Once a count is stored a capped status reads it: exact as of the
	// count, never below what the live read finds, and moving with the
	// next count. With none stored and the turn due, BoundedStats counts.
	dbtest.Must(t, "hand the turn back", b.Driver.Tables().CountTurnDone(bg, time.Time{}, 0, -time.Second))
	for _, c := range []struct {
		count      bool
		more, a, b int
	}{{false, 0, 5, 3}, {false, 2, 5, 3}, {true, 0, 5, 5}} {
		for range c.more {
			b.Enqueue(t, "b", runtime.WithDelay(time.Hour))
		}
		if c.count {
			dbtest.Must(t, "count", bookkeeping.CountNow(bg, b.Driver.Tables()))
		}
		st, err := b.Client.BoundedStats(bg, 6)
		dbtest.Must(t, "bounded stats", err)
		byType := map[string]int{}
		for _, n := range st.Counts {
			if n.Status == runtime.StatusQueued {
				byType[n.Type] = n.Tasks
			}
		}
		if st.CountedAt.IsZero() || time.Since(st.CountedAt).Abs() > time.Minute || byType["a"] != c.a || byType["b"] != c.b {
			t.Errorf("BoundedStats(6) with a count stored: queued %v counted at %v; want a %d, b %d, counted just now",
				byType, st.CountedAt, c.a, c.b)
		}
	}
}

// sameCounts compares two sets of counts, whatever their order.
func sameCounts(a, b []runtime.TypeStatusCount) bool {
	m := map[runtime.TypeStatusCount]int{}
	for _, c := range a {
		m[c]++
	}
	for _, c := range b {
		m[c]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// The finished tasks are counted per minute, by type and outcome, each
// minute once even when rollups race, and the counts are trimmed by age.
func testThroughputPerMinute(t *testing.T, b *Bundle) {
	ctx := context.Background()
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"ok":  func(context.Context, *runtime.Task) error { return nil },
		"bad": func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("no")) },
	})
	var ids []runtime.TaskID
	for range 4 {
		ids = append(ids, b.Enqueue(t, "ok"))
	}
	for _, id := range ids {
		b.WaitStatus(t, id, runtime.StatusSuccess)
	}
	for range 2 {
		b.WaitStatus(t, b.Enqueue(t, "bad", runtime.WithMaxAttempts(1)), runtime.StatusFailed)
	}
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, b.Enqueue(t, "unhandled")))
	// The worker's first pass also took the turn to count every task,
	// which a new database has due.
	testwait.Until(t, func() bool {
		turn, err := b.Driver.Tables().CountTurnGet(ctx)
		return err == nil && !turn.CountedAt.IsZero()
	}, func() string { return "the worker stored no count of the tasks" })

	totals := func() (ok, failed, cancelled int) {
		t.Helper()
		minutes, err := b.Client.Throughput(ctx, time.Hour)
		dbtest.Must(t, "throughput", err)
		for i, m := range minutes {
			if i > 0 && !m.Minute.After(minutes[i-1].Minute) || m.Minute.Second() != 0 {
				t.Errorf("minutes out of order or not whole: %+v", minutes)
			}
			ok, failed, cancelled = ok+m.Succeeded, failed+m.Failed, cancelled+m.Cancelled
		}
		return ok, failed, cancelled
	}
	// A negative settle counts the minute in progress, as a test must.
	_, err := bookkeeping.RollupThroughput(ctx, b.Driver.Tables(), -time.Minute, 24*time.Hour)
	dbtest.Must(t, "rollup", err)
	if ok, failed, cancelled := totals(); ok != 4 || failed != 2 || cancelled != 1 {
		t.Fatalf("counted %d succeeded, %d failed, %d cancelled; want 4, 2, 1", ok, failed, cancelled)
	}
	if n := b.DB.Int(t, "SELECT COALESCE(SUM(succeeded), 0) FROM leasegen_throughput WHERE task_type = 'ok'"); n != 4 {
		t.Errorf("type ok's rows count %d succeeded, want 4", n)
	}

	// A counted minute is not counted again; a task finishing later in it
	// is counted only when the minute changed in between.
	b.WaitStatus(t, b.Enqueue(t, "ok"), runtime.StatusSuccess)
	n, err := bookkeeping.RollupThroughput(ctx, b.Driver.Tables(), -time.Minute, 24*time.Hour)
	dbtest.Must(t, "rollup", err)
	want := 4
	if n > 0 {
		want = 5
	}
	if ok, _, _ := totals(); ok != want {
		t.Errorf("after another rollup (%d minutes counted): %d succeeded, want %d", n, ok, want)
	}

	// Rollups racing over the same minutes store each once.
	b.DB.MustExec(t, "DELETE FROM leasegen_throughput")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := bookkeeping.RollupThroughput(ctx, b.Driver.Tables(), -time.Minute, 24*time.Hour); err != nil {
				t.Errorf("racing rollup: %v", err)
			}
		})
	}
	wg.Wait()
	if ok, failed, cancelled := totals(); ok != 5 || failed != 2 || cancelled != 1 {
		t.Errorf("after racing rollups: %d succeeded, %d failed, %d cancelled; want 5, 2, 1", ok, failed, cancelled)
	}

	// keep 0 deletes every minute already begun.
	b.DB.MustExec(t, "DELETE FROM leasegen_throughput")
	_, err = bookkeeping.RollupThroughput(ctx, b.Driver.Tables(), -time.Minute, 0)
	dbtest.Must(t, "rollup", err)
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_throughput"); n != 0 {
		t.Errorf("%d rows left with keep 0", n)
	}
}
