package bookkeeping

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Stats counts the tasks by type and status, with the oldest queued task
// per type, the running tasks per lease owner and the paused types. With
// bound > 0 it reads at most bound+1 tasks of each status (QUEUED ones in
// claim order), so at most 6 × (bound+1) index entries however many tasks
// are stored, and marks the statuses with more as Capped; their counts are
// then the last stored count of every task (RefreshCounts), each at least
// the live lower bound, read at st.CountedAt, or, with none stored, the
// lower bounds.
func Stats(ctx context.Context, t driver.Tables, bound int) (leasetype.QueueStats, error) {
	var st leasetype.QueueStats
	var err error
	if st.RunningByWorker, err = t.TaskRunningByOwner(ctx); err != nil {
		return st, fmt.Errorf("leasegen: running tasks by worker: %w", err)
	}
	if st.Paused, err = t.PausedTypeList(ctx); err != nil {
		return st, fmt.Errorf("leasegen: list paused task types: %w", err)
	}
	if bound <= 0 {
		if st.Counts, err = t.TaskCountByTypeStatus(ctx); err != nil {
			return st, fmt.Errorf("leasegen: count tasks: %w", err)
		}
		if st.OldestQueued, err = t.TaskOldestQueued(ctx); err != nil {
			return st, fmt.Errorf("leasegen: oldest queued tasks: %w", err)
		}
		return st, nil
	}
	st.OldestQueued, st.Capped = map[string]time.Time{}, map[leasetype.Status]bool{}
	for _, status := range leasetype.AllStatuses {
		rows, err := t.TaskSampleStatus(ctx, status, bound+1)
		if err != nil {
			return st, fmt.Errorf("leasegen: count %s tasks: %w", status, err)
		}
		total := 0
		for _, r := range rows {
			total += r.Tasks
			st.Counts = append(st.Counts, leasetype.TypeStatusCount{Type: r.Type, Status: status, Tasks: r.Tasks})
			if status == leasetype.StatusQueued {
				st.OldestQueued[r.Type] = r.Oldest
			}
		}
		if total > bound {
			st.Capped[status] = true
		}
	}
	if len(st.Capped) > 0 {
		if err := withStoredCounts(ctx, t, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}
