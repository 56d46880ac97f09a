package bookkeeping

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

const (
	// CountInterval is how often, at most, a worker counts every task by
	// type and status for the pages that cannot count them live.
	CountInterval = time.Minute
	// countDuty keeps counting to about 1% of the database's time: a count
	// that took 2 s is next due 200 s later.
	countDuty = 100
	// countHold is how long a worker holds the turn to count: if it has
	// not recorded a count by then, another worker counts.
	countHold = 5 * time.Minute
)

// RefreshCounts counts every task by type and status and stores the
// count, when it is this caller's turn: the turn comes about every
// CountInterval to one of the workers, less often when counting takes
// long. It reports whether it counted.
func RefreshCounts(ctx context.Context, t driver.Tables) (bool, error) {
	mine, err := t.CountTurnTake(ctx, countHold)
	if err != nil {
		return false, fmt.Errorf("leasegen: take the turn to count the tasks: %w", err)
	}
	if !mine {
		return false, nil
	}
	return true, CountNow(ctx, t)
}

// CountNow counts every task by type and status and stores the count,
// whoever's turn it is.
func CountNow(ctx context.Context, t driver.Tables) error {
	at, err := t.Now(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	start := time.Now()
	counts, err := t.TaskCountByTypeStatus(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: count the tasks by type and status: %w", err)
	}
	took := time.Since(start)
	err = t.InTx(ctx, func(tx driver.Tables) error {
		if err := tx.CountsDelete(ctx); err != nil {
			return err
		}
		for _, c := range counts {
			if err := tx.CountsInsert(ctx, c); err != nil {
				return err
			}
		}
		return tx.CountTurnDone(ctx, at, took, max(CountInterval, countDuty*took))
	})
	if err != nil {
		return fmt.Errorf("leasegen: store the count of the tasks: %w", err)
	}
	return nil
}

// withStoredCounts puts the stored count in st for each status whose live
// count stopped at its bound (st.Capped): a type's count is the stored
// one, or the live lower bound when that is higher (tasks added since the
// count). st.CountedAt says when the stored count was read. With none
// stored (no worker has run) it counts once, when it is its turn; if it
// cannot (another is counting, or the database user may not write), st
// keeps its lower bounds.
func withStoredCounts(ctx context.Context, t driver.Tables, st *leasetype.QueueStats) error {
	turn, err := t.CountTurnGet(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: read when the tasks were last counted: %w", err)
	}
	if turn.CountedAt.IsZero() {
		if counted, err := RefreshCounts(ctx, t); err != nil || !counted {
			return nil
		}
		if turn, err = t.CountTurnGet(ctx); err != nil {
			return fmt.Errorf("leasegen: read when the tasks were last counted: %w", err)
		}
	}
	stored, err := t.CountsList(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: read the stored count of the tasks: %w", err)
	}
	type key struct {
		typ    string
		status leasetype.Status
	}
	counts := map[key]int{}
	for _, c := range st.Counts {
		counts[key{c.Type, c.Status}] = c.Tasks
	}
	for _, c := range stored {
		if k := (key{c.Type, c.Status}); st.Capped[c.Status] && c.Tasks > counts[k] {
			counts[k] = c.Tasks
		}
	}
	st.Counts = st.Counts[:0]
	for k, n := range counts {
		st.Counts = append(st.Counts, leasetype.TypeStatusCount{Type: k.typ, Status: k.status, Tasks: n})
	}
	slices.SortFunc(st.Counts, func(a, b leasetype.TypeStatusCount) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Status, b.Status))
	})
	st.CountedAt = turn.CountedAt
	return nil
}
