package runtime

import (
	"context"
	"slices"
	"sync/atomic"
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

// completer groups completions: it takes every execution whose handler
// succeeded while the previous statement ran, completes them with one
// fenced statement and ends them. Under load the batches grow by
// themselves; a lone task completes at once, and a small batch waits at
// most completionLinger for handlers that are still running.
type completer struct {
	queue    *handoff[*execution]
	driver   driver.Driver
	retry    writeRetry
	workerID string
	timeout  time.Duration // bounds one statement: the lease
	// running counts the handlers that have not returned: completions
	// that may still join a batch.
	running   func() int
	completed *atomic.Int64 // the worker's count
}

func newCompleter(w *Worker) *completer {
	return &completer{
		queue: w.completions, driver: w.engine.driver, retry: w.engine.writeRetry(), workerID: w.cfg.WorkerID, timeout: w.cfg.LeaseTimeout,
		running: w.runningHandlers, completed: &w.stats.completed,
	}
}

func (c *completer) run(ctx context.Context, stop <-chan struct{}) {
	q := c.queue
	for {
		select {
		case <-q.ready:
		case <-stop:
			// Stop waits for the executions first: whatever is left came
			// from handlers that outlived it.
			for batch := range slices.Chunk(q.stop(), maxCompletionBatch) {
				c.complete(ctx, batch)
			}
			return
		}
		c.linger()
		for {
			batch := q.take(maxCompletionBatch)
			if len(batch) == 0 {
				break
			}
			c.complete(ctx, batch)
		}
	}
}

// linger waits up to completionLinger while the queued completions are
// fewer than the handlers still running.
func (c *completer) linger() {
	enough := func() bool {
		queued := c.queue.len()
		return queued >= maxCompletionBatch || queued >= c.running()
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
		case <-c.queue.ready:
			if enough() {
				return
			}
		}
	}
}

// complete writes one batch with one fenced statement and ends each
// execution with its outcome.
func (c *completer) complete(ctx context.Context, batch []*execution) {
	reqs := make([]driver.CompletionRequest, len(batch))
	for i, e := range batch {
		reqs[i] = driver.CompletionRequest{Ref: e.ref, Result: e.resultValue()}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	oks, retried, err := retryTransient(ctx, c.retry, func() ([]bool, error) { return c.driver.CompleteMany(ctx, c.workerID, reqs) })
	if err == nil && retried { // a try before may have committed some
		for i, e := range batch {
			if !oks[i] {
				info, readErr := c.driver.Tables().TaskGet(ctx, e.task.ID)
				oks[i] = readErr == nil && completedBy(e.ref)(info)
			}
		}
	}
	var keys []driver.FlowKey
	var ended []*execution
	for i, e := range batch {
		outcome := e.record(err == nil && oks[i], err, c.completed, "complete", OutcomeSuccess)
		e.close(outcome)
		if k := e.endedKey(outcome); k.Key != "" {
			keys = append(keys, k)
		}
		if outcome == OutcomeSuccess {
			ended = append(ended, e)
		}
	}
	x := batch[0].x
	if len(keys) > 0 {
		x.handOn(keys)
	}
	x.settleChildren(ended...)
}
