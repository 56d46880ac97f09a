package bookkeeping

import (
	"context"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
)

// RecordAttempts stores recs, attempts that did not end their tasks (the
// attempt that ends a task is read from its row), ignoring one already
// stored, and keeps only each task's latest keep attempts. Each statement
// stands alone: a crash between an insert and its trim leaves a row more,
// which the next trim removes.
func RecordAttempts(ctx context.Context, t driver.Tables, recs []driver.AttemptRecord, keep int) error {
	for _, r := range recs {
		err := t.AttemptInsert(ctx, r)
		if err == nil && r.Attempt > keep {
			err = t.AttemptTrim(ctx, r.TaskID, r.Attempt-keep)
		}
		if err != nil {
			return fmt.Errorf("leasegen: record attempt %d of task %d: %w", r.Attempt, r.TaskID, err)
		}
	}
	return nil
}

// PurgeAttempts deletes the recorded attempts of up to batch tasks that
// no longer exist and returns how many attempts it deleted.
func PurgeAttempts(ctx context.Context, t driver.Tables, batch int) (int, error) {
	ids, err := t.AttemptOrphans(ctx, batch)
	if err != nil || len(ids) == 0 {
		return 0, wrapPurge(err)
	}
	n, err := t.AttemptDeleteTasks(ctx, ids)
	return n, wrapPurge(err)
}

func wrapPurge(err error) error {
	if err != nil {
		return fmt.Errorf("leasegen: purge the attempts of deleted tasks: %w", err)
	}
	return nil
}
