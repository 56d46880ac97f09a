package sqlbuild

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// throughputReach is how far back a rollup counts: the minutes a dashboard
// charts. Older minutes nobody counted stay uncounted.
const throughputReach = time.Hour

// FinishedGroup is a count of an engine's finished-per-minute query: the
// tasks of one type that reached one final status in one minute, counted
// in minutes since the Unix epoch.
type FinishedGroup struct {
	Type   string
	Status string
	Minute int64
	Tasks  int64
}

// MinuteRow is a row of leasegen_throughput: Type "" is the minute's total.
type MinuteRow struct {
	Type                         string
	Minute                       time.Time
	Succeeded, Failed, Cancelled int64
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
func MinuteRows(from, to time.Time, groups []FinishedGroup) ([]MinuteRow, error) {
	byMinute := map[int64]map[string]*MinuteRow{}
	for _, g := range groups {
		types := byMinute[g.Minute]
		if types == nil {
			types = map[string]*MinuteRow{}
			byMinute[g.Minute] = types
		}
		for _, typ := range []string{g.Type, ""} {
			r := types[typ]
			if r == nil {
				r = &MinuteRow{Type: typ, Minute: time.Unix(g.Minute*60, 0).UTC()}
				types[typ] = r
			}
			switch leasetype.Status(g.Status) {
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
	var rows []MinuteRow
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		types := byMinute[m.Unix()/60]
		for _, typ := range slices.Sorted(maps.Keys(types)) {
			if typ != "" {
				rows = append(rows, *types[typ])
			}
		}
		total := MinuteRow{Minute: m}
		if r := types[""]; r != nil {
			total = *r
		}
		rows = append(rows, total)
	}
	return rows, nil
}

// Rollup is Driver.RollupThroughput on an engine's statements: clock
// reads the database's now and the latest minute counted, count counts
// the tasks that finished in [from, to), and store writes rows, in one
// transaction, and deletes the rows before trimBefore. It returns how
// many minutes it counted.
func Rollup(ctx context.Context, retry func(context.Context, func() error) error, settle, keep time.Duration,
	clock func() (now, last time.Time, err error),
	count func(from, to time.Time) ([]FinishedGroup, error),
	store func(rows []MinuteRow, trimBefore time.Time) error) (int, error) {
	now, last, err := clock()
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the last minute counted: %w", err)
	}
	from, to := RollupWindow(now, last, settle)
	if !from.Before(to) {
		return 0, nil
	}
	groups, err := count(from, to)
	if err != nil {
		return 0, fmt.Errorf("leasegen: count the tasks finished from %s to %s: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), err)
	}
	rows, err := MinuteRows(from, to, groups)
	if err != nil {
		return 0, err
	}
	if err := retry(ctx, func() error { return store(rows, now.Add(-keep)) }); err != nil {
		return 0, fmt.Errorf("leasegen: store the tasks finished per minute: %w", err)
	}
	return int(to.Sub(from) / time.Minute), nil
}

// Throughput turns an engine's stored totals into ThroughputMinutes.
func Throughput[R any](rows []R, minute func(R) (time.Time, int64, int64, int64)) []leasetype.ThroughputMinute {
	out := make([]leasetype.ThroughputMinute, len(rows))
	for i, r := range rows {
		at, ok, failed, cancelled := minute(r)
		out[i] = leasetype.ThroughputMinute{Minute: at.UTC(), Succeeded: int(ok), Failed: int(failed), Cancelled: int(cancelled)}
	}
	return out
}
