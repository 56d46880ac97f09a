package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// KeyInfo is a concurrency key with tasks in flight (Client.Keys).
type KeyInfo = leasetype.KeyInfo

// SequenceFailure is what a task of a sequence (WithSequentialKey) that
// fails for good does to the tasks behind it.
type SequenceFailure int

const (
	// SequenceContinue hands the failed task's slot on: the next task of
	// the key starts.
	SequenceContinue SequenceFailure = iota
	// SequenceBlock keeps the slot with the failed task: the tasks behind
	// it wait until an operator retries it (Client.Retry) or discards it
	// (Client.Discard).
	SequenceBlock
)

// WithConcurrencyKey makes at most limit tasks of the task's type with
// this key run at once, across every worker: never more, not for a
// moment. The key's tasks wait (StatusWaiting) for a slot and get one in
// enqueue order (tasks that get theirs together may start in any order;
// WithSequentialKey starts them in order); a task holds its slot while
// it is queued (also while it waits out a retry's backoff or a snooze),
// running or asked to cancel, and hands it on when it ends. Keys are per
// task type; the latest enqueue of a key sets its limit. Claims never
// lock or count keys.
func WithConcurrencyKey(key string, limit int) EnqueueOption {
	return func(o *enqueueOptions) {
		o.flowKeys++
		o.flowKey, o.keyLimit, o.keyBlocking = key, limit, false
	}
}

// WithSequentialKey makes the tasks of the task's type with this key run
// one at a time, each starting only after the one enqueued before it
// ended: WithConcurrencyKey(key, 1), with onFailure deciding what a task
// that fails for good does to the ones behind it. A task waiting out a
// retry's backoff or a snooze keeps its place at the head.
func WithSequentialKey(key string, onFailure SequenceFailure) EnqueueOption {
	return func(o *enqueueOptions) {
		o.flowKeys++
		o.flowKey, o.keyLimit, o.keyBlocking = key, 1, onFailure == SequenceBlock
	}
}

// WithKeyRate makes the claims of all workers start at most limit tasks
// of the task's type with this key in any window of length per (a window
// that starts at t ends before t+per), on the database's clock: a start
// is when a claim takes the task. The key's tasks wait (StatusWaiting)
// until a start of the rate is theirs, in enqueue order, and use no
// attempt meanwhile; a task that goes back to the queue after its start
// (a retry, a snooze, a lost lease) waits for another. With
// WithConcurrencyKey or WithSequentialKey of the same key both hold; alone
// it limits no concurrency. limit is at most 10,000 (use a shorter window
// for more) and per a whole number of milliseconds; the latest enqueue of
// a key sets its rate.
func WithKeyRate(key string, limit int, per time.Duration) EnqueueOption {
	return func(o *enqueueOptions) {
		o.rateKey, o.rate = key, driver.Rate{Limit: limit, Window: per}
	}
}

// rateProblem says what is wrong with a rate, or returns "".
func rateProblem(r driver.Rate) string {
	switch {
	case r.Limit < 1 || r.Limit > driver.MaxRateLimit:
		return fmt.Sprintf("limit must be in 1..%d, got %d (for more, use a shorter window)", driver.MaxRateLimit, r.Limit)
	case r.Window < time.Millisecond || r.Window%time.Millisecond != 0:
		return fmt.Sprintf("window must be a positive whole number of milliseconds, got %s", r.Window)
	case r.Window > maxDelay:
		return fmt.Sprintf("window must be at most %s, got %s", maxDelay, r.Window)
	}
	return ""
}

// checkFlowKey checks the concurrency key and rate options of a task of
// taskType.
func checkFlowKey(taskType string, o enqueueOptions) error {
	if o.rate != (driver.Rate{}) {
		if problem := rateProblem(o.rate); problem != "" {
			return fmt.Errorf("%w: %s WithKeyRate %s", ErrInvalidTask, taskType, problem)
		}
		if o.flowKeys > 0 && o.rateKey != o.flowKey {
			return fmt.Errorf("%w: %s has concurrency key %q and rate key %q: one task has one key", ErrInvalidTask, taskType, o.flowKey, o.rateKey)
		}
		if o.flowKeys == 0 {
			o.flowKeys, o.flowKey, o.keyLimit = 1, o.rateKey, driver.NoKeyLimit
		}
	}
	switch {
	case o.flowKeys == 0:
		return nil
	case o.flowKeys > 1:
		return fmt.Errorf("%w: %s has %d concurrency keys: set one WithConcurrencyKey or WithSequentialKey", ErrInvalidTask, taskType, o.flowKeys)
	case o.flowKey == "":
		return fmt.Errorf("%w: %s concurrency key is empty: set the payload field tagged leasegen:\"concurrency_key\", or leave the option out", ErrInvalidTask, taskType)
	case len(o.flowKey) > maxFlowKeyLen:
		return fmt.Errorf("%w: %s concurrency key is %d bytes, the limit is %d", ErrInvalidTask, taskType, len(o.flowKey), maxFlowKeyLen)
	case !utf8.ValidString(o.flowKey) || strings.ContainsRune(o.flowKey, 0):
		return fmt.Errorf("%w: %s concurrency key %q must be valid UTF-8 without NUL bytes", ErrInvalidTask, taskType, o.flowKey)
	case o.keyLimit < 1 || o.keyLimit > math.MaxInt32:
		return fmt.Errorf("%w: %s concurrency key limit must be in 1..%d, got %d", ErrInvalidTask, taskType, math.MaxInt32, o.keyLimit)
	}
	return nil
}

// flowKeyOf is o's concurrency key with its rate, the zero FlowKey for
// none.
func (o enqueueOptions) flowKeyOf(taskType string) driver.FlowKey {
	switch {
	case o.flowKeys > 0:
		return driver.FlowKey{Type: taskType, Key: o.flowKey, Limit: o.keyLimit, Blocking: o.keyBlocking, Rate: o.rate}
	case o.rate != (driver.Rate{}):
		return driver.FlowKey{Type: taskType, Key: o.rateKey, Limit: driver.NoKeyLimit, Rate: o.rate}
	}
	return driver.FlowKey{}
}

// insertKeyed stores a batch with keyed tasks on q: in a transaction of
// its own, or in q's when q is the caller's.
func (c *Client) insertKeyed(ctx context.Context, q driver.DBTX, b bookkeeping.KeyedBatch) ([]TaskID, error) {
	tables := c.engine.tables
	if tx, ok := q.(*sql.Tx); ok {
		tables = c.engine.driver.TablesIn(tx)
	}
	return bookkeeping.InsertKeyed(ctx, tables, b)
}

// Keys lists up to limit concurrency keys with tasks in flight, by type
// and key, with how many of their tasks run, hold a slot and wait.
func (c *Client) Keys(ctx context.Context, limit int) ([]KeyInfo, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: Keys limit must be positive, got %d", ErrInvalidConfig, limit)
	}
	keys, err := c.engine.tables.FlowKeyList(ctx, limit)
	if err != nil {
		return nil, c.engine.failed(err, "list concurrency keys")
	}
	return keys, nil
}

// endedKey is the key whose slot the execution's task gave up with
// outcome: its key when it succeeded or failed for good, or when it used a
// slot of its key's rate and went back to wait for another (a retry, a
// snooze); else none (a retry or a snooze keeps a concurrency slot; a
// lost lease or a failed write leaves the task to recovery, and its key
// to ReleaseStalledKeys).
func (e *execution) endedKey(outcome string) driver.FlowKey {
	switch {
	case e.task.ConcurrencyKey == "":
	case outcome == OutcomeSuccess || outcome == OutcomeFailed,
		e.keyRated && (outcome == OutcomeRetry || outcome == OutcomeReleased):
		return driver.FlowKey{Type: e.task.Type, Key: e.task.ConcurrencyKey}
	}
	return driver.FlowKey{}
}

// startedRateKeys is the keys of the claimed tasks that used a slot of
// their key's rate: a release gives the slots' next starts to the tasks
// waiting behind them, due a window after these.
func startedRateKeys(claimed []driver.ClaimedTask) []driver.FlowKey {
	var keys []driver.FlowKey
	for _, c := range claimed {
		if c.KeyRated {
			keys = append(keys, driver.FlowKey{Type: c.Type, Key: c.ConcurrencyKey})
		}
	}
	return keys
}

// handOn hands the slots of keys whose tasks ended to the key release
// loop, or releases them here once the loop has stopped.
func (x *executor) handOn(keys []driver.FlowKey) {
	if len(keys) > 0 && !x.keyReleases.push(keys...) {
		x.releaseKeys(keys)
	}
}

// releaseKeys hands on the slots of keys whose tasks ended. A failure is
// logged and left to recovery's pass over stalled keys.
func (x *executor) releaseKeys(keys []driver.FlowKey) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(x.runCtx, keyReleaseWait)
	defer cancel()
	released, err := bookkeeping.ReleaseKeys(ctx, x.tables, keys)
	if err != nil {
		x.logger.Warn("leasegen: handing on concurrency key slots failed; recovery will", "worker", x.workerID, "err", err)
		return
	}
	if released > 0 {
		notifyTypes(x.driver, keys)
	}
	x.observer.KeysReleased(len(keys), released)
}

// keyReleaseWait bounds one release of key slots.
const keyReleaseWait = 10 * time.Second

// maxKeyRelease bounds the keys one release transaction locks.
const maxKeyRelease = 500

// releaseLoop is the service that hands on key slots off the executions'
// and the completion loop's paths: the keys of the tasks that end while a
// release runs go together in the next one. At stop it releases what is
// left; a key handed over later is released where it ended.
func (x *executor) releaseLoop(ctx context.Context, stop <-chan struct{}) {
	q := x.keyReleases
	for {
		select {
		case <-q.ready:
		case <-stop:
			x.releaseKeys(q.stop())
			return
		}
		for {
			keys := q.take(maxKeyRelease)
			if len(keys) == 0 {
				break
			}
			x.releaseKeys(keys)
		}
	}
}

// notifyTypes wakes the workers of the keys' task types: tasks of theirs
// became QUEUED (the pollers of this process at once; on PostgreSQL those
// of every process).
func notifyTypes(d driver.Driver, keys []driver.FlowKey) {
	notified := make(map[string]bool, 1)
	for _, k := range keys {
		if !notified[k.Type] {
			notified[k.Type] = true
			d.Notify(k.Type)
		}
	}
}
