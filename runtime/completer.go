package runtime

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// maxCompletionBatch bounds one grouped completion statement: what a
// worker with 1,000 slots finishes between two statements.
const maxCompletionBatch = 1000

// completionLinger is how long the completion loop lets a small batch grow
// while other handlers still run: a statement for one task costs the
// database about what one for hundreds does.
const completionLinger = 500 * time.Microsecond

// completionQueue holds the executions whose handlers succeeded until the
// completion loop writes them. Handing one over never blocks the
// execution's goroutine.
type completionQueue struct {
	mu      sync.Mutex
	pending []*execution
	stopped bool
	ready   chan struct{} // signalled when pending grows
}

func newCompletionQueue() *completionQueue {
	return &completionQueue{ready: make(chan struct{}, 1)}
}

// push queues e and reports true, or false once the loop has stopped.
func (q *completionQueue) push(e *execution) bool {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return false
	}
	q.pending = append(q.pending, e)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take removes and returns up to max queued executions, oldest first.
func (q *completionQueue) take(max int) []*execution {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), max)
	batch := make([]*execution, n)
	copy(batch, q.pending)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	return batch
}

func (q *completionQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// stop refuses further pushes and returns what is still queued.
func (q *completionQueue) stop() []*execution {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	rest := q.pending
	q.pending = nil
	return rest
}

// completeLoop groups completions: it takes every execution whose handler
// succeeded while the previous statement ran, completes them with one
// fenced statement and ends them. Under load the batches grow by
// themselves; a lone task completes at once, and a small batch waits at
// most completionLinger for handlers that are still running.
func (w *Worker) completeLoop() {
	defer w.loopsDone.Done()
	q := w.completions
	for {
		select {
		case <-q.ready:
		case <-w.stopLoops:
			// Stop waits for the executions first: whatever is left came
			// from handlers that outlived it.
			for batch := range slices.Chunk(q.stop(), maxCompletionBatch) {
				w.completeBatch(batch)
			}
			return
		}
		w.lingerForCompletions()
		for {
			batch := q.take(maxCompletionBatch)
			if len(batch) == 0 {
				break
			}
			w.completeBatch(batch)
		}
	}
}

// lingerForCompletions waits up to completionLinger while the queued
// completions are fewer than the handlers still running.
func (w *Worker) lingerForCompletions() {
	enough := func() bool {
		queued := w.completions.len()
		return queued >= maxCompletionBatch || queued >= w.runningHandlers()
	}
	if enough() {
		return
	}
	timer := time.NewTimer(completionLinger)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return
		case <-w.completions.ready:
			if enough() {
				return
			}
		}
	}
}

func (w *Worker) completeBatch(batch []*execution) {
	reqs := make([]driver.CompletionRequest, len(batch))
	for i, e := range batch {
		reqs[i] = driver.CompletionRequest{Ref: e.ref, Result: e.resultValue()}
	}
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.LeaseTimeout)
	defer cancel()
	oks, err := w.engine.driver.CompleteMany(ctx, w.cfg.WorkerID, reqs)
	for i, e := range batch {
		e.end(e.record(err == nil && oks[i], err, &w.stats.completed, "complete", OutcomeSuccess))
	}
}

// enqueueCompletion hands e to the completion loop, which ends it. It
// reports false once the loop has stopped.
func (w *Worker) enqueueCompletion(e *execution) bool {
	return w.completions.push(e)
}
