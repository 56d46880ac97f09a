package runtime

import (
	"sync"
	"time"
)

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
