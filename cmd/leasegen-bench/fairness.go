package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// The fairness group's scenario: one key with fairBig tasks queued, then
// fairSmallKeys keys of fairSmallTasks each, burnt down by one worker
// process at the default Config.
const (
	fairBig        = 100_000
	fairSmallKeys  = 50
	fairSmallTasks = 10
)

// fairWeights are the fairness group's runs: 0 without fairness keys
// (FIFO), else every key a fairness key of that weight.
var fairWeights = []int{0, 1, 10}

// fairnessName is the fairness group's figure of what at weight (0: no
// fairness keys).
func fairnessName(weight int, what string) string {
	rule := "no fairness key (FIFO)"
	if weight > 0 {
		rule = fmt.Sprintf("WithFairnessKey, weight %d", weight)
	}
	return fmt.Sprintf("%d keys of %d behind one of %s, %s: %s", fairSmallKeys, fairSmallTasks, number(fairBig), rule, what)
}

// fairness measures what the big key's backlog does to the small keys:
// each small key's first start and last completion after the burn-down's
// first start, on the database's clock, with each key a fairness key of
// weight, or, for contrast (weight 0), with plain tasks that carry their
// key as their owner.
func fairness(ctx context.Context, s *scratch, weight int, t *table) error {
	keyed := func(key string) runtime.EnqueueOption {
		if weight > 0 {
			return runtime.WithFairnessKey(key, weight)
		}
		return runtime.WithOwner(key)
	}
	if err := queueKeyed(ctx, s, "noop", fairBig, func(int) runtime.EnqueueOption { return keyed("big") }); err != nil {
		return err
	}
	reqs := make([]runtime.Request, 0, fairSmallKeys*fairSmallTasks)
	for k := range fairSmallKeys {
		for range fairSmallTasks {
			reqs = append(reqs, runtime.Request{Type: "noop", Options: []runtime.EnqueueOption{keyed("small-" + strconv.Itoa(k))}})
		}
	}
	if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
		return err
	}
	c, err := startChild(s, "worker", "-child-id", "fair-1")
	if err != nil {
		return err
	}
	defer c.stop() //nolint:errcheck // the figures are taken from the database
	if _, err := waitDrained(ctx, s, 10*time.Minute); err != nil {
		return err
	}
	firsts, lasts, err := smallKeyDelays(ctx, s)
	if err != nil {
		return err
	}
	if len(firsts) != fairSmallKeys {
		return fmt.Errorf("%d small keys finished, want %d", len(firsts), fairSmallKeys)
	}
	t.add(fairnessName(weight, "first start, median of keys"), "ms", millis(median(firsts)))
	t.add(fairnessName(weight, "first start, slowest key"), "ms", millis(slices.Max(firsts)))
	t.add(fairnessName(weight, "last completion, median of keys"), "ms", millis(median(lasts)))
	t.add(fairnessName(weight, "last completion, slowest key"), "ms", millis(slices.Max(lasts)))
	n, span, err := successSpan(ctx, s)
	if err != nil {
		return err
	}
	t.add(fairnessName(weight, "burn-down of all"), "tasks/s", float64(n)/span.Seconds())
	return nil
}

// smallKeyDelays returns, for each small key, the time from the
// burn-down's first start to the key's first start and to its last
// completion.
func smallKeyDelays(ctx context.Context, s *scratch) (firsts, lasts []time.Duration, err error) {
	const small = ` FROM leasegen_tasks WHERE COALESCE(flow_key, owner_id) LIKE 'small-%' GROUP BY COALESCE(flow_key, owner_id)`
	const begin = `(SELECT MIN(started_at) FROM leasegen_tasks)`
	query := `SELECT CAST(TIMESTAMPDIFF(MICROSECOND, ` + begin + `, MIN(started_at)) AS SIGNED),
		CAST(TIMESTAMPDIFF(MICROSECOND, ` + begin + `, MAX(due_at)) AS SIGNED)` + small
	unit := time.Microsecond
	switch s.kind {
	case kindPostgres:
		query = `SELECT CAST(EXTRACT(EPOCH FROM MIN(started_at) - ` + begin + `) * 1000000 AS BIGINT),
			CAST(EXTRACT(EPOCH FROM MAX(finished_at) - ` + begin + `) * 1000000 AS BIGINT)` + small
	case kindSQLite:
		query = `SELECT MIN(started_at) - ` + begin + `, MAX(due_at) - ` + begin + small
		unit = time.Millisecond
	}
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var first, last int64
		if err := rows.Scan(&first, &last); err != nil {
			return nil, nil, err
		}
		firsts, lasts = append(firsts, time.Duration(first)*unit), append(lasts, time.Duration(last)*unit)
	}
	return firsts, lasts, rows.Err()
}

// median is the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	sorted := slices.Sorted(slices.Values(ds))
	return sorted[len(sorted)/2]
}
