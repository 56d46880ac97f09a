package runtime

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

type (
	// Filter selects tasks for Client.List. Zero fields match everything.
	Filter = leasetype.Filter
	// FinishedFilter selects finished tasks for Client.ListFinished.
	FinishedFilter = leasetype.FinishedFilter
	// TypeStatusCount is the number of tasks of one type in one status.
	TypeStatusCount = leasetype.TypeStatusCount
	// QueueStats is an operator's view of the task table.
	QueueStats = leasetype.QueueStats
)

// List returns up to f.Limit tasks matching f, newest first. To page,
// pass the last id of a page as the next one's f.BeforeID. A filter by a
// type name no task can have (a space in it, say) is ErrInvalidTask.
func (c *Client) List(ctx context.Context, f Filter) ([]TaskInfo, error) {
	return c.list(ctx, c.engine.tables, f)
}

// ListFinished returns up to f.Limit finished tasks of f.Status, the
// latest finished first, read through the index of finished tasks: a page
// costs the same however old the tasks are, where List, newest first by
// id, reads past every newer task. To page, pass the last task's
// FinishedAt and ID as the next one's f.BeforeFinishedAt and f.BeforeID.
// A status that is not final is ErrInvalidTask.
func (c *Client) ListFinished(ctx context.Context, f FinishedFilter) ([]TaskInfo, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if !f.Status.Terminal() {
		return nil, fmt.Errorf("%w: ListFinished of status %q: want SUCCESS, FAILED or CANCELLED", ErrInvalidTask, f.Status)
	}
	if f.Limit < 0 || f.BeforeID < 0 {
		return nil, fmt.Errorf("%w: list limit and BeforeID must not be negative", ErrInvalidTask)
	}
	if f.Type != "" {
		if err := checkTaskType(f.Type); err != nil {
			return nil, err
		}
	}
	infos, err := c.engine.tables.TaskListFinished(ctx, f)
	return infos, c.engine.failed(err, "list finished tasks")
}

// ListTx is List as the caller's transaction tx sees the tasks: with those
// it enqueued (EnqueueTx) and has not committed.
func (c *Client) ListTx(ctx context.Context, tx *sql.Tx, f Filter) ([]TaskInfo, error) {
	return c.list(ctx, c.engine.driver.TablesIn(tx), f)
}

func (c *Client) list(ctx context.Context, t driver.Tables, f Filter) ([]TaskInfo, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 0 || f.OlderThan < 0 || f.BeforeID < 0 {
		return nil, fmt.Errorf("%w: list limit, age and BeforeID must not be negative", ErrInvalidTask)
	}
	if f.Type != "" {
		if err := checkTaskType(f.Type); err != nil { // no task could match
			return nil, err
		}
	}
	infos, err := t.TaskList(ctx, f)
	if err != nil || f.Key == "" {
		return infos, c.engine.failed(err, "list tasks")
	}
	worked, err := c.byWorkKey(ctx, t, f)
	if err != nil {
		return nil, c.engine.failed(err, "list the tasks of work key %q", f.Key)
	}
	return mergeNewestFirst(infos, worked, f.Limit), nil
}

// byWorkKey lists the tasks matching f whose committed work recorded
// f.Key (an idempotent handler's key), which TaskList, matching the
// enqueue's key, does not find.
func (c *Client) byWorkKey(ctx context.Context, t driver.Tables, f Filter) ([]TaskInfo, error) {
	ids, err := t.IdempotencyKeyTasks(ctx, f.Key, f.Limit)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	now, err := t.Now(ctx)
	if err != nil {
		return nil, err
	}
	var infos []TaskInfo
	for _, id := range ids {
		info, err := t.TaskGet(ctx, id)
		switch {
		case errors.Is(err, ErrTaskNotFound):
			continue // purged; its key stays recorded
		case err != nil:
			return nil, err
		case matchesBesidesKey(f, info, now):
			info.WorkKey = f.Key
			infos = append(infos, info)
		}
	}
	return infos, nil
}

// matchesBesidesKey reports whether info matches f's fields other than
// its key, now being the database's clock.
func matchesBesidesKey(f Filter, info TaskInfo, now time.Time) bool {
	return (f.Status == "" || info.Status == f.Status) && (f.Type == "" || info.Type == f.Type) &&
		(f.Owner == "" || info.OwnerID == f.Owner) && (f.BeforeID == 0 || info.ID < f.BeforeID) &&
		(f.ErrorContains == "" || strings.Contains(info.LastError, f.ErrorContains)) &&
		!info.CreatedAt.After(now.Add(-f.OlderThan))
}

// mergeNewestFirst merges two lists of tasks, each newest first, without
// repeats, up to limit.
func mergeNewestFirst(a, b []TaskInfo, limit int) []TaskInfo {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y TaskInfo) int { return cmp.Compare(y.ID, x.ID) })
	all = slices.CompactFunc(all, func(x, y TaskInfo) bool { return x.ID == y.ID })
	return all[:min(len(all), limit)]
}

// Retry queues a FAILED or CANCELLED task again, with all its attempts.
// The workflow steps its end cancelled (and theirs in turn) wait for it
// again; its finished parents do not run again. It returns ErrTaskNotFound for an unknown id and ErrTaskNotRetryable for a
// task in another status.
func (c *Client) Retry(ctx context.Context, id TaskID) error {
	before, err := c.engine.tables.TaskGet(ctx, id)
	if err != nil {
		return c.engine.classify(err)
	}
	if before.Status != StatusFailed && before.Status != StatusCancelled {
		return fmt.Errorf("%w: task %d is %s; only FAILED and CANCELLED tasks can be retried", ErrTaskNotRetryable, id, before.Status)
	}
	// The attempt that ended the task is read from its row, which the
	// retry resets: keep it in the history first. Workers trim the
	// history to their AttemptHistory.
	for _, a := range bookkeeping.History(before, nil) {
		rec := driver.AttemptRecord{TaskID: id, Attempt: a.Attempt, Worker: a.Worker, StartedAt: a.StartedAt, FinishedAt: a.FinishedAt,
			Outcome: a.Outcome, Error: a.Error, Duration: a.Duration}
		if err := bookkeeping.RecordAttempts(ctx, c.engine.tables, []driver.AttemptRecord{rec}, bookkeeping.KeepAll); err != nil {
			return c.engine.classify(err)
		}
	}
	changed, err := bookkeeping.ChangeTask(ctx, c.engine.tables, id, func(tx driver.Tables) (bool, error) {
		changed, err := tx.TaskRetry(ctx, id)
		if err != nil || !changed {
			return changed, err
		}
		// The workflow steps its failure cancelled wait for it again, in
		// the same transaction: a worker that ended the task again before
		// they waited would not settle them.
		_, err = bookkeeping.ReviveDependants(ctx, tx, id)
		return true, err
	})
	if err != nil || changed {
		return c.engine.failed(err, "retry task %d", id)
	}
	return fmt.Errorf("%w: task %d was %s and changed meanwhile; only FAILED and CANCELLED tasks can be retried", ErrTaskNotRetryable, id, before.Status)
}

// Purgeable counts the finished tasks (SUCCESS, FAILED, CANCELLED) that
// finished more than olderThan ago, what Purge would delete now, up to
// max: an operator's count before a purge, as cheap as max rows of an
// index.
func (c *Client) Purgeable(ctx context.Context, olderThan time.Duration, max int) (int, error) {
	if olderThan < 0 || max <= 0 {
		return 0, fmt.Errorf("%w: a purge count needs an age >= 0 and a max > 0", ErrInvalidTask)
	}
	n, err := c.engine.tables.TaskCountPurgeable(ctx, olderThan, max)
	return n, c.engine.failed(err, "count finished tasks")
}

// Purge deletes finished tasks (SUCCESS, FAILED, CANCELLED) that finished
// more than olderThan ago, batch rows per statement until none are left, and
// returns how many it deleted. Safe to run from many processes at once.
func (c *Client) Purge(ctx context.Context, olderThan time.Duration, batch int) (int, error) {
	if olderThan < 0 || batch <= 0 {
		return 0, fmt.Errorf("%w: purge needs an age >= 0 and a batch > 0", ErrInvalidTask)
	}
	total := 0
	for {
		n, err := c.engine.tables.TaskPurge(ctx, olderThan, batch)
		total += n
		if err != nil {
			return total, c.engine.failed(err, "purge finished tasks")
		}
		if n < batch {
			break
		}
	}
	for { // the deleted tasks' recorded attempts
		n, err := bookkeeping.PurgeAttempts(ctx, c.engine.tables, batch)
		if err != nil || n == 0 {
			return total, c.engine.classify(err)
		}
	}
}

// Stats counts the tasks by type and status, with each type's oldest queued
// task and the running tasks of each worker. It reads every task: on a
// large table, a dashboard wants BoundedStats.
func (c *Client) Stats(ctx context.Context) (QueueStats, error) {
	s, err := bookkeeping.Stats(ctx, c.engine.tables, 0)
	return s, c.engine.classify(err)
}

// BoundedStats is Stats reading at most bound+1 tasks of each status, so
// it costs the same with a million tasks as with a thousand. A status with
// more is listed in Capped: for QUEUED the oldest task per type is that of
// its first tasks (the next to run), and its counts are the workers' last
// count of every task, read at CountedAt (one worker counts about every
// minute, less often on a table that takes long to count), each at least
// what the bounded read found. With no count stored yet (no worker has
// run) it counts every task once itself, when it can take the turn; if it
// cannot (another is counting, or the database user may not write), the
// counts are those of its first tasks, lower bounds.
func (c *Client) BoundedStats(ctx context.Context, bound int) (QueueStats, error) {
	if bound < 1 {
		return QueueStats{}, fmt.Errorf("%w: BoundedStats bound %d: want at least 1", ErrInvalidConfig, bound)
	}
	s, err := bookkeeping.Stats(ctx, c.engine.tables, bound)
	return s, c.engine.classify(err)
}

// Pause stops every worker, in every process, from claiming tasks of
// taskType until Resume. The state is a row in the database: it outlives
// restarts and holds for workers that start later. Running tasks of the
// type finish; enqueues still store new ones. A claim that began before
// Pause returned may still start a few; none that begins after does.
// Pausing a paused type changes nothing. Stats lists the paused types.
func (c *Client) Pause(ctx context.Context, taskType string) error {
	return c.setPaused(ctx, taskType, true)
}

// Resume lets workers claim tasks of taskType again, after Pause. Workers
// of this process look at once, others at their next poll (woken at once
// by an engine that carries wake-ups between processes). Resuming a type
// that is not paused changes nothing.
func (c *Client) Resume(ctx context.Context, taskType string) error {
	if err := c.setPaused(ctx, taskType, false); err != nil {
		return err
	}
	c.engine.driver.Notify(taskType)
	return nil
}

func (c *Client) setPaused(ctx context.Context, taskType string, paused bool) error {
	if err := checkTaskType(taskType); err != nil {
		return err
	}
	var err error
	if paused {
		_, err = c.engine.tables.PausedTypeInsert(ctx, taskType)
	} else {
		_, err = c.engine.tables.PausedTypeDelete(ctx, taskType)
	}
	return c.engine.failed(err, "pause or resume %s", taskType)
}

// ThroughputMinute is one whole minute's finished tasks, over all types.
type ThroughputMinute = leasetype.ThroughputMinute

// Throughput returns the tasks finished in each whole minute of the last
// window (at most a day), oldest first, over all types. Workers count
// each minute a few seconds after it ends; Throughput first counts the
// minutes no worker counted yet, up to an hour back, so it answers while
// no worker runs too. A minute missing from the list was not counted (no
// worker or client looked within the hour after it).
func (c *Client) Throughput(ctx context.Context, window time.Duration) ([]ThroughputMinute, error) {
	if window <= 0 || window > bookkeeping.ThroughputKeep {
		return nil, fmt.Errorf("%w: Throughput window %s: want more than 0 and at most %s", ErrInvalidConfig, window, bookkeeping.ThroughputKeep)
	}
	if _, err := bookkeeping.RollupThroughput(ctx, c.engine.tables, bookkeeping.ThroughputSettle, bookkeeping.ThroughputKeep); err != nil {
		return nil, c.engine.classify(err)
	}
	m, err := bookkeeping.Throughput(ctx, c.engine.tables, window)
	return m, c.engine.classify(err)
}

// bulkPage is how many tasks a bulk action reads at a time.
const bulkPage = 500

// CountMatching counts the tasks f matches, newest first, up to max (f's
// BeforeID and Limit are its own): what a bulk action would act on.
func (c *Client) CountMatching(ctx context.Context, f Filter, max int) (int, error) {
	if max <= 0 {
		return 0, fmt.Errorf("%w: a bulk count needs a max > 0", ErrInvalidTask)
	}
	n := 0
	err := c.eachMatching(ctx, f, max, func(TaskInfo) (bool, error) { n++; return true, nil })
	return n, err
}

// RetryMatching queues again, with all their attempts, up to max of the
// FAILED and CANCELLED tasks f matches, newest first, and returns how many
// it queued. Tasks of other statuses are passed over; a task that changed
// meanwhile is skipped, not an error.
func (c *Client) RetryMatching(ctx context.Context, f Filter, max int) (int, error) {
	return c.actOnMatching(ctx, f, max, func(t TaskInfo) (bool, error) {
		if t.Status != StatusFailed && t.Status != StatusCancelled {
			return false, nil
		}
		err := c.Retry(ctx, t.ID)
		if errors.Is(err, ErrTaskNotRetryable) || errors.Is(err, ErrTaskNotFound) {
			return false, nil
		}
		return err == nil, err
	})
}

// CancelMatching cancels up to max of the unfinished tasks f matches,
// newest first (a running one is asked to stop, as Cancel does), and
// returns how many it cancelled or asked.
func (c *Client) CancelMatching(ctx context.Context, f Filter, max int) (int, error) {
	return c.actOnMatching(ctx, f, max, func(t TaskInfo) (bool, error) {
		if t.Status.Terminal() || t.Status == StatusCancelRequested {
			return false, nil
		}
		err := c.Cancel(ctx, t.ID)
		if errors.Is(err, ErrTaskNotFound) || errors.Is(err, ErrTaskFinished) {
			return false, nil
		}
		return err == nil, err
	})
}

// Discard deletes a task no worker holds, queued or finished, with its
// attempt history (retention's next pass, or Purge, deletes the history).
// It returns ErrTaskRunning for a task that runs (Cancel it first) and
// ErrTaskNotFound for an unknown id.
func (c *Client) Discard(ctx context.Context, id TaskID) error {
	deleted, err := bookkeeping.ChangeTask(ctx, c.engine.tables, id, func(tx driver.Tables) (bool, error) { return tx.TaskDiscard(ctx, id) })
	if err != nil || deleted {
		return c.engine.failed(err, "discard task %d", id)
	}
	info, err := c.engine.tables.TaskGet(ctx, id)
	if err != nil {
		return c.engine.classify(err)
	}
	return fmt.Errorf("%w: task %d is %s: cancel it, then discard it once it ended", ErrTaskRunning, id, info.Status)
}

// DiscardMatching deletes up to max of the tasks f matches that no worker
// holds, newest first, and returns how many it deleted.
func (c *Client) DiscardMatching(ctx context.Context, f Filter, max int) (int, error) {
	return c.actOnMatching(ctx, f, max, func(t TaskInfo) (bool, error) {
		err := c.Discard(ctx, t.ID)
		if errors.Is(err, ErrTaskRunning) || errors.Is(err, ErrTaskNotFound) {
			return false, nil
		}
		return err == nil, err
	})
}

// actOnMatching calls act on the tasks f matches until it acted on max.
func (c *Client) actOnMatching(ctx context.Context, f Filter, max int, act func(TaskInfo) (bool, error)) (int, error) {
	if max <= 0 {
		return 0, fmt.Errorf("%w: a bulk action needs a max > 0", ErrInvalidTask)
	}
	n := 0
	err := c.eachMatching(ctx, f, 0, func(t TaskInfo) (bool, error) {
		acted, err := act(t)
		if acted {
			n++
		}
		return n < max, err
	})
	return n, err
}

// eachMatching calls fn on the tasks f matches, newest first, a page at a
// time, until fn says stop, it fails, or (with limit > 0) limit tasks were
// seen.
func (c *Client) eachMatching(ctx context.Context, f Filter, limit int, fn func(TaskInfo) (bool, error)) error {
	f.BeforeID, f.Limit = 0, bulkPage
	seen := 0
	for {
		page, err := c.List(ctx, f)
		if err != nil {
			return err
		}
		for _, t := range page {
			more, err := fn(t)
			seen++
			if err != nil || !more || (limit > 0 && seen >= limit) {
				return err
			}
		}
		if len(page) < bulkPage {
			return nil
		}
		f.BeforeID = page[len(page)-1].ID
	}
}
