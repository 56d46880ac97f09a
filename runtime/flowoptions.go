package runtime

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leasegen/leasegen/runtime/driver"
)

// The enqueue options of flow control by key: one key a task, with any of
// a concurrency limit or sequence, a rate and a fair share.

// WithConcurrencyKey makes at most limit tasks of the task's type with
// this key run at once, across every worker: never more, not for a
// moment. The key's tasks wait (StatusWaiting) for a slot and get one in
// enqueue order (tasks that get theirs together may start in any order;
// WithSequentialKey starts them in order); a task holds its slot while
// it is queued (also while it waits out a retry's backoff or a snooze,
// unless its key has a rate or a fair share: then it waits again),
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

// WithFairnessKey makes the task's type share its claims fairly among
// its keys: each key has at most 100 x weight tasks queued at once, and
// a key's next tasks join the queue at its back as its queued ones start,
// so a key with a million tasks waiting delays another key's first task
// by about one claim batch, and busy keys share the claims in proportion
// to their weights. It limits nothing when a key is alone: its tasks
// start as fast as the workers take them. The key's other tasks wait
// (StatusWaiting) in enqueue order; a task that goes back to the queue
// after its start waits again. With WithConcurrencyKey, WithSequentialKey
// or WithKeyRate of the same key, every rule holds. weight is in
// 1..1000; the latest enqueue of a key sets it.
func WithFairnessKey(key string, weight int) EnqueueOption {
	return func(o *enqueueOptions) { o.fairKey, o.fairWeight = key, weight }
}

// fairShare is a fairness key's share of the queue per unit of weight:
// about one claim batch of a worker with the default MaxConcurrency.
const fairShare = 100

// maxFairWeight bounds a fairness key's weight.
const maxFairWeight = 1000

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

// flowKeyName is the key the flow options of o name ("" and false for none),
// or an error when they name two.
func (o enqueueOptions) flowKeyName(taskType string) (string, bool, error) {
	named := []struct {
		set       bool
		key, what string
	}{
		{o.flowKeys > 0, o.flowKey, "concurrency key"},
		{o.rate != (driver.Rate{}), o.rateKey, "rate key"},
		{o.fairWeight != 0, o.fairKey, "fairness key"},
	}
	key, what := "", ""
	for _, n := range named {
		switch {
		case !n.set:
		case what == "":
			key, what = n.key, n.what
		case n.key != key:
			return "", false, fmt.Errorf("%w: %s has %s %q and %s %q: one task has one key", ErrInvalidTask, taskType, what, key, n.what, n.key)
		}
	}
	return key, what != "", nil
}

// checkFlowKey checks the concurrency key, rate and fairness options of a
// task of taskType.
func checkFlowKey(taskType string, o enqueueOptions) error {
	if o.flowKeys > 1 {
		return fmt.Errorf("%w: %s has %d concurrency keys: set one WithConcurrencyKey or WithSequentialKey", ErrInvalidTask, taskType, o.flowKeys)
	}
	key, named, err := o.flowKeyName(taskType)
	if err != nil || !named {
		return err
	}
	if o.rate != (driver.Rate{}) {
		if problem := rateProblem(o.rate); problem != "" {
			return fmt.Errorf("%w: %s WithKeyRate %s", ErrInvalidTask, taskType, problem)
		}
	}
	switch {
	case o.fairWeight != 0 && (o.fairWeight < 1 || o.fairWeight > maxFairWeight):
		return fmt.Errorf("%w: %s fairness weight must be in 1..%d, got %d", ErrInvalidTask, taskType, maxFairWeight, o.fairWeight)
	case key == "":
		return fmt.Errorf("%w: %s concurrency key is empty: set the payload field tagged leasegen:\"concurrency_key\", or leave the option out", ErrInvalidTask, taskType)
	case len(key) > maxFlowKeyLen:
		return fmt.Errorf("%w: %s concurrency key is %d bytes, the limit is %d", ErrInvalidTask, taskType, len(key), maxFlowKeyLen)
	case !utf8.ValidString(key) || strings.ContainsRune(key, 0):
		return fmt.Errorf("%w: %s concurrency key %q must be valid UTF-8 without NUL bytes", ErrInvalidTask, taskType, key)
	case o.flowKeys > 0 && (o.keyLimit < 1 || o.keyLimit > math.MaxInt32):
		return fmt.Errorf("%w: %s concurrency key limit must be in 1..%d, got %d", ErrInvalidTask, taskType, math.MaxInt32, o.keyLimit)
	}
	return nil
}

// flowKeyOf is o's key with its rules (checkFlowKey checked them), the
// zero FlowKey for none.
func (o enqueueOptions) flowKeyOf(taskType string) driver.FlowKey {
	key, named, _ := o.flowKeyName(taskType)
	if !named {
		return driver.FlowKey{}
	}
	k := driver.FlowKey{Type: taskType, Key: key, Limit: driver.NoKeyLimit, Rate: o.rate, Share: fairShare * o.fairWeight}
	if o.flowKeys > 0 {
		k.Limit, k.Blocking = o.keyLimit, o.keyBlocking
	}
	return k
}
