package systemtest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// stormConnections bounds the connections a worker opens while all its
// handlers fail at once, however loaded the machine: one for each of its
// eight loops (poller, completer, key release, heartbeater, recoverer,
// scheduler, pruner, rollup), each of which sends one statement at a time, and four
// for its executions' outcomes written one by one (runtime's
// maxSeparateWrites), far below its 200 slots.
const stormConnections = 8 + 4

// A worker whose 200 handlers all fail at the same moment writes their
// failures through a few connections of its pool: a connection for each
// opened 200 on PostgreSQL, past its default max_connections of 100, and
// the server then refused the worker's own heartbeats.
func testFailureStormUsesFewConnections(t *testing.T, b *Bundle) {
	const n = 200
	db := b.DB.Open(t)
	db.SetMaxIdleConns(1000) // none closed on its return: the pool's size at the end is its peak
	w, err := runtime.NewWorker(b.EngineOn(db), func() runtime.Config { c := Config(); c.MaxConcurrency = n; return c }())
	dbtest.Must(t, "worker", err)
	var running atomic.Int32
	var bell testwait.Bell
	release := make(chan struct{})
	dbtest.Must(t, "handle", w.Handle("storm", func(ctx context.Context, _ *runtime.Task) error {
		running.Add(1)
		bell.Ring()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return runtime.Permanent(errors.New("storm"))
	}))
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "storm", Payload: []byte(`{}`)}
	}
	_, err = b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { _ = w.Stop(bg) })
	bell.Await(t, testwait.Bound, func() bool { return running.Load() == n },
		func() string { return fmt.Sprintf("%d of %d handlers running", running.Load(), n) })
	close(release)
	b.Signals.Await(t, testwait.Bound, func() bool { return b.Signals.Finished("storm") == n },
		func() string { return fmt.Sprintf("%d of %d executions ended", b.Signals.Finished("storm"), n) })
	if failed := b.StatusCounts(t)[runtime.StatusFailed]; failed != n {
		t.Errorf("%d tasks failed, want %d", failed, n)
	}
	s := db.Stats()
	opened := s.OpenConnections + int(s.MaxIdleClosed+s.MaxIdleTimeClosed+s.MaxLifetimeClosed)
	t.Logf("the worker's pool opened %d connections", opened)
	if opened > stormConnections {
		t.Errorf("the worker's pool opened %d connections for %d failures at once, want at most %d", opened, n, stormConnections)
	}
}
