package sqlbuild

import (
	"context"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// RecordAttempts is RecordAttempts on an engine's insert and trim
// statements: each record, then, for a task past keep attempts, the trim
// of its older ones. Each statement stands alone: a crash between them
// leaves a row more, which the next trim removes.
func RecordAttempts(ctx context.Context, retry func(context.Context, func() error) error, recs []driver.AttemptRecord, keep int,
	insert func(driver.AttemptRecord) error, trim func(id leasetype.TaskID, upTo int) error) error {
	for _, r := range recs {
		err := retry(ctx, func() error {
			if err := insert(r); err != nil {
				return err
			}
			if r.Attempt > keep {
				return trim(r.TaskID, r.Attempt-keep)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("leasegen: record attempt %d of task %d: %w", r.Attempt, r.TaskID, err)
		}
	}
	return nil
}

// PurgeAttempts is PurgeAttempts on an engine's statements: the ids of up
// to batch deleted tasks whose attempts remain, then one delete of them.
func PurgeAttempts(ctx context.Context, retry func(context.Context, func() error) error, batch int,
	orphans func() ([]int64, error), del func(ids []int64) (int64, error)) (int, error) {
	var n int64
	err := retry(ctx, func() error {
		ids, err := orphans()
		if err != nil || len(ids) == 0 {
			return err
		}
		n, err = del(ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: purge the attempts of deleted tasks: %w", err)
	}
	return int(n), nil
}
