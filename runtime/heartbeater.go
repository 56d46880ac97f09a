package runtime

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// heartbeatLoop renews all of the worker's leases every HeartbeatInterval,
// also while a stop drains running tasks.
func (w *Worker) heartbeatLoop() {
	defer w.loopsDone.Done()
	ticker := time.NewTicker(w.cfg.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-w.stopLoops:
			return
		case <-ticker.C:
			w.heartbeat()
		}
	}
}

// heartbeat renews every active lease, with one statement per distinct
// lease length (one, unless task types set their own). Executions whose
// lease is gone are cancelled with ErrLeaseLost; those with a cancel request
// with ErrCancelRequested. A failed renewal changes nothing: each
// execution's self-fencing timer stops it before its lease can expire.
func (w *Worker) heartbeat() {
	byLease := map[time.Duration][]*execution{}
	for _, e := range w.snapshot() {
		byLease[e.lease] = append(byLease[e.lease], e)
	}
	for lease, execs := range byLease {
		w.renew(lease, execs)
	}
}

func (w *Worker) renew(lease time.Duration, execs []*execution) {
	refs := make([]driver.LeaseRef, len(execs))
	byRef := make(map[driver.LeaseRef]*execution, len(execs))
	for i, e := range execs {
		refs[i] = e.ref
		byRef[e.ref] = e
	}
	start := w.cfg.Clock.Now()
	// A slow renewal still helps until the leases it extends would expire;
	// half a lease leaves room before the self-fencing deadline.
	ctx, cancel := context.WithTimeout(w.runCtx, lease/2)
	defer cancel()
	states, err := w.engine.driver.Renew(ctx, w.cfg.WorkerID, lease, refs)
	if err != nil {
		w.stats.heartbeatFailures.Add(1)
		w.engine.observer.HeartbeatFailed(len(refs))
		w.cfg.Logger.Warn("leasegen: lease renewal failed", "worker", w.cfg.WorkerID, "tasks", len(refs), "err", err)
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
	w.engine.observer.LeasesRenewed(len(refs)-ended, held)
	for _, st := range states {
		e := byRef[st.Ref]
		switch {
		case !st.Held && (e.returned.Load() || e.completedInTransaction()):
			// The handler is done and its outcome is being (or was) written:
			// nothing runs that could be stopped, and the write is fenced.
		case !st.Held:
			w.stats.leasesLost.Add(1)
			e.cancel(ErrLeaseLost)
		case st.CancelRequested:
			e.extendFence(start)
			e.cancel(ErrCancelRequested)
		default:
			e.extendFence(start)
		}
	}
}
