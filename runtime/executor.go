package runtime

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// executor is what a worker's executions use, built by Start from the
// worker's parts: an execution reaches nothing else of its worker.
type executor struct {
	driver   driver.Driver
	tables   driver.Tables
	db       *sql.DB
	workerID string
	logger   *slog.Logger
	clock    Clock
	observer Observer
	stats    *stats
	fences   *fenceWatch
	prefetch *prefetcher
	// completions is the completion loop's queue.
	completions *handoff[*execution]
	// keyReleases is the key release loop's queue: the keys whose tasks
	// ended.
	keyReleases *handoff[driver.FlowKey]
	// settles is the settle loop's queue: the tasks that ended whose
	// types may be workflow parents, whose children it settles.
	settles *handoff[endedTask]
	parents *parentTypes // the engine's
	// failed wraps an error of the database for a handler (Engine.failed).
	failed func(err error, what string, args ...any) error
	// spawner checks and stores the steps a handler spawns (Task.Spawn),
	// under a client's default rules.
	spawner *Client
	// keep is how many attempts of a task the history keeps.
	keep int
	// runCtx bounds the writes of an execution's outcome.
	runCtx context.Context
	// slots is the worker's count of its handlers and executions.
	slots executionSlots
	// writes bounds the executions' separate writes running at once.
	writes writeSlots
	// retry is how the executions' fenced writes run again.
	retry writeRetry
}

// executionSlots is how executions report back to their worker's count:
// a handler returned (its slot is free), an execution ended (its lease is
// no longer held).
type executionSlots interface {
	handlerReturned()
	finished(e *execution)
}

// newExecutor is what w's executions use, once Start made its run context
// and completion queue.
func (w *Worker) newExecutor() *executor {
	return &executor{
		driver: w.engine.driver, tables: w.engine.tables, db: w.engine.db, workerID: w.cfg.WorkerID,
		logger: w.cfg.Logger, clock: w.cfg.Clock, observer: w.engine.observer, stats: &w.stats,
		fences: w.fences, prefetch: w.prefetch, completions: w.completions, keyReleases: newHandoff[driver.FlowKey](), keep: w.cfg.AttemptHistory,
		settles: newHandoff[endedTask](), parents: &w.engine.parents, failed: w.engine.failed,
		spawner: &Client{engine: w.engine, cfg: ClientConfig{MaxPayloadBytes: 1 << 20, DefaultMaxAttempts: defaultMaxAttempts}},
		runCtx:  w.runCtx, slots: w, writes: make(writeSlots, maxSeparateWrites), retry: w.engine.writeRetry(),
	}
}

// execution is one claimed task running its handler under a lease.
type execution struct {
	x            *executor
	h            *handler
	ref          driver.LeaseRef
	lease        time.Duration
	task         Task
	freeAttempts int
	claimedAt    time.Time // when the claim took it, on the database's clock
	keyRewaits   bool      // it used a slot of its key's rate or its fair share: back in the queue, it waits again
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
	w.exec.handOn(startedKeys(claimed))
}

// newExecution prepares the execution of claimed task c under lease.
func (w *Worker) newExecution(c driver.ClaimedTask, lease time.Duration) *execution {
	h := w.handlers[c.Type]
	e := &execution{
		x:            w.exec,
		h:            h,
		ref:          driver.LeaseRef{ID: c.ID, Attempt: c.Attempt},
		lease:        lease,
		freeAttempts: c.FreeAttempts,
		claimedAt:    c.StartedAt,
		keyRewaits:   c.KeyRated || c.KeyShared,
	}
	e.task = Task{
		ID: c.ID, Type: c.Type, Attempt: c.Attempt, MaxAttempts: c.MaxAttempts,
		Priority: c.Priority, OwnerID: c.OwnerID, IdempotencyKey: c.IdempotencyKey,
		ConcurrencyKey: c.ConcurrencyKey, StartedAt: c.StartedAt, Payload: c.Payload, exec: e,
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
	e.x.fences.set(e, start)
}

// selfFence stops the execution: its lease could expire before a renewal
// gets through.
func (e *execution) selfFence() {
	if e.ctx.Err() == nil {
		e.x.stats.selfFenced.Add(1)
	}
	e.cancel(ErrLeaseExpiring)
}

// run calls the handler and has its outcome written.
func (e *execution) run() {
	e.started = e.x.clock.Now()
	err := e.callHandler()
	e.ran = e.x.clock.Now().Sub(e.started)
	e.x.prefetch.handlerRan(e.ran)
	e.returned.Store(true)
	e.x.slots.handlerReturned()
	if outcome, ended := e.finish(err); ended {
		e.end(outcome)
	}
}

// end reports the execution's outcome, removes it from the worker and
// hands on its key's slot when the outcome ended a keyed task.
func (e *execution) end(outcome string) {
	e.close(outcome)
	if k := e.endedKey(outcome); k.Key != "" {
		e.x.handOn([]driver.FlowKey{k})
	}
	if outcome == OutcomeSuccess || outcome == OutcomeFailed {
		e.x.settleChildren(e)
	}
}

// close reports the execution's outcome and removes it from the worker.
func (e *execution) close(outcome string) {
	e.stopTimeout()
	e.cancel(context.Canceled)
	e.x.observer.TaskFinished(e.task.Type, outcome, e.ran)
	e.x.slots.finished(e)
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
	x := e.x
	e.mu.Lock()
	result, inTx := e.result, e.completedInTx
	e.mu.Unlock()
	if err == nil && inTx {
		x.stats.completed.Add(1)
		return OutcomeSuccess, true
	}
	if err == nil && len(result) > MaxResultBytes {
		err = resultTooLarge(e.task.Type, len(result))
	}
	cause := context.Cause(e.ctx)
	if e.handedBack.Load() {
		x.logger.Info("leasegen: handler returned after Stop handed its task back; its outcome is discarded",
			e.logAttrs("err", err)...)
		return OutcomeReleased, true
	}
	if errors.Is(cause, ErrLeaseLost) {
		x.logger.Warn("leasegen: execution ended after its lease was lost; the result is discarded",
			e.logAttrs("err", err)...)
		return OutcomeLost, true
	}
	if err == nil && x.completions.push(e) {
		return "", false
	}
	ctx, cancel := context.WithTimeout(x.runCtx, e.lease)
	defer cancel()

	var snooze *snoozeError
	switch {
	case err == nil: // the completion loop has stopped
		ok, werr := e.fenced(ctx, completedBy(e.ref), func() (bool, error) { return x.driver.Complete(ctx, x.db, x.workerID, e.ref, result) })
		return e.record(ok, werr, &x.stats.completed, "complete", OutcomeSuccess), true
	case errors.As(err, &snooze):
		return e.release(ctx, snooze.after, leasetype.AttemptSnoozed), true
	case errors.Is(cause, ErrWorkerStopping):
		return e.release(ctx, 0, leasetype.AttemptReleased), true
	default:
		return e.fail(ctx, err, cause), true
	}
}

func (e *execution) fail(ctx context.Context, err, cause error) string {
	x := e.x
	retry := !IsPermanent(err) && driver.AttemptsLeft(e.ref.Attempt, e.freeAttempts, e.task.MaxAttempts)
	msg := err.Error()
	if cause != nil && !errors.Is(err, cause) {
		msg = fmt.Sprintf("%s (context: %v)", msg, cause)
	}
	f := driver.Failure{Retry: retry, Message: msg}
	counter, outcome := &x.stats.failed, OutcomeFailed
	if retry {
		f.Backoff = e.h.cfg.backoff(e.attemptsUsed())
		counter, outcome = &x.stats.retried, OutcomeRetry
	}
	ok, werr := e.fenced(ctx, e.movedOn, func() (bool, error) { return x.driver.Fail(ctx, x.workerID, e.ref, f) })
	outcome = e.record(ok, werr, counter, "fail", outcome)
	e.logFailure(outcome, msg, f.Backoff)
	if outcome == OutcomeRetry || outcome == OutcomeFailed {
		// The row tells that the last attempt failed, not how: a panic,
		// an error or a timeout.
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
	log := e.x.logger
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
	ok, err := e.fenced(ctx, e.movedOn, func() (bool, error) { return e.x.driver.Release(ctx, e.x.workerID, e.ref, delay) })
	outcome := e.record(ok, err, &e.x.stats.released, "release", OutcomeReleased)
	if outcome == OutcomeReleased {
		e.remember(ctx, why, "")
	}
	return outcome
}

// fenced runs one of e's fenced writes through retryTransient. A repeat
// that the fence rejects may follow a try that committed before its
// connection was lost: landed reads the task back and tells.
func (e *execution) fenced(ctx context.Context, landed func(TaskInfo) bool, write func() (bool, error)) (bool, error) {
	if err := e.x.writes.take(ctx); err != nil {
		return false, err
	}
	defer e.x.writes.give()
	ok, retried, err := retryTransient(ctx, e.x.retry, write)
	if err == nil && !ok && retried {
		info, readErr := e.x.tables.TaskGet(ctx, e.task.ID)
		ok = readErr == nil && landed(info)
	}
	return ok, err
}

// completedBy reports a task that the execution ref completed.
func completedBy(ref driver.LeaseRef) func(TaskInfo) bool {
	return func(t TaskInfo) bool { return t.Status == StatusSuccess && t.Attempt == ref.Attempt }
}

// movedOn reports a task that e's failure or release moved on: it left
// e's lease without a new claim, or it was claimed again while e's lease
// could not have run out (before e's self-fencing deadline), when only e's
// own write can have ended it: a quick retry claims a failed task again
// before the read that checks the write.
func (e *execution) movedOn(t TaskInfo) bool {
	switch {
	case t.Attempt == e.ref.Attempt:
		return t.Status != StatusRunning && t.Status != StatusCancelRequested
	case t.Attempt > e.ref.Attempt:
		return e.x.clock.Now().UnixNano() < e.fenceAt.Load()
	}
	return false
}

// record counts a fenced write and returns the execution's outcome; a
// rejected or failed write leaves the task to recovery, which requeues it
// after its lease expires.
func (e *execution) record(ok bool, err error, counter interface{ Add(int64) int64 }, op, outcome string) string {
	switch {
	case err != nil:
		e.logWriteFailed(op, err)
		return OutcomeError
	case !ok:
		e.x.stats.staleWrites.Add(1)
		e.x.logger.Warn("leasegen: "+op+" rejected by the lease fence", e.logAttrs()...)
		return OutcomeStale
	default:
		counter.Add(1)
		return outcome
	}
}

// writeCheckWait bounds the read that follows a failed write.
const writeCheckWait = time.Second

// logWriteFailed logs a fenced write that returned an error with what the
// task's row says now: a COMMIT that reports an error may have committed
// (PostgreSQL, a connection lost after the server committed), and then the
// task is finished, not left to recovery.
func (e *execution) logWriteFailed(op string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), writeCheckWait)
	defer cancel()
	var info TaskInfo
	readErr := e.x.writes.take(ctx)
	if readErr == nil {
		info, readErr = e.x.tables.TaskGet(ctx, e.task.ID)
		e.x.writes.give()
	}
	switch {
	case readErr == nil && info.Status.Terminal():
		e.x.logger.Warn("leasegen: "+op+" reported an error, yet the task is "+string(info.Status)+": a write committed before the error",
			e.logAttrs("err", err)...)
	case readErr == nil:
		e.x.logger.Error("leasegen: "+op+" failed; recovery will requeue the task once its lease expires",
			e.logAttrs("err", err, "status", info.Status)...)
	default:
		e.x.logger.Error("leasegen: "+op+" failed, and the task could not be read; recovery will requeue it if its lease expires unfinished",
			e.logAttrs("err", err)...)
	}
}

func (e *execution) logAttrs(extra ...any) []any {
	return append([]any{"worker", e.x.workerID, "task_id", e.task.ID, "task_type", e.task.Type,
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
	result := e.resultValue()
	if len(result) > MaxResultBytes {
		return resultTooLarge(e.task.Type, len(result))
	}
	ok, err := e.x.driver.Complete(ctx, tx, e.x.workerID, e.ref, result)
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
	rec := driver.AttemptRecord{TaskID: e.ref.ID, Attempt: e.ref.Attempt, Worker: e.x.workerID, StartedAt: e.claimedAt,
		Outcome: outcome, Error: errText, Duration: e.ran}
	err := e.x.writes.take(ctx)
	if err == nil {
		defer e.x.writes.give()
		err = bookkeeping.RecordAttempts(ctx, e.x.tables, []driver.AttemptRecord{rec}, e.x.keep)
	}
	if err != nil {
		e.x.logger.Warn("leasegen: recording an attempt in the task's history failed", e.logAttrs("err", err)...)
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
	case errors.Is(cause, ErrCancelRequested):
		return leasetype.AttemptCancelled
	}
	return leasetype.AttemptError
}
