package bookkeeping

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Concurrency keys hold their limits with slots, not with counts read at
// claim time (rates, below, hold theirs with slots too): a keyed task is inserted WAITING, and only a release under
// its key's row lock makes it QUEUED, up to the key's limit of tasks
// that hold a slot (QUEUED, RUNNING, CANCEL_REQUESTED, and FAILED when a
// failure blocks the key). Claims never look at keys, so at most that many
// run at once whatever the workers do, and a key's waiting line starts in
// enqueue order. A task that ends hands its slot on when its worker calls
// ReleaseKeys after the end; a worker that dies between the two leaves the
// key stalled until ReleaseStalledKeys, which recovery runs, finds it.
//
// A key's rate of n starts per window is n more slots, each of which
// remembers when it may start a task again. A release gives a waiting
// task a free concurrency slot and a rate slot no other queued task
// holds, and makes it due no earlier than that rate slot is free; the
// claim that starts the task moves the rate slot a window on (in the same
// transaction), and the worker then releases the key again, so the next
// waiting task gets the slot due a window after this start. No two starts
// of one slot are closer than a window, so no window holds more than n
// starts. A task that used a rate slot and goes back to the queue (a
// retry, a snooze, a lost lease) waits for a new one.

// KeyedBatch is an enqueue's tasks with their concurrency keys: Keys[i] is
// the key of Tasks[i], its zero value for an unkeyed task.
type KeyedBatch struct {
	Tasks []driver.NewTask
	Keys  []driver.FlowKey
}

// InsertKeyed inserts b's tasks in one transaction of t (a caller's, when
// t runs in one): keyed tasks wait for their keys' slots, and as many as
// have a free slot are released at once. Key rows are locked in one order,
// so concurrent enqueues do not deadlock. It returns the tasks' ids in
// order.
func InsertKeyed(ctx context.Context, t driver.Tables, b KeyedBatch) ([]leasetype.TaskID, error) {
	keys := distinctKeys(b.Keys)
	var ids []leasetype.TaskID
	err := t.InTx(ctx, func(tx driver.Tables) error {
		if err := tx.FlowKeysUpsert(ctx, keys); err != nil {
			return fmt.Errorf("lock %d concurrency keys: %w", len(keys), err)
		}
		var err error
		if ids, err = tx.TaskInsert(ctx, b.Tasks); err != nil {
			return err
		}
		var keyed []leasetype.TaskID
		var keyOf []string
		for i, id := range ids {
			if k := b.Keys[i]; k.Key != "" {
				keyed, keyOf = append(keyed, id), append(keyOf, k.Key)
			}
		}
		if _, err := tx.FlowTasksWait(ctx, keyed, keyOf); err != nil {
			return fmt.Errorf("queue %d tasks behind their keys: %w", len(keyed), err)
		}
		_, err = releaseLocked(ctx, tx, keys)
		return err
	})
	return ids, err
}

// ReleaseKeys hands the free slots of keys (a task of each ended) to their
// waiting tasks, in one transaction of t that locks the keys' rows in
// order, and returns how many tasks it released.
func ReleaseKeys(ctx context.Context, t driver.Tables, keys []driver.FlowKey) (int, error) {
	keys = distinctKeys(keys)
	if len(keys) == 0 {
		return 0, nil
	}
	var released int
	err := t.InTx(ctx, func(tx driver.Tables) error {
		var stored []driver.FlowKey
		for _, group := range byType(keys) {
			rows, err := tx.FlowKeysLock(ctx, group[0].Type, names(group))
			if err != nil {
				return fmt.Errorf("lock %d keys of %s: %w", len(group), group[0].Type, err)
			}
			stored = append(stored, rows...) // a key without a row has no task in flight
		}
		var err error
		released, err = releaseLocked(ctx, tx, stored)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: release the slots of %d concurrency keys: %w", len(keys), err)
	}
	return released, nil
}

// ReleaseStalledKeys releases the keys that have a waiting task and a free
// slot, up to batch of them, and returns how many keys it found and how
// many tasks it released.
func ReleaseStalledKeys(ctx context.Context, t driver.Tables, batch int) (keys, released int, err error) {
	stalled, err := t.FlowKeysStalled(ctx, batch)
	if err != nil {
		return 0, 0, fmt.Errorf("leasegen: find keys with free slots: %w", err)
	}
	released, err = ReleaseKeys(ctx, t, stalled)
	return len(stalled), released, err
}

// releaseLocked, with the rows of keys locked, makes QUEUED the first
// waiting tasks of each key that its free slots allow, deletes the row of
// a key with no task left in flight (no holder, and none waited), and
// returns how many tasks it released.
func releaseLocked(ctx context.Context, tx driver.Tables, keys []driver.FlowKey) (int, error) {
	released := 0
	for _, group := range byType(keys) {
		holders, err := tx.FlowKeysHolders(ctx, group[0].Type, names(group))
		if err != nil {
			return 0, fmt.Errorf("count the holders of %d keys of %s: %w", len(group), group[0].Type, err)
		}
		free := make(map[string]int, len(group))
		for _, k := range group {
			if n := freeSlots(k, holders[k.Key]); n > 0 {
				free[k.Key] = n
			}
		}
		promoted, err := promote(ctx, tx, group, free)
		if err != nil {
			return 0, fmt.Errorf("release tasks of %d keys of %s: %w", len(free), group[0].Type, err)
		}
		for _, k := range group {
			released += promoted[k.Key]
			if holders[k.Key].Holding(k) > 0 || promoted[k.Key] > 0 {
				continue
			}
			if err := tx.FlowKeyDelete(ctx, k.Type, k.Key); err != nil {
				return 0, fmt.Errorf("delete idle key %q of %s: %w", k.Key, k.Type, err)
			}
		}
	}
	return released, nil
}

// freeSlots is how many more tasks of k its holders h let a release
// queue: its concurrency slots left, and no more than its fair share of
// the queue has room for.
func freeSlots(k driver.FlowKey, h driver.KeyHolders) int {
	n := k.Limit - h.Holding(k)
	if k.Share > 0 {
		n = min(n, k.Share-h.Queued)
	}
	return n
}

// promote makes QUEUED, for each key of group (of one type, rows locked)
// with free slots, its first waiting tasks: as many as free allows for a
// key without a rate; for a key with one, as many as also get a slot of
// the rate, each due when its slot is free again. It returns how many it
// released by key.
func promote(ctx context.Context, tx driver.Tables, group []driver.FlowKey, free map[string]int) (map[string]int, error) {
	taskType := group[0].Type
	plain := [2]map[string]int{{}, {}} // by fairness: unfair, fair
	var rated []driver.FlowKey
	for _, k := range group {
		switch {
		case free[k.Key] <= 0:
		case k.Rate.Limit > 0:
			rated = append(rated, k)
		case k.Share > 0:
			plain[1][k.Key] = free[k.Key]
		default:
			plain[0][k.Key] = free[k.Key]
		}
	}
	promoted := make(map[string]int, len(free))
	for fair, keys := range plain {
		n, err := tx.FlowKeysPromote(ctx, taskType, keys, fair == 1)
		if err != nil {
			return nil, err
		}
		maps.Copy(promoted, n)
	}
	if len(rated) == 0 {
		return promoted, nil
	}
	stored, err := tx.FlowSlots(ctx, taskType, names(rated))
	if err != nil {
		return nil, err
	}
	slots := make(map[string][]driver.RateSlot, len(rated))
	want := make(map[string]int, len(rated))
	for _, k := range rated {
		if s := freeRateSlots(k.Rate.Limit, stored[k.Key], free[k.Key]); len(s) > 0 {
			slots[k.Key], want[k.Key] = s, len(s)
		}
	}
	waiting, err := tx.FlowKeysFirstWaiting(ctx, taskType, want)
	if err != nil {
		return nil, err
	}
	for _, k := range rated {
		for i, id := range waiting[k.Key] {
			if err := tx.FlowTaskQueueInSlot(ctx, k, id, slots[k.Key][i]); err != nil {
				return nil, err
			}
			promoted[k.Key]++
		}
	}
	return promoted, nil
}

// freeRateSlots returns up to n slots of a rate of limit starts that no
// queued task holds, the earliest free first: slots never stored (free
// since ever), then stored ones by when they are free again. A slot
// numbered limit or above (the limit was lowered) is not used.
func freeRateSlots(limit int, stored []driver.RateSlot, n int) []driver.RateSlot {
	used := make(map[int]bool, len(stored))
	var again []driver.RateSlot
	for _, s := range stored {
		used[s.Slot] = true
		if !s.Pending && s.Slot < limit {
			again = append(again, s)
		}
	}
	var out []driver.RateSlot
	for slot := 0; slot < limit && len(out) < n; slot++ {
		if !used[slot] {
			out = append(out, driver.RateSlot{Slot: slot})
		}
	}
	slices.SortFunc(again, func(a, b driver.RateSlot) int { return cmp.Or(a.FreeAt.Compare(b.FreeAt), cmp.Compare(a.Slot, b.Slot)) })
	return append(out, again[:min(len(again), n-len(out))]...)
}

// keysPerStatement bounds the keys one statement names: MariaDB turns an
// IN list of 1,000 values or more into a join that reads every task of
// each key instead of its holders (in_predicate_conversion_threshold).
const keysPerStatement = 500

// byType splits keys, in lock order, into runs of one task type of at
// most keysPerStatement keys.
func byType(keys []driver.FlowKey) [][]driver.FlowKey {
	var groups [][]driver.FlowKey
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && j-i < keysPerStatement && keys[j].Type == keys[i].Type {
			j++
		}
		groups = append(groups, keys[i:j])
		i = j
	}
	return groups
}

// names is the keys' names.
func names(keys []driver.FlowKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Key
	}
	return out
}

// distinctKeys returns the keys of keys, each once, in lock order; the
// zero key (an unkeyed task's) is left out.
func distinctKeys(keys []driver.FlowKey) []driver.FlowKey {
	var out []driver.FlowKey
	for _, k := range keys {
		if k.Key != "" {
			out = append(out, k)
		}
	}
	order := func(a, b driver.FlowKey) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Key, b.Key)) }
	slices.SortStableFunc(out, order)
	return slices.CompactFunc(out, func(a, b driver.FlowKey) bool { return order(a, b) == 0 })
}

// ChangeTask runs change, an operator's action on task id (cancel,
// retry, discard), in one transaction of t with the release of its key's
// slots when the task has a key; it returns what change reported. The
// key's row is locked before the task's, as every release locks them. A
// retried task whose key went idle meanwhile (its row deleted) finds a row
// with a limit of 1 until the key's next enqueue sets it.
func ChangeTask(ctx context.Context, t driver.Tables, id leasetype.TaskID, change func(tx driver.Tables) (bool, error)) (bool, error) {
	var changed bool
	err := t.InTx(ctx, func(tx driver.Tables) error {
		info, err := tx.TaskGet(ctx, id)
		if err != nil && !errors.Is(err, leasetype.ErrTaskNotFound) {
			return err
		}
		if info.ConcurrencyKey == "" {
			changed, err = change(tx)
			return err
		}
		stored, err := tx.FlowKeysLock(ctx, info.Type, []string{info.ConcurrencyKey})
		k := driver.FlowKey{Type: info.Type, Key: info.ConcurrencyKey, Limit: 1}
		switch {
		case err != nil:
		case len(stored) == 1:
			k = stored[0]
		default:
			err = tx.FlowKeysUpsert(ctx, []driver.FlowKey{k})
		}
		if err != nil {
			return fmt.Errorf("lock key %q of %s: %w", info.ConcurrencyKey, info.Type, err)
		}
		if changed, err = change(tx); err != nil {
			return err
		}
		_, err = releaseLocked(ctx, tx, []driver.FlowKey{k})
		return err
	})
	return changed, err
}
