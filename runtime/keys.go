package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"time"

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
// slot of its key's rate or its fair share and went back to wait again (a
// retry, a snooze); else none (a retry or a snooze keeps a concurrency
// slot; a lost lease or a failed write leaves the task to recovery, and
// its key to ReleaseStalledKeys).
func (e *execution) endedKey(outcome string) driver.FlowKey {
	switch {
	case e.task.ConcurrencyKey == "":
	case outcome == OutcomeSuccess || outcome == OutcomeFailed,
		e.keyRewaits && (outcome == OutcomeRetry || outcome == OutcomeReleased):
		return driver.FlowKey{Type: e.task.Type, Key: e.task.ConcurrencyKey}
	}
	return driver.FlowKey{}
}

// startedKeys is the keys of the claimed tasks that used a slot of their
// key's rate or their fair key's share of the queue: a release gives the
// slots' next starts to the tasks waiting behind them, due a window after
// these, and queues a fair key's next tasks at the back of the queue.
func startedKeys(claimed []driver.ClaimedTask) []driver.FlowKey {
	var keys []driver.FlowKey
	for _, c := range claimed {
		if c.KeyRated || c.KeyShared {
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
func (x *executor) releaseLoop(_ context.Context, stop <-chan struct{}) {
	x.keyReleases.serve(stop, maxKeyRelease, x.releaseKeys)
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
