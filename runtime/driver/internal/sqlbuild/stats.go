package sqlbuild

import (
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// SampleRow is one task type's share of a status's first tasks.
type SampleRow struct {
	Type   string
	Tasks  int
	Oldest time.Time // the earliest due instant among them
}

// StatsQueries are an engine's queries behind Driver.Stats.
type StatsQueries struct {
	// Counts and Oldest are the exact counts by type and status and the
	// oldest queued task per type: scans of every task.
	Counts func() ([]leasetype.TypeStatusCount, error)
	Oldest func() (map[string]time.Time, error)
	// Sample reads up to limit tasks of status, by type.
	Sample  func(status leasetype.Status, limit int) ([]SampleRow, error)
	Running func() (map[string]int, error)
	Paused  func() (map[string]time.Time, error)
}

// Stats is Driver.Stats on q: exact when bound is 0, else from each
// status's first bound+1 tasks, so that it reads at most
// 6 × (bound+1) index entries however many tasks are stored.
func Stats(bound int, q StatsQueries) (leasetype.QueueStats, error) {
	var st leasetype.QueueStats
	var err error
	if st.RunningByWorker, err = q.Running(); err != nil {
		return st, fmt.Errorf("leasegen: running tasks by worker: %w", err)
	}
	if st.Paused, err = q.Paused(); err != nil {
		return st, err
	}
	if bound <= 0 {
		if st.Counts, err = q.Counts(); err != nil {
			return st, fmt.Errorf("leasegen: count tasks: %w", err)
		}
		if st.OldestQueued, err = q.Oldest(); err != nil {
			return st, fmt.Errorf("leasegen: oldest queued tasks: %w", err)
		}
		return st, nil
	}
	st.OldestQueued, st.Capped = map[string]time.Time{}, map[leasetype.Status]bool{}
	for _, status := range leasetype.AllStatuses {
		rows, err := q.Sample(status, bound+1)
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
	return st, nil
}

// Map converts an engine's rows.
func Map[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// ToMap converts an engine's rows into a map.
func ToMap[R any, V any](rows []R, f func(R) (string, V)) map[string]V {
	out := make(map[string]V, len(rows))
	for _, r := range rows {
		k, v := f(r)
		out[k] = v
	}
	return out
}
