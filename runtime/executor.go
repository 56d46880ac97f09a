package runtime

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// execution is one claimed task running its handler under a lease.
type execution struct {
	w            *Worker
	h            *handler
	ref          driver.LeaseRef
	lease        time.Duration
	task         Task
	freeAttempts int
	claimedAt    time.Time // when the claim took it, on the database's clock
	// unreadable is why the task's stored metadata does not decode: the
	// handler is not called, and the task fails for good.
	unreadable error

	ctx         context.Context
	cancel      func(cause error)
	stopTimeout context.CancelFunc
	// fenceAt is when the worker's fenceWatch stops the execution, in Unix
	// nanoseconds on the worker's clock: the start of its claim or last
	// successful renewal + lease - lease/10.
	fenceAt atomic.Int64

	started  time.Time     // when the handler started, on the worker's clock
	ran      time.Duration // how long the handler ran
	returned atomic.Bool   // the handler has returned; its outcome is being written
	panicked bool          // the handler panicked (set before returned)
	// handedBack is set when Stop released the task while its handler
	// still ran: whatever the handler returns later is discarded.
	handedBack atomic.Bool

	mu            sync.Mutex
	result        string
	completedInTx bool
}

// startExecutions registers the claimed tasks, all under one lock so that
// the slots they take show at once, and runs their handlers. claimStart is
// when the claim statement was sent: a lease cannot end before
// claimStart + lease on the database's clock.
func (w *Worker) startExecutions(claimed []driver.ClaimedTask, claimStart time.Time, req driver.ClaimRequest) {
	execs := make([]*execution, len(claimed))
	for i, c := range claimed {
		execs[i] = w.newExecution(c, req.LeaseFor(c.Type))
	}
	now := w.cfg.Clock.Now()
	w.mu.Lock()
	free := max(0, w.cfg.MaxConcurrency-w.running)
	if len(w.ready) > 0 {
		free = 0 // the ready queue goes first
	}
	run := execs[:min(free, len(execs))]
	for _, e := range execs {
		w.active[e.ref] = e
	}
	for _, e := range execs[len(run):] {
		w.ready = append(w.ready, readyTask{e: e, since: now})
	}
	w.running += len(run)
	w.mu.Unlock()
	w.stats.claimed.Add(int64(len(execs)))
	for _, e := range execs {
		w.fences.set(e, claimStart) // once registered, where the watch looks
	}
	for i, e := range execs {
		w.engine.observer.TaskStarted(e.task.Type, claimed[i].StartedAt.Sub(claimed[i].AvailableAt))
	}
	for _, e := range run {
		go e.run()
	}
}

// newExecution prepares the execution of claimed task c under lease.
func (w *Worker) newExecution(c driver.ClaimedTask, lease time.Duration) *execution {
	h := w.handlers[c.Type]
	e := &execution{
		w:            w,
		h:            h,
		ref:          driver.LeaseRef{ID: c.ID, Attempt: c.Attempt},
		lease:        lease,
		freeAttempts: c.FreeAttempts,
		claimedAt:    c.StartedAt,
	}
	e.task = Task{
		ID: c.ID, Type: c.Type, Attempt: c.Attempt, MaxAttempts: c.MaxAttempts,
		Priority: c.Priority, OwnerID: c.OwnerID, IdempotencyKey: c.IdempotencyKey,
		Payload: c.Payload, exec: e,
	}
	e.task.Metadata, e.unreadable = leasetype.DecodeMetadata(c.Metadata)
	// Executions hang off a parent that is never cancelled: each one is
	// cancelled on its own (lease lost, cancel request, stop), and a
	// thousand children of one cancellable parent would all contend on it.
	ctx, cancel := context.WithCancelCause(w.execParent)
	e.cancel = cancel
	e.ctx, e.stopTimeout = context.WithTimeoutCause(ctx, cmp.Or(h.cfg.timeout, w.cfg.MaxExecutionTime), ErrExecutionTimeout)
	return e
}

// extendFence moves the self-fencing deadline after a renewal sent at start.
func (e *execution) extendFence(start time.Time) {
	e.w.fences.set(e, start)
}

// selfFence stops the execution: its lease could expire before a renewal
// gets through.
func (e *execution) selfFence() {
	if e.ctx.Err() == nil {
		e.w.stats.selfFenced.Add(1)
	}
	e.cancel(ErrLeaseExpiring)
}

// run calls the handler and has its outcome written.
func (e *execution) run() {
	e.started = e.w.cfg.Clock.Now()
	err := e.callHandler()
	e.ran = e.w.cfg.Clock.Now().Sub(e.started)
	e.w.prefetch.handlerRan(e.ran)
	e.returned.Store(true)
	e.w.handlerReturned()
	if outcome, ended := e.finish(err); ended {
		e.end(outcome)
	}
}

// end reports the execution's outcome and removes it from the worker.
func (e *execution) end(outcome string) {
	e.stopTimeout()
	e.cancel(context.Canceled)
	e.w.engine.observer.TaskFinished(e.task.Type, outcome, e.ran)
	e.w.finished(e)
}

// callHandler runs the handler, turning a panic into an error with its stack.
func (e *execution) callHandler() (err error) {
	defer func() {
		if r := recover(); r != nil {
			e.panicked = true
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if e.unreadable != nil {
		return Permanent(e.unreadable)
	}
	return e.h.fn(e.ctx, &e.task)
}

// finish records the outcome of the handler's err and returns it, with
// ended true. A success goes to the completion loop, which writes it with
// others in one statement and ends the execution: finish then returns
// ended false. Every other outcome is one fenced write here.
func (e *execution) finish(err error) (outcome string, ended bool) {
	w := e.w
	e.mu.Lock()
	result, inTx := e.result, e.completedInTx
	e.mu.Unlock()
	if err == nil && inTx {
		w.stats.completed.Add(1)
		return OutcomeSuccess, true
	}
	cause := context.Cause(e.ctx)
	if e.handedBack.Load() {
		w.cfg.Logger.Info("leasegen: handler returned after Stop handed its task back; its outcome is discarded",
			e.logAttrs("err", err)...)
		return OutcomeReleased, true
	}
	if errors.Is(cause, ErrLeaseLost) {
		w.cfg.Logger.Warn("leasegen: execution ended after its lease was lost; the result is discarded",
			e.logAttrs("err", err)...)
		return OutcomeLost, true
	}
	if err == nil && w.enqueueCompletion(e) {
		return "", false
	}
	ctx, cancel := context.WithTimeout(w.runCtx, e.lease)
	defer cancel()

	var snooze *snoozeError
	switch {
	case err == nil: // the completion loop has stopped
		ok, werr := w.engine.driver.Complete(ctx, w.engine.db, w.cfg.WorkerID, e.ref, result)
		return e.record(ok, werr, &w.stats.completed, "complete", OutcomeSuccess), true
	case errors.As(err, &snooze):
		return e.release(ctx, snooze.after, leasetype.AttemptSnoozed), true
	case errors.Is(cause, ErrWorkerStopping):
		return e.release(ctx, 0, leasetype.AttemptReleased), true
	default:
		return e.fail(ctx, err, cause), true
	}
}

func (e *execution) fail(ctx context.Context, err, cause error) string {
	w := e.w
	retry := !IsPermanent(err) && driver.AttemptsLeft(e.ref.Attempt, e.freeAttempts, e.task.MaxAttempts)
	msg := err.Error()
	if cause != nil && !errors.Is(err, cause) {
		msg = fmt.Sprintf("%s (context: %v)", msg, cause)
	}
	f := driver.Failure{Retry: retry, Message: msg}
	counter, outcome := &w.stats.failed, OutcomeFailed
	if retry {
		f.Backoff = e.h.cfg.backoff(e.attemptsUsed())
		counter, outcome = &w.stats.retried, OutcomeRetry
	}
	ok, werr := w.engine.driver.Fail(ctx, w.cfg.WorkerID, e.ref, f)
	outcome = e.record(ok, werr, counter, "fail", outcome)
	e.logFailure(outcome, msg, f.Backoff)
	if outcome == OutcomeRetry {
		e.remember(ctx, e.failureOutcome(cause), msg)
	}
	return outcome
}

// attemptsUsed counts this execution's task's attempts against MaxAttempts:
// its claims less those handed back without using one.
func (e *execution) attemptsUsed() int { return e.ref.Attempt - e.freeAttempts }

// logFailure logs a failed attempt once: WARN when the task runs again,
// ERROR when it failed for good or its handler panicked (the message then
// holds the stack).
func (e *execution) logFailure(outcome, msg string, backoff time.Duration) {
	attrs := e.logAttrs("attempts_used", e.attemptsUsed(), "max_attempts", e.task.MaxAttempts, "err", msg)
	log := e.w.cfg.Logger
	switch {
	case errors.Is(context.Cause(e.ctx), ErrCancelRequested):
		log.Info("leasegen: task cancelled while it ran", attrs...)
	case outcome == OutcomeRetry && e.panicked:
		log.Error("leasegen: handler panicked; the task will run again", append(attrs, "next_run_in", backoff)...)
	case outcome == OutcomeRetry:
		log.Warn("leasegen: task attempt failed; it will run again", append(attrs, "next_run_in", backoff)...)
	case outcome == OutcomeFailed && e.panicked:
		log.Error("leasegen: handler panicked; the task failed for good", attrs...)
	case outcome == OutcomeFailed:
		log.Error("leasegen: task failed for good", attrs...)
	}
}

// release hands the task back without using an attempt; why names the
// attempt in the task's history.
func (e *execution) release(ctx context.Context, delay time.Duration, why string) string {
	ok, err := e.w.engine.driver.Release(ctx, e.w.cfg.WorkerID, e.ref, delay)
	outcome := e.record(ok, err, &e.w.stats.released, "release", OutcomeReleased)
	if outcome == OutcomeReleased {
		e.remember(ctx, why, "")
	}
	return outcome
}

// record counts a fenced write and returns the execution's outcome; a
// rejected or failed write leaves the task to recovery, which requeues it
// after its lease expires.
func (e *execution) record(ok bool, err error, counter interface{ Add(int64) int64 }, op, outcome string) string {
	switch {
	case err != nil:
		e.w.cfg.Logger.Error("leasegen: "+op+" failed; recovery will requeue the task", e.logAttrs("err", err)...)
		return OutcomeError
	case !ok:
		e.w.stats.staleWrites.Add(1)
		e.w.cfg.Logger.Warn("leasegen: "+op+" rejected by the lease fence", e.logAttrs()...)
		return OutcomeStale
	default:
		counter.Add(1)
		return outcome
	}
}

func (e *execution) logAttrs(extra ...any) []any {
	return append([]any{"worker", e.w.cfg.WorkerID, "task_id", e.task.ID, "task_type", e.task.Type,
		"attempt", e.task.Attempt, "owner_id", e.task.OwnerID}, extra...)
}

// resultValue is the result the handler reported, if any.
func (e *execution) resultValue() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.result
}

func (e *execution) setResult(r string) {
	e.mu.Lock()
	e.result = r
	e.mu.Unlock()
}

// completedInTransaction reports whether the handler completed the task
// with CompleteTx; its lease ends with that commit.
func (e *execution) completedInTransaction() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.completedInTx
}

func (e *execution) completeTx(ctx context.Context, tx *sql.Tx) error {
	ok, err := e.w.engine.driver.Complete(ctx, tx, e.w.cfg.WorkerID, e.ref, e.resultValue())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: task %d attempt %d", ErrLeaseLost, e.task.ID, e.task.Attempt)
	}
	e.mu.Lock()
	e.completedInTx = true
	e.mu.Unlock()
	return nil
}

// remember stores e's attempt, which ended without ending its task, in
// the task's history. A failure is logged and otherwise ignored: the
// history is for people, the task's state is already written.
func (e *execution) remember(ctx context.Context, outcome, errText string) {
	rec := driver.AttemptRecord{TaskID: e.ref.ID, Attempt: e.ref.Attempt, Worker: e.w.cfg.WorkerID, StartedAt: e.claimedAt,
		Outcome: outcome, Error: errText, Duration: e.ran}
	if err := bookkeeping.RecordAttempts(ctx, e.w.engine.tables, []driver.AttemptRecord{rec}, e.w.cfg.AttemptHistory); err != nil {
		e.w.cfg.Logger.Warn("leasegen: recording an attempt in the task's history failed", e.logAttrs("err", err)...)
	}
}

// failureOutcome names, for the history, an attempt that failed with cause
// as its context's cause.
func (e *execution) failureOutcome(cause error) string {
	switch {
	case e.panicked:
		return leasetype.AttemptPanic
	case errors.Is(cause, ErrExecutionTimeout):
		return leasetype.AttemptTimedOut
	}
	return leasetype.AttemptError
}
