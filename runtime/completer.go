package runtime

import (
	"context"
)

// maxCompletionBatch bounds one grouped completion statement.
const maxCompletionBatch = 512

// completeLoop groups completions: it takes every execution whose handler
// succeeded while the previous statement ran, completes them with one fenced
// statement and ends them. Under load the batches grow by themselves; an
// idle worker completes a lone task at once, with no added wait.
func (w *Worker) completeLoop() {
	defer close(w.completerDone)
	for {
		var first *execution
		select {
		case first = <-w.completions:
		case <-w.stopLoops:
			// Stop waits for the executions first; a handler that outlives
			// it completes on its own.
			return
		}
		batch := []*execution{first}
	gather:
		for len(batch) < maxCompletionBatch {
			select {
			case e := <-w.completions:
				batch = append(batch, e)
			default:
				break gather
			}
		}
		w.completeBatch(batch)
	}
}

func (w *Worker) completeBatch(batch []*execution) {
	reqs := make([]completionRequest, len(batch))
	for i, e := range batch {
		reqs[i] = completionRequest{Ref: e.ref, Result: e.resultValue()}
	}
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.LeaseTimeout)
	defer cancel()
	oks, err := w.engine.store.completeMany(ctx, w.cfg.WorkerID, reqs)
	for i, e := range batch {
		e.end(e.record(err == nil && oks[i], err, &w.stats.completed, "complete", OutcomeSuccess))
	}
}

// enqueueCompletion hands e to the completion loop, which ends it. It
// reports false once the loop has stopped. The channel is unbuffered, so a
// send succeeds only into a running loop.
func (w *Worker) enqueueCompletion(e *execution) bool {
	select {
	case w.completions <- e:
		return true
	case <-w.completerDone:
		return false
	}
}
