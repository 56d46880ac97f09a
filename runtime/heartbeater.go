package runtime

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"sync"

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

// fenceWatch stops executions before their leases could expire, with one
// timer for the whole worker instead of one per execution. An execution's
// fence is the start of its claim or of its last successful renewal, plus
// its lease, minus a tenth of it. Renewals move fences forward, so the
// timer fires only when renewals failed, or early, after which it looks
// again; a worker with a thousand executions resets no timer per task.
type fenceWatch struct {
	w     *Worker
	check sync.Mutex // one look at a time

	mu    sync.Mutex
	timer *time.Timer
	at    time.Time // when the timer fires; zero while it is idle
}

func newFenceWatch(w *Worker) *fenceWatch {
	f := &fenceWatch{w: w}
	f.timer = time.AfterFunc(time.Hour, f.look)
	f.timer.Stop()
	return f
}

// set places e's fence at leaseStart + lease - lease/10, on the worker's
// clock, and makes sure the timer fires by then.
func (f *fenceWatch) set(e *execution, leaseStart time.Time) {
	at := leaseStart.Add(e.lease - e.lease/10)
	e.fenceAt.Store(at.UnixNano())
	f.schedule(at)
}

// schedule makes the timer fire no later than at.
func (f *fenceWatch) schedule(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.at.IsZero() && !at.Before(f.at) {
		return
	}
	f.at = at
	f.timer.Reset(at.Sub(f.w.cfg.Clock.Now()))
}

// look fences every execution whose fence has passed and schedules the
// next look at the earliest fence left.
func (f *fenceWatch) look() {
	f.check.Lock()
	defer f.check.Unlock()
	f.mu.Lock()
	f.at = time.Time{}
	f.mu.Unlock()
	now := f.w.cfg.Clock.Now().UnixNano()
	next := int64(0)
	for _, e := range f.w.snapshot() {
		if e.returned.Load() {
			continue // its outcome is being written, fenced by the database
		}
		at := e.fenceAt.Load()
		switch {
		case at <= now:
			e.selfFence()
		case next == 0 || at < next:
			next = at
		}
	}
	if next != 0 {
		f.schedule(time.Unix(0, next))
	}
}

// stop idles the timer; the worker calls it once every execution ended.
func (f *fenceWatch) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timer.Stop()
	f.at = time.Time{}
}
