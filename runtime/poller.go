package runtime

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// minPollWait is the wait between claims while work keeps arriving: for one
// PollInterval after a claim found work. After that the wait doubles up to
// Config.PollInterval, so an idle worker polls once per PollInterval.
const minPollWait = 10 * time.Millisecond

// maxClaimBatch bounds the tasks one claim takes: its statements name every
// task it takes (SQLite allows 32,766 parameters a statement), and a bigger
// batch saves little.
const maxClaimBatch = 1000

// claimLinger is how long a busy worker lets slots free up before it claims
// for only a few of them: one claim for many slots costs the database about
// what a claim for one does.
const claimLinger = 2 * time.Millisecond

// pollState is what the poll loop remembers between polls.
type pollState struct {
	clock        Clock
	pollInterval time.Duration
	idleWait     time.Duration // the next wait while nothing is found
	lastFound    time.Time
	// empty is set when the last poll found nothing: the next one that no
	// wake signal prompted only probes, with one cheap statement.
	empty bool
	// outage spaces polls out while the database fails them.
	outage *outage
}

// found records a claim that found work.
func (p *pollState) found() {
	p.idleWait, p.lastFound, p.empty = minPollWait, p.clock.Now(), false
}

// nothing records a poll that found nothing and returns the wait before
// the next one: short while work arrived recently, then doubling up to
// PollInterval.
func (p *pollState) nothing() time.Duration {
	p.empty = true
	if p.clock.Now().Sub(p.lastFound) < p.pollInterval {
		return minPollWait // work arrived recently: more is likely
	}
	wait := p.idleWait
	p.idleWait = min(2*p.idleWait, p.pollInterval)
	return wait
}

// poller claims tasks for its worker's free slots and starts them. It
// claims again at once after a full batch, waits for a slot when all are
// busy, and backs off while the queue is empty; a wake signal (local
// enqueue, finished handler, recovery) cuts any wait short.
type poller struct {
	driver   driver.Driver
	logger   *slog.Logger
	clock    Clock
	workerID string
	req      driver.ClaimRequest // the worker's claim; Max is set per claim
	slots    int                 // MaxConcurrency
	interval time.Duration       // PollInterval: the longest idle wait
	timeout  time.Duration       // bounds each statement: LeaseTimeout
	state    pollState
	// wake cuts a wait short; freeSlots counts the slots a claim may fill;
	// start runs the claimed tasks' executions.
	wake       <-chan struct{}
	freeSlots  func() int
	start      func(claimed []driver.ClaimedTask, claimStart time.Time, req driver.ClaimRequest)
	lateClaims *atomic.Int64 // the worker's count
	// claimTook feeds the claim pipeline's sizing; takeStale and handBack
	// return the ready tasks that waited too long for a slot.
	claimTook func(time.Duration)
	takeStale func(now time.Time, all bool) []*execution
	handBack  func([]*execution)
	// peers is set while other workers are alive: claims take turns; busy
	// records that a claim found work.
	peers, busy *atomic.Bool
	// once, when set, makes the poller claim a single task, report it
	// there and stop (Worker.WorkOne).
	once chan<- claimResult
	// schedules are the worker's schedules, which the idle probe asks
	// about too; it signals scheduleDue when one is due, and records when
	// it ran in probed.
	schedules   []string
	scheduleDue chan<- struct{}
	probed      *atomic.Int64
}

// claimResult is the task a one-task poller claimed: ID 0 when none was
// due.
type claimResult struct {
	ID  TaskID
	Err error
}

func newPoller(w *Worker, req driver.ClaimRequest) *poller {
	return &poller{
		driver: w.engine.driver, logger: w.cfg.Logger, clock: w.cfg.Clock, workerID: w.cfg.WorkerID, req: req,
		slots: w.cfg.MaxConcurrency, interval: w.cfg.PollInterval, timeout: w.cfg.LeaseTimeout,
		state: pollState{clock: w.cfg.Clock, pollInterval: w.cfg.PollInterval, idleWait: minPollWait, lastFound: w.cfg.Clock.Now(),
			outage: newOutage("poll", w.cfg, w.cfg.PollInterval)},
		wake: w.wake, freeSlots: w.freeSlots, start: w.startExecutions, lateClaims: &w.stats.lateClaims,
		claimTook: w.prefetch.claimTook, takeStale: w.takeStaleReady, handBack: w.handBack,
		peers: &w.peers, busy: &w.busy, once: w.oneTask, schedules: scheduleNames(w.schedules), scheduleDue: w.scheduleDue, probed: &w.probed,
	}
}

func (p *poller) run(ctx context.Context, stop <-chan struct{}) {
	if p.once != nil {
		id, err := p.claimOne(ctx)
		p.once <- claimResult{id, err}
		return
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	woken := true // the first poll claims
	for {
		wait, stopped := p.poll(ctx, stop, woken)
		if stopped {
			return
		}
		if wait == 0 {
			woken = true
			continue
		}
		timer.Reset(wait)
		wake := p.wake
		if p.state.outage.failing() {
			wake = nil // wait out the back-off: local wake-ups would retry at the busy pace
		}
		select {
		case <-stop:
			return
		case <-wake:
			woken = true
		case <-timer.C:
			woken = false
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// poll claims for the free slots once and returns the wait before the next
// poll. After an empty poll, one that no wake signal prompted first probes
// for claimable work with one cheap statement, so that an idle worker costs
// the database a single index lookup per PollInterval.
func (p *poller) poll(ctx context.Context, stop <-chan struct{}, woken bool) (wait time.Duration, stopped bool) {
	p.handBack(p.takeStale(p.clock.Now(), false))
	free := p.freeSlots()
	if busy := p.slots - free; free > 0 && free < p.slots/4 && busy > 0 {
		select {
		case <-stop:
			return 0, true
		case <-time.After(claimLinger):
		}
		free = p.freeSlots()
	}
	if free <= 0 {
		return p.interval, false // a handler that returns wakes the loop
	}
	st := &p.state
	if st.empty && !woken {
		ok, err := p.probe(ctx)
		if err != nil {
			return st.outage.failed(err), false
		}
		st.outage.succeeded()
		if !ok {
			return st.nothing(), false
		}
	}
	req := p.req
	req.Max = min(free, maxClaimBatch)
	req.TakeTurns = p.peers.Load()
	n, err := p.claimAndStart(ctx, req)
	if err != nil {
		return st.outage.failed(err), false
	}
	st.outage.succeeded()
	if n == 0 {
		return st.nothing(), false
	}
	st.found()
	p.busy.Store(true)
	if n == req.Max {
		return 0, false // maybe more: claim again at once
	}
	return minPollWait, false
}

// claimOne claims one due task, starts it and returns its id: 0 when none
// was due.
func (p *poller) claimOne(ctx context.Context) (TaskID, error) {
	req := p.req
	req.Max = 1
	var id TaskID
	start := p.start
	p.start = func(claimed []driver.ClaimedTask, claimStart time.Time, req driver.ClaimRequest) {
		for _, c := range claimed {
			id = c.ID
		}
		start(claimed, claimStart, req)
	}
	_, err := p.claimAndStart(ctx, req)
	return id, err
}

// probe reports whether a task of the worker's types is claimable now,
// and tells the scheduler when one of the worker's schedules is due.
func (p *poller) probe(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	r, err := p.driver.Probe(ctx, p.req.Types, p.schedules)
	if err != nil {
		return false, err
	}
	if len(p.schedules) > 0 {
		p.probed.Store(p.clock.Now().UnixNano())
		if r.SchedulesDue {
			select {
			case p.scheduleDue <- struct{}{}:
			default:
			}
		}
	}
	return r.Claimable, nil
}

// claimAndStart claims up to req.Max tasks and starts an execution for each.
func (p *poller) claimAndStart(ctx context.Context, req driver.ClaimRequest) (int, error) {
	start := p.clock.Now()
	// A claim takes milliseconds; one stuck on a stalled database must not
	// stall the poller for the driver's read timeout. A claim that commits
	// after its deadline leaves tasks that recovery requeues.
	claimCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	claimed, err := p.driver.Claim(claimCtx, req)
	if err != nil {
		return 0, err
	}
	p.claimTook(p.clock.Now().Sub(start))
	return p.startClaimed(ctx, claimed, start, req), nil
}

// startClaimed starts the claimed tasks whose leases, begun no earlier
// than claimStart, are not yet past their self-fence point, and hands the
// others back unstarted without using an attempt: a claim whose reply came
// that late (a stalled database or network) must not call handlers with a
// context that is already done. It returns how many it started.
func (p *poller) startClaimed(ctx context.Context, claimed []driver.ClaimedTask, claimStart time.Time, req driver.ClaimRequest) int {
	now := p.clock.Now()
	var late []driver.LeaseRef
	live := claimed[:0] // filtered in place: a claim of 1,000 is 180 KB
	for _, c := range claimed {
		lease := req.LeaseFor(c.Type)
		if now.Before(claimStart.Add(lease - lease/10)) {
			live = append(live, c)
		} else {
			late = append(late, driver.LeaseRef{ID: c.ID, Attempt: c.Attempt})
		}
	}
	if len(late) > 0 {
		p.releaseLate(ctx, late, now.Sub(claimStart))
	}
	p.start(live, claimStart, req)
	return len(live)
}

// releaseLate hands back the tasks of a claim that took too long. Should
// that fail too, their leases expire and recovery requeues them.
func (p *poller) releaseLate(ctx context.Context, refs []driver.LeaseRef, took time.Duration) {
	p.lateClaims.Add(int64(len(refs)))
	p.logger.Warn("leasegen: a claim's reply came past its leases' self-fence point; its tasks go back unstarted",
		"worker", p.workerID, "tasks", len(refs), "claim_took", took.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if _, err := p.driver.ReleaseUnstarted(ctx, p.workerID, refs); err != nil {
		p.logger.Error("leasegen: handing back a late claim's tasks failed; recovery will requeue them",
			"worker", p.workerID, "tasks", len(refs), "err", err)
	}
}

// outageReport is how often a loop that keeps failing logs again.
const outageReport = 10 * time.Second

// firstOutageWait is the wait after a loop's first failure in a row; it
// doubles with each failure up to the loop's own interval.
const firstOutageWait = 50 * time.Millisecond

// outage follows one loop's failures in a row. It spaces the loop's retries
// out (doubling, with jitter, up to maxWait) and keeps the log to one line
// when failures start, one per outageReport while they go on, with their
// count, and one when the loop works again.
type outage struct {
	what    string // the loop's action, as log lines name it: "poll"
	worker  string
	logger  *slog.Logger
	clock   Clock
	maxWait time.Duration

	failures         int       // in a row
	since            time.Time // when the first of them happened
	reported         time.Time // when the last line was logged
	reportedFailures int       // failures counted by then
	wait             time.Duration
}

func newOutage(what string, cfg Config, maxWait time.Duration) *outage {
	return &outage{what: what, worker: cfg.WorkerID, logger: cfg.Logger, clock: cfg.Clock, maxWait: max(maxWait, firstOutageWait)}
}

// failing reports whether the last attempt failed.
func (o *outage) failing() bool { return o.failures > 0 }

// failed records a failure and returns how long to wait before the loop
// tries again.
func (o *outage) failed(err error) time.Duration {
	now := o.clock.Now()
	o.failures++
	switch {
	case o.failures == 1:
		o.since, o.reported, o.reportedFailures, o.wait = now, now, 1, firstOutageWait
		o.logger.Error("leasegen: "+o.what+" failed; retrying with back-off", "worker", o.worker, "err", err)
	case now.Sub(o.reported) >= outageReport:
		o.logger.Error("leasegen: "+o.what+" still failing", "worker", o.worker,
			"failures", o.failures-o.reportedFailures, "in", now.Sub(o.reported).Round(time.Millisecond),
			"outage", now.Sub(o.since).Round(time.Millisecond), "err", err)
		o.reported, o.reportedFailures = now, o.failures
	}
	wait := o.wait
	o.wait = min(2*o.wait, o.maxWait)
	return wait/2 + rand.N(wait/2+1)
}

// succeeded records a success, logging the end of an outage.
func (o *outage) succeeded() {
	if o.failures == 0 {
		return
	}
	o.logger.Info("leasegen: "+o.what+" works again", "worker", o.worker,
		"failures", o.failures, "outage", o.clock.Now().Sub(o.since).Round(time.Millisecond))
	o.failures = 0
}
