package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Worker claims and executes tasks of the types it has handlers for. Many
// workers, in many processes on many machines, share one database; the
// database is their only coordinator.
type Worker struct {
	engine   *Engine
	cfg      Config
	handlers map[string]*handler
	stats    stats

	// wake is signalled when a local enqueue, a recovery or a finished
	// execution may have made work claimable.
	wake chan struct{}

	// heartbeatDerived is set when Config left HeartbeatInterval to its
	// default: Start shortens it to fit the shortest task type's lease.
	heartbeatDerived bool
	// reg is the worker's row in leasegen_workers, kept while it runs.
	reg driver.WorkerRegistration
	// peers is set while other workers of one of its types are alive on
	// the database (read at Start, and at a renewal of reg after claims
	// found work: busy): claims then take turns.
	peers, busy atomic.Bool

	mu      sync.Mutex
	started bool
	// active holds every execution whose lease the worker holds: its handler
	// runs, or its outcome is being written. running counts the handlers
	// that have not returned: they take the worker's slots.
	active  map[driver.LeaseRef]*execution
	running int
	// ready holds claimed executions waiting for a slot, oldest first;
	// prefetch sizes it (the claim pipeline).
	ready    []readyTask
	prefetch *prefetcher
	// stopping is set by Stop; drained is made once the poller has stopped
	// and closed when active empties.
	stopping      bool
	drained       chan struct{}
	drainedClosed bool

	// runCtx lives from Start until the end of Stop; the loops derive from
	// it. execParent carries its values without its cancellation: each
	// execution is cancelled on its own.
	runCtx     context.Context
	cancelRun  context.CancelFunc
	execParent context.Context
	// stopPoll ends the poll loop; stopLoops ends heartbeats, recovery,
	// retention and the completion loop.
	stopPoll, stopLoops chan struct{}
	pollDone, loopsDone sync.WaitGroup
	// fences stops executions whose leases renewals no longer extend.
	fences *fenceWatch
	// completions feeds the completion loop.
	completions *handoff[*execution]
	// exec is what executions use, made by Start.
	exec *executor
	// oneTask is set by WorkOne: the poller claims one task and reports
	// it here.
	oneTask chan claimResult
	// schedules are the handlers' schedules; scheduleDue and probed link
	// the poller's idle probe to the scheduler.
	schedules   []schedule
	scheduleDue chan struct{}
	probed      atomic.Int64
}

// NewWorker returns a worker on engine with cfg, after checking cfg's rules.
func NewWorker(engine *Engine, cfg Config) (*Worker, error) {
	derived := cfg.HeartbeatInterval == 0
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w := &Worker{
		engine:      engine,
		cfg:         cfg,
		handlers:    map[string]*handler{},
		wake:        make(chan struct{}, 1),
		scheduleDue: make(chan struct{}, 1),
		active:      map[driver.LeaseRef]*execution{},

		heartbeatDerived: derived,
		prefetch:         newPrefetcher(cfg),
	}
	w.fences = newFenceWatch(w)
	return w, nil
}

// ID returns the worker's lease owner id.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Stats returns what the worker did so far.
func (w *Worker) Stats() Stats {
	s := w.stats.snapshot()
	s.ConflictRetries = w.engine.conflictRetries.Load()
	return s
}

// Handle registers fn for taskType. It must be called before Start, once
// per type.
func (w *Worker) Handle(taskType string, fn HandlerFunc, opts ...HandlerOption) error {
	h, err := newHandler(taskType, fn, opts)
	if err != nil {
		return err
	}
	for _, mw := range slices.Backward(w.cfg.Middleware) {
		h.fn = mw(h.fn)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return fmt.Errorf("%w: Handle(%q) after Start", ErrWorkerStarted, taskType)
	}
	if _, dup := w.handlers[taskType]; dup {
		return fmt.Errorf("%w: task type %q registered twice", ErrInvalidConfig, taskType)
	}
	w.handlers[taskType] = h
	return nil
}

// Start checks the database and starts the poll, heartbeat and recovery
// loops. ctx bounds the start only; the worker runs until Stop.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return ErrWorkerStopped
	}
	if w.started {
		return ErrWorkerStarted
	}
	if len(w.handlers) == 0 {
		return fmt.Errorf("%w: no handlers registered", ErrInvalidConfig)
	}
	if err := w.fitHeartbeat(); err != nil {
		return err
	}
	if err := w.engine.driver.Check(ctx); err != nil {
		return w.engine.classify(err)
	}
	for _, note := range w.engine.driver.Notes() {
		w.cfg.Logger.Info("leasegen: "+note, "worker", w.cfg.WorkerID)
	}
	if err := w.engine.requireSchema(ctx); err != nil {
		return err
	}
	req := w.claimTemplate()
	if req.Planned() || w.oneTask != nil {
		// A waiting task would hold a limit's slot, or have used a start
		// of a rate, without running.
		w.prefetch.limit = 0
	}
	if err := w.engine.driver.EnsureLimits(ctx, req.LimitScopes()); err != nil {
		return w.engine.classify(err)
	}
	if err := w.engine.driver.EnsureRates(ctx, req.TypeRates); err != nil {
		return w.engine.classify(err)
	}
	schedules, err := w.collectSchedules()
	if err != nil {
		return err
	}
	w.schedules = schedules
	w.reg = w.registration(req)
	if err := bookkeeping.RegisterWorker(ctx, w.engine.tables, w.reg, heldHere(w.engine.db, w.reg.ID)); err != nil {
		return w.engine.classify(err)
	}
	if err := w.registerSchedules(ctx); err != nil {
		_ = bookkeeping.UnregisterWorker(context.WithoutCancel(ctx), w.engine.tables, w.reg.ID)
		return err
	}
	w.lookForPeers(ctx)
	localWorkers.Store(localWorker{w.engine.db, w.reg.ID}, true)
	w.started = true
	w.runCtx, w.cancelRun = context.WithCancel(context.WithoutCancel(ctx))
	w.execParent = context.WithoutCancel(w.runCtx)
	w.stopPoll, w.stopLoops = make(chan struct{}), make(chan struct{})
	w.completions = newHandoff[*execution]()
	w.exec = w.newExecutor()
	w.goService(newCompleter(w).run)
	w.goService(w.exec.releaseLoop)
	w.goService(w.exec.settleLoop)
	w.engine.driver.Subscribe(w.wake, req.Types)
	poll := newPoller(w, req)
	w.pollDone.Go(func() { poll.run(w.runCtx, w.stopPoll) })
	w.goService(newHeartbeater(w).run)
	w.goService(newRecoverer(w).run)
	if len(w.schedules) > 0 && w.oneTask == nil {
		w.goService(newScheduler(w).run)
	}
	if w.cfg.Retention > 0 {
		w.goService((&bookkeeping.Pruner{
			Tables: w.engine.tables, Logger: w.cfg.Logger, WorkerID: w.cfg.WorkerID, Retention: w.cfg.Retention,
			Interval: w.cfg.RetentionInterval, Bound: max(w.cfg.RetentionInterval, w.cfg.LeaseTimeout),
			Batch: bookkeeping.PruneBatch, Pause: w.cfg.RecoveryPause, Pruned: &w.stats.pruned,
		}).Run)
	}
	if w.oneTask == nil {
		w.goService((&bookkeeping.RollupLoop{Tables: w.engine.tables, Logger: w.cfg.Logger, WorkerID: w.cfg.WorkerID}).Run)
	}
	return nil
}

// service is one of the worker's loops: the poller, the completer, the
// key release loop, the heartbeater, the recoverer, the pruner, the rollup. It returns once stop is closed;
// its statements run under ctx.
type service func(ctx context.Context, stop <-chan struct{})

// goService runs s until Stop closes stopLoops, after the executions
// drained; Stop waits for it. The poller stops first, on stopPoll.
func (w *Worker) goService(s service) {
	w.loopsDone.Go(func() { s(w.runCtx, w.stopLoops) })
}

// WorkOne is for tests of a service's handlers: it starts the worker,
// claims one due task of its types and runs it as any worker would (its
// lease renewed, its outcome written under the fence, an idempotent
// handler's writes committed with its completion), then stops the worker
// and returns the task as its outcome left it: SUCCESS, FAILED, or QUEUED
// for a retry or a snooze. With no task due it returns ErrNoTaskDue. Like
// Start, it runs once per Worker; ctx bounds the start and the stop.
func (w *Worker) WorkOne(ctx context.Context) (TaskInfo, error) {
	w.mu.Lock()
	if !w.started && !w.stopping {
		w.oneTask = make(chan claimResult, 1)
	}
	w.mu.Unlock()
	if err := w.Start(ctx); err != nil {
		return TaskInfo{}, err
	}
	res := <-w.oneTask
	if err := w.Stop(ctx); err != nil {
		return TaskInfo{}, err
	}
	switch {
	case res.Err != nil:
		return TaskInfo{}, w.engine.classify(res.Err)
	case res.ID == 0:
		return TaskInfo{}, ErrNoTaskDue
	}
	info, err := w.engine.tables.TaskGet(ctx, res.ID)
	return info, w.engine.classify(err)
}

// fitHeartbeat fits the heartbeat to the shortest task type's lease: a
// derived interval becomes a sixth of it; a configured one must stay below
// half of it.
func (w *Worker) fitHeartbeat() error {
	for _, t := range slices.Sorted(maps.Keys(w.handlers)) {
		lease := w.handlers[t].cfg.lease
		switch {
		case lease == 0: // the type uses LeaseTimeout, which Config already checked
		case w.heartbeatDerived:
			w.cfg.HeartbeatInterval = min(w.cfg.HeartbeatInterval, lease/6)
		case w.cfg.HeartbeatInterval >= lease/2:
			return configError("HeartbeatInterval", fmt.Sprintf("must be < half of task type %q's lease (%s): set it to at most %s, or leave it 0 to derive it from the shortest lease",
				t, lease/2, (lease/4).Round(time.Millisecond)), w.cfg.HeartbeatInterval)
		}
	}
	return nil
}

// claimTemplate is the part of every claim request that never changes.
func (w *Worker) claimTemplate() driver.ClaimRequest {
	req := driver.ClaimRequest{
		Owner:       w.cfg.WorkerID,
		Lease:       w.cfg.LeaseTimeout,
		Types:       slices.Sorted(maps.Keys(w.handlers)),
		TypeLimits:  map[string]int{},
		TypeRates:   map[string]driver.Rate{},
		TypeLeases:  map[string]time.Duration{},
		GlobalLimit: w.cfg.GlobalLimit,
	}
	for t, h := range w.handlers {
		if h.cfg.concurrency > 0 {
			req.TypeLimits[t] = h.cfg.concurrency
		}
		if h.cfg.rate.Limit > 0 {
			req.TypeRates[t] = h.cfg.rate
		}
		if h.cfg.lease > 0 {
			req.TypeLeases[t] = h.cfg.lease
		}
	}
	return req
}

// Stop stops claiming, keeps renewing leases while running tasks drain, and
// when ctx ends first, cancels the remaining executions and releases their
// leases so other workers take them at once. It returns ctx's error when
// executions had to be cancelled.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if !w.started || w.stopping {
		w.mu.Unlock()
		return nil
	}
	w.stopping = true
	w.mu.Unlock()

	w.engine.driver.Unsubscribe(w.wake)
	close(w.stopPoll)
	w.pollDone.Wait()
	w.handBack(w.takeStaleReady(w.cfg.Clock.Now(), true)) // other workers may run them at once

	w.mu.Lock()
	w.drained = make(chan struct{})
	w.closeDrainedIfEmpty()
	w.mu.Unlock()

	var stopErr error
	select {
	case <-w.drained:
	case <-ctx.Done():
		stopErr = fmt.Errorf("leasegen: stop: cancelled running tasks: %w", ctx.Err())
		w.releaseAll()
	}
	close(w.stopLoops)
	w.loopsDone.Wait()
	w.fences.stop()
	w.unregister()
	w.cancelRun()
	return stopErr
}

// unregister deletes the worker's row, so that its id is free at once; a
// row left behind expires on its own.
func (w *Worker) unregister() {
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.HeartbeatInterval)
	defer cancel()
	localWorkers.Delete(localWorker{w.engine.db, w.reg.ID})
	if err := bookkeeping.UnregisterWorker(ctx, w.engine.tables, w.reg.ID); err != nil {
		w.cfg.Logger.Warn("leasegen: deleting the worker's row failed; it expires on its own", "worker", w.reg.ID,
			"alive_for", w.reg.TTL, "err", err)
	}
}

// releaseAll cancels every execution; each releases its own lease as it
// returns. Executions whose handlers ignore their context for longer than a
// heartbeat interval are released here, so the stop stays bounded; their
// late writes fail the fence.
func (w *Worker) releaseAll() {
	for _, e := range w.snapshot() {
		e.cancel(ErrWorkerStopping)
	}
	select {
	case <-w.drained:
		return
	case <-time.After(w.cfg.HeartbeatInterval):
	}
	for _, e := range w.snapshot() {
		ctx, cancel := context.WithTimeout(w.runCtx, e.lease)
		if e.release(ctx, 0, leasetype.AttemptReleased) == OutcomeReleased { // the execution reports its own outcome when it returns
			e.handedBack.Store(true)
		}
		cancel()
	}
}

// snapshot lists the running executions.
func (w *Worker) snapshot() []*execution {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Collect(maps.Values(w.active))
}

// freeSlots is how many more tasks the worker may claim: its free slots,
// and the room left in its ready queue. A slot frees when its handler
// returns, while the outcome is still being written, so claims and outcome
// writes overlap; at most as many outcomes may wait as the slots and the
// ready queue hold.
func (w *Worker) freeSlots() int {
	holds := w.cfg.MaxConcurrency + w.prefetch.target()
	w.mu.Lock()
	defer w.mu.Unlock()
	return min(holds-w.running-len(w.ready), 2*holds-len(w.active))
}

// runningHandlers is how many handlers have not returned.
func (w *Worker) runningHandlers() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// handlerReturned frees a slot, starts the next ready task in it, and
// wakes the poller.
func (w *Worker) handlerReturned() {
	w.mu.Lock()
	w.running--
	next := w.nextReady()
	w.mu.Unlock()
	if next != nil {
		w.startReady(next)
	}
	w.signal()
}

// finished removes e from the active set and wakes the poller.
func (w *Worker) finished(e *execution) {
	w.mu.Lock()
	delete(w.active, e.ref)
	w.closeDrainedIfEmpty()
	w.mu.Unlock()
	w.signal()
}

// closeDrainedIfEmpty closes drained, once, when a stop waits for the last
// execution. Callers hold w.mu.
func (w *Worker) closeDrainedIfEmpty() {
	if w.drained != nil && len(w.active) == 0 && !w.drainedClosed {
		close(w.drained)
		w.drainedClosed = true
	}
}

func (w *Worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	if len(id) > maxLeaseOwnerLen {
		id = id[len(id)-maxLeaseOwnerLen:]
	}
	return id
}
