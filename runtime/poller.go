package runtime

import (
	"context"
	"time"
)

// minPollWait is the wait between claims while work keeps arriving: for one
// PollInterval after a claim found work. After that the wait doubles up to
// Config.PollInterval, so an idle worker sends one claim per PollInterval.
const minPollWait = 10 * time.Millisecond

// claimLinger is how long a busy worker lets slots free up before it claims
// for only a few of them: one claim for many slots costs the database about
// what a claim for one does.
const claimLinger = 2 * time.Millisecond

// pollLoop claims tasks for the worker's free slots and starts them. It
// claims again at once after a full batch, waits for a slot when all are
// busy, and backs off while the queue is empty; a wake signal (local
// enqueue, finished execution, recovery) cuts any wait short.
func (w *Worker) pollLoop(req claimRequest) {
	defer w.pollDone.Done()
	idle := minPollWait
	lastFound := w.cfg.Clock.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	// backOff is the wait after a claim that found nothing.
	backOff := func() time.Duration {
		if w.cfg.Clock.Now().Sub(lastFound) < w.cfg.PollInterval {
			return minPollWait // work arrived recently: more is likely
		}
		wait := idle
		idle = min(2*idle, w.cfg.PollInterval)
		return wait
	}
	for {
		free := w.freeSlots()
		if busy := w.cfg.MaxConcurrency - free; free > 0 && free < w.cfg.MaxConcurrency/4 && busy > 0 {
			select {
			case <-w.stopPoll:
				return
			case <-time.After(claimLinger):
			}
			free = w.freeSlots()
		}
		wait := time.Duration(0)
		if free > 0 {
			req.Max = free
			n, err := w.claimAndStart(req)
			switch {
			case err != nil:
				w.cfg.Logger.Error("leasegen: claim failed", "worker", w.cfg.WorkerID, "err", err)
				wait = backOff()
			case n > 0:
				idle, lastFound = minPollWait, w.cfg.Clock.Now()
				if n == free {
					continue // maybe more: claim again at once
				}
				wait = minPollWait
			default:
				wait = backOff()
			}
		} else {
			wait = w.cfg.PollInterval
		}
		timer.Reset(wait)
		select {
		case <-w.stopPoll:
			return
		case <-w.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// claimAndStart claims up to req.Max tasks and starts an execution for each.
func (w *Worker) claimAndStart(req claimRequest) (int, error) {
	start := w.cfg.Clock.Now()
	// A claim takes milliseconds; one stuck on a stalled database must not
	// stall the poller for the driver's read timeout. A claim that commits
	// after its deadline leaves tasks that recovery requeues.
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.LeaseTimeout)
	defer cancel()
	claimed, err := w.engine.store.claim(ctx, req)
	if err != nil {
		return 0, err
	}
	for _, c := range claimed {
		w.startExecution(c, start, req.leaseFor(c.Type))
	}
	return len(claimed), nil
}
