package runtime

import (
	"context"
	"time"
)

// maxCompletionBatch bounds one grouped completion statement.
const maxCompletionBatch = 512

// completion is one execution waiting for its fenced completion.
type completion struct {
	ref    leaseRef
	result string
	done   chan completionResult
}

type completionResult struct {
	ok  bool
	err error
}

// completeLoop groups completions: it takes every completion that arrived
// while the previous statement ran and completes them with one fenced
// statement. Under load the batches grow by themselves; an idle worker
// completes a lone task at once, with no added wait.
func (w *Worker) completeLoop() {
	defer close(w.completerDone)
	for {
		var first *completion
		select {
		case first = <-w.completions:
		case <-w.stopLoops:
			// Stop waits for the executions first, so nothing is queued now.
			return
		}
		batch := []*completion{first}
	gather:
		for len(batch) < maxCompletionBatch {
			select {
			case c := <-w.completions:
				batch = append(batch, c)
			default:
				break gather
			}
		}
		w.completeBatch(batch)
	}
}

func (w *Worker) completeBatch(batch []*completion) {
	reqs := make([]completionRequest, len(batch))
	for i, c := range batch {
		reqs[i] = completionRequest{Ref: c.ref, Result: c.result}
	}
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.LeaseTimeout)
	defer cancel()
	oks, err := w.engine.store.completeMany(ctx, w.cfg.WorkerID, reqs)
	for i, c := range batch {
		r := completionResult{err: err}
		if err == nil {
			r.ok = oks[i]
		}
		c.done <- r
	}
}

// complete completes one execution through the grouping loop, or directly
// once the worker has stopped (a handler that ignored its context).
func (w *Worker) complete(ctx context.Context, ref leaseRef, result string) (bool, error) {
	c := &completion{ref: ref, result: result, done: make(chan completionResult, 1)}
	select {
	case w.completions <- c:
	case <-w.completerDone:
		return w.engine.store.complete(ctx, w.engine.db, w.cfg.WorkerID, ref, result)
	}
	select {
	case r := <-c.done:
		return r.ok, r.err
	case <-time.After(2 * w.cfg.LeaseTimeout): // the loop is stuck on the database
		return false, context.DeadlineExceeded
	}
}
