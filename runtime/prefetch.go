package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// The claim pipeline. Slots bound the handlers that run, not the tasks a
// worker holds: a claim may take a few more tasks than there are free
// slots, and those wait, leased and renewed like running ones, in the
// worker's ready queue. A handler that returns starts the next ready task
// at once, without waiting for a claim's round trip, so the slots stay
// busy while the next claim is under way, and claims grow large enough to
// cost the database less per task.
//
// How many: as many as the slots finish in two claim round trips, from the
// recent handler run time and claim time, so a worker of slow handlers
// holds almost none ahead (a task waiting behind long handlers would be
// better run by another worker), and never more than prefetchCap. A ready
// task that waited longer than maxReadyWait goes back unstarted, without
// using an attempt, and the worker stops claiming ahead until quick
// handlers show again. A worker killed with tasks ready strands them like its
// running ones: recovery requeues them within the same bound.

// maxReadyWait is how long a claimed task may wait for a slot before the
// worker hands it back.
const maxReadyWait = 500 * time.Millisecond

// prefetchCap is the most tasks a worker of slots slots holds ahead: with
// its slots, what one claim takes at most, as a worker of 1,000 slots
// would hold. (A cap of 4 x slots held a 100-slot worker to 1.81x River's
// burn-down on PostgreSQL; this one reached 2.10x.)
func prefetchCap(slots int) int { return max(0, maxClaimBatch-slots) }

// prefetcher sizes the ready queue from what handlers and claims took
// lately (exponential moving averages, in nanoseconds).
type prefetcher struct {
	limit    int // the most tasks held ahead; 0: no pipeline
	slots    int
	avgRun   atomic.Int64
	avgClaim atomic.Int64
}

func newPrefetcher(cfg Config) *prefetcher {
	limit := prefetchCap(cfg.MaxConcurrency)
	switch {
	case cfg.Prefetch < 0:
		limit = 0
	case cfg.Prefetch > 0:
		limit = min(limit, cfg.Prefetch)
	}
	p := &prefetcher{limit: limit, slots: cfg.MaxConcurrency}
	p.avgRun.Store(int64(time.Second)) // slow until handlers show otherwise
	return p
}

// observe folds a sample into an average: a tenth of the new one.
func observe(avg *atomic.Int64, d time.Duration) {
	old := avg.Load()
	avg.Store(old + (int64(d)-old)/10)
}

func (p *prefetcher) handlerRan(d time.Duration) { observe(&p.avgRun, d) }
func (p *prefetcher) claimTook(d time.Duration)  { observe(&p.avgClaim, d) }

// slowDown records that ready tasks waited out maxReadyWait: handlers run
// longer than the average says (those still running are not in it), so
// the worker stops claiming ahead until quick handlers bring it down.
func (p *prefetcher) slowDown() {
	if p.avgRun.Load() < int64(maxReadyWait) {
		p.avgRun.Store(int64(maxReadyWait))
	}
}

// target is how many tasks to hold ahead of the slots now.
func (p *prefetcher) target() int {
	if p.limit == 0 {
		return 0
	}
	run := max(p.avgRun.Load(), int64(time.Microsecond))
	want := 2 * int64(p.slots) * p.avgClaim.Load() / run
	return int(min(want, int64(p.limit)))
}

// readyTask is a claimed execution that waits for a slot.
type readyTask struct {
	e     *execution
	since time.Time // when it was queued, on the worker's clock
}

// nextReady takes the first ready task that can still run, when a slot is
// free, and counts it as running. Callers hold w.mu.
func (w *Worker) nextReady() *execution {
	if w.running >= w.cfg.MaxConcurrency || len(w.ready) == 0 {
		return nil
	}
	r := w.ready[0]
	w.ready = w.ready[1:]
	w.running++
	return r.e
}

// startReady runs e, taken from the ready queue, unless its lease or its
// worker ended it while it waited: then it ends without its handler.
func (w *Worker) startReady(e *execution) {
	cause := context.Cause(e.ctx)
	if cause == nil {
		go e.run()
		return
	}
	w.mu.Lock()
	w.running--
	w.mu.Unlock()
	switch {
	case errors.Is(cause, ErrLeaseLost):
		e.end(OutcomeLost)
	case errors.Is(cause, ErrCancelRequested):
		ctx, cancel := context.WithTimeout(w.runCtx, e.lease)
		defer cancel()
		e.end(e.fail(ctx, cause, cause))
	default: // self-fenced or stopping: hand it back unused
		w.handBack([]*execution{e})
	}
}

// takeStaleReady removes the ready tasks that waited longer than
// maxReadyWait, or all of them with all set, and returns them.
func (w *Worker) takeStaleReady(now time.Time, all bool) []*execution {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(w.ready) && (all || now.Sub(w.ready[n].since) > maxReadyWait) {
		n++
	}
	if n > 0 && !all {
		w.prefetch.slowDown()
	}
	stale := make([]*execution, n)
	for i, r := range w.ready[:n] {
		stale[i] = r.e
	}
	w.ready = w.ready[n:]
	return stale
}

// handBack releases executions whose handlers never started, in one
// statement and without using an attempt, and ends them. A release that
// fails leaves them to recovery.
func (w *Worker) handBack(execs []*execution) {
	if len(execs) == 0 {
		return
	}
	refs := make([]driver.LeaseRef, len(execs))
	for i, e := range execs {
		refs[i] = e.ref
	}
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.LeaseTimeout)
	defer cancel()
	if _, err := w.engine.driver.ReleaseUnstarted(ctx, w.cfg.WorkerID, refs); err != nil {
		w.cfg.Logger.Error("leasegen: handing back tasks that waited for a slot failed; recovery will requeue them",
			"worker", w.cfg.WorkerID, "tasks", len(refs), "err", err)
	}
	w.stats.released.Add(int64(len(execs)))
	for _, e := range execs {
		e.end(OutcomeReleased)
	}
}
