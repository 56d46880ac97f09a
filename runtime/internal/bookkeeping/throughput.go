package bookkeeping

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

const (
	// ThroughputSettle is how long after a minute ends its finished tasks
	// are counted: a completion's instant is taken by its statement, a
	// moment before its transaction commits.
	ThroughputSettle = 10 * time.Second
	// ThroughputKeep is how long the counts are kept.
	ThroughputKeep = 24 * time.Hour
	// rollupInterval is how often each worker counts the minutes that
	// ended; the first worker to do so stores them.
	rollupInterval = time.Minute
)

// throughputReach is how far back a rollup counts: the minutes a dashboard
// charts. Older minutes nobody counted stay uncounted.
const throughputReach = time.Hour

// RollupThroughput counts, by type and final status, the tasks that
// finished in each whole minute not yet counted, up to an hour back and
// up to the last minute that ended settle ago (a negative settle counts
// the minute in progress), stores the counts in one transaction, deletes
// those older than keep, and returns how many minutes it counted.
// Workers that roll up at once store each minute once: a row replaces the
// same minute's row.
func RollupThroughput(ctx context.Context, t driver.Tables, settle, keep time.Duration) (int, error) {
	now, err := t.Now(ctx)
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	last, err := t.ThroughputLastCounted(ctx)
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the last minute counted: %w", err)
	}
	from, to := RollupWindow(now, last, settle)
	if !from.Before(to) {
		return 0, nil
	}
	groups, err := t.ThroughputCount(ctx, from, to)
	if err != nil {
		return 0, fmt.Errorf("leasegen: count the tasks finished from %s to %s: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), err)
	}
	rows, err := MinuteRows(from, to, groups)
	if err != nil {
		return 0, err
	}
	err = t.InTx(ctx, func(tx driver.Tables) error {
		for _, r := range rows {
			if err := tx.ThroughputInsert(ctx, r); err != nil {
				return err
			}
		}
		return tx.ThroughputTrim(ctx, now.Add(-keep))
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: store the tasks finished per minute: %w", err)
	}
	return int(to.Sub(from) / time.Minute), nil
}

// Throughput returns the counted minutes of the last window, oldest
// first, with their totals over all types.
func Throughput(ctx context.Context, t driver.Tables, window time.Duration) ([]leasetype.ThroughputMinute, error) {
	now, err := t.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	minutes, err := t.ThroughputList(ctx, now.Add(-window))
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the tasks finished per minute: %w", err)
	}
	return minutes, nil
}

// RollupWindow is the whole minutes a rollup counts at now: from the minute
// after last, the latest counted, but not more than an hour back, up to the
// last minute that ended settle before now. from equals to when there is
// nothing to count. A negative settle counts the minute in progress.
func RollupWindow(now, last time.Time, settle time.Duration) (from, to time.Time) {
	to = now.Add(-settle).Truncate(time.Minute)
	from = to.Add(-throughputReach)
	if next := last.Add(time.Minute); next.After(from) {
		from = next
	}
	if from.After(to) {
		from = to
	}
	return from.UTC(), to.UTC()
}

// MinuteRows turns the groups counted in [from, to) into the rows to
// store: one per type and minute with tasks, and a total for every
// minute, after its types' rows, so that a crash between the inserts
// leaves the minute uncounted, to be counted again.
func MinuteRows(from, to time.Time, groups []driver.FinishedGroup) ([]driver.MinuteRow, error) {
	byMinute := map[int64]map[string]*driver.MinuteRow{}
	for _, g := range groups {
		types := byMinute[g.Minute]
		if types == nil {
			types = map[string]*driver.MinuteRow{}
			byMinute[g.Minute] = types
		}
		for _, typ := range []string{g.Type, ""} {
			r := types[typ]
			if r == nil {
				r = &driver.MinuteRow{Type: typ, Minute: time.Unix(g.Minute*60, 0).UTC()}
				types[typ] = r
			}
			switch g.Status {
			case leasetype.StatusSuccess:
				r.Succeeded += g.Tasks
			case leasetype.StatusFailed:
				r.Failed += g.Tasks
			case leasetype.StatusCancelled:
				r.Cancelled += g.Tasks
			default:
				return nil, fmt.Errorf("leasegen: count finished tasks: status %q is not final", g.Status)
			}
		}
	}
	var rows []driver.MinuteRow
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		types := byMinute[m.Unix()/60]
		for _, typ := range slices.Sorted(maps.Keys(types)) {
			if typ != "" {
				rows = append(rows, *types[typ])
			}
		}
		total := driver.MinuteRow{Minute: m}
		if r := types[""]; r != nil {
			total = *r
		}
		rows = append(rows, total)
	}
	return rows, nil
}

// RollupLoop counts, about every minute, the tasks that finished in the
// minutes that ended, for Client.Throughput and the UI's chart, and, on
// its turn, every task by type and status (RefreshCounts).
type RollupLoop struct {
	Tables   driver.Tables
	Logger   *slog.Logger
	WorkerID string
}

// Run counts until stop is closed.
func (r *RollupLoop) Run(ctx context.Context, stop <-chan struct{}) {
	for {
		passCtx, cancel := context.WithTimeout(ctx, rollupInterval)
		if _, err := RollupThroughput(passCtx, r.Tables, ThroughputSettle, ThroughputKeep); err != nil {
			r.Logger.Warn("leasegen: counting the tasks finished per minute failed; the next pass tries again",
				"worker", r.WorkerID, "err", err)
		}
		cancel()
		countCtx, cancel := context.WithTimeout(ctx, countHold)
		if _, err := RefreshCounts(countCtx, r.Tables); err != nil {
			r.Logger.Warn("leasegen: counting the tasks by type and status failed; a later turn tries again",
				"worker", r.WorkerID, "err", err)
		}
		cancel()
		// Workers that started together spread their passes.
		jitter := time.Duration(rand.Int64N(int64(rollupInterval / 6)))
		select {
		case <-stop:
			return
		case <-time.After(rollupInterval - rollupInterval/12 + jitter):
		}
	}
}
