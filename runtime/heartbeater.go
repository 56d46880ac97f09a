package runtime

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// heartbeater renews all of its worker's leases every interval, also
// while a stop drains running tasks.
type heartbeater struct {
	driver   driver.Driver
	observer Observer
	logger   *slog.Logger
	clock    Clock
	workerID string
	interval time.Duration
	// leases lists the executions whose leases the worker holds.
	leases         func() []*execution
	failures, lost *atomic.Int64 // the worker's counts
}

func newHeartbeater(w *Worker) *heartbeater {
	return &heartbeater{
		driver: w.engine.driver, observer: w.engine.observer, logger: w.cfg.Logger, clock: w.cfg.Clock,
		workerID: w.cfg.WorkerID, interval: w.cfg.HeartbeatInterval, leases: w.snapshot,
		failures: &w.stats.heartbeatFailures, lost: &w.stats.leasesLost,
	}
}

func (h *heartbeater) run(ctx context.Context, stop <-chan struct{}) {
	ticker := time.NewTicker(h.interval)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			h.beat(ctx)
		}
	}
}

// heartbeat renews every active lease, with one statement per distinct
// lease length (one, unless task types set their own). Executions whose
// lease is gone are cancelled with ErrLeaseLost; those with a cancel request
// with ErrCancelRequested. A failed renewal changes nothing: each
// execution's self-fencing timer stops it before its lease can expire.
func (h *heartbeater) beat(ctx context.Context) {
	byLease := map[time.Duration][]*execution{}
	for _, e := range h.leases() {
		byLease[e.lease] = append(byLease[e.lease], e)
	}
	for lease, execs := range byLease {
		h.renew(ctx, lease, execs)
	}
}

func (h *heartbeater) renew(ctx context.Context, lease time.Duration, execs []*execution) {
	refs := make([]driver.LeaseRef, len(execs))
	byRef := make(map[driver.LeaseRef]*execution, len(execs))
	for i, e := range execs {
		refs[i] = e.ref
		byRef[e.ref] = e
	}
	start := h.clock.Now()
	// A slow renewal still helps until the leases it extends would expire;
	// half a lease leaves room before the self-fencing deadline.
	ctx, cancel := context.WithTimeout(ctx, lease/2)
	defer cancel()
	states, err := h.driver.Renew(ctx, h.workerID, lease, refs)
	if err != nil {
		h.failures.Add(1)
		h.observer.HeartbeatFailed(len(refs))
		h.logger.Warn("leasegen: lease renewal failed", "worker", h.workerID, "tasks", len(refs), "err", err)
		return
	}
	// A lease that ended because its execution's outcome was just written
	// is neither renewed nor a failed renewal.
	held, ended := 0, 0
	for _, st := range states {
		e := byRef[st.Ref]
		switch {
		case st.Held:
			held++
		case e.returned.Load() || e.completedInTransaction():
			ended++
		}
	}
	h.observer.LeasesRenewed(len(refs)-ended, held)
	for _, st := range states {
		e := byRef[st.Ref]
		switch {
		case !st.Held && (e.returned.Load() || e.completedInTransaction()):
			// The handler is done and its outcome is being (or was) written:
			// nothing runs that could be stopped, and the write is fenced.
		case !st.Held:
			h.lost.Add(1)
			e.cancel(ErrLeaseLost)
		case st.CancelRequested:
			e.extendFence(start)
			e.cancel(ErrCancelRequested)
		default:
			e.extendFence(start)
		}
	}
}
