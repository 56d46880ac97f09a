package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Yardstick figures: what the database does without the runtime.
const (
	ceilingName      = "ceiling: a task's row updates, batches of 1,000 rows"
	flipsCeilingName = "ceiling: status flips only, batches of 1,000 rows"
	ceilingCPUName   = "server CPU per task, ceiling (a task's 2 row updates)"
	naiveName        = "naive baseline: article's algorithm, 16 workers"
)

// ceilingBatch is the rows of one UPDATE in the ceiling loops.
const ceilingBatch = 1000

// ceiling measures how fast the server updates rows of the task table, in
// rows per second, with tight loops of UPDATEs of 1,000 rows by primary key
// on one connection, without locks, fences or transactions of their own.
// The main figure makes exactly the changes of a task's claim and then of
// its completion to fresh queued rows, so a burn-down at a given fraction of
// it spends the rest on the lease protocol. The second only flips status,
// the cheapest change that moves the status indexes.
func ceiling(ctx context.Context, s *scratch, t *table) error {
	const rows = 40000
	if err := queue(ctx, s, "noop", rows); err != nil {
		return err
	}
	meter, metered, err := newCPUMeter(ctx, s)
	if err != nil {
		return err
	}
	rate := func(queries ...string) func(int, int) (float64, error) {
		return func(rows, rounds int) (float64, error) { return updateRate(ctx, s, rows, rounds, queries...) }
	}
	if metered {
		// The task's two updates once more, for the server's CPU per task.
		inner := rate
		rate = func(queries ...string) func(int, int) (float64, error) {
			return func(rows, rounds int) (float64, error) {
				before, err := meter.read()
				if err != nil {
					return 0, err
				}
				r, err := inner(queries...)(rows, rounds)
				if err != nil || len(queries) != 2 {
					return r, err
				}
				after, err := meter.read()
				t.add(ceilingCPUName, "µs/task", float64((after-before).Microseconds())/float64(rows*rounds))
				return r, err
			}
		}
	}
	if s.kind == kindPostgres {
		return ceilingFigures(t, rate, rows, []string{pgCeilingClaim, pgCeilingComplete}, []string{pgCeilingFlip})
	}
	now := nowSQL(s.kind)
	lease := now + " + 60000"
	if s.kind == kindMySQL {
		lease = now + " + INTERVAL 60 SECOND"
	}
	ids := " WHERE id IN (" + strings.TrimSuffix(strings.Repeat("?,", ceilingBatch), ",") + ")"
	claim := "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = 'ceiling', due_at = " +
		lease + dueNotQueued(s.kind) + ", started_at = " + now + ", updated_at = " + now + ids
	complete := "UPDATE leasegen_tasks SET status = 'SUCCESS', result = NULL, due_at = " + now + ", updated_at = " + now + ids
	flip := "UPDATE leasegen_tasks SET status = CASE WHEN status = 'SUCCESS' THEN 'QUEUED' ELSE 'SUCCESS' END, updated_at = " +
		now + ", attempt = attempt + 1" + ids
	return ceilingFigures(t, rate, rows, []string{claim, complete}, []string{flip})
}

// ceilingFigures adds the two ceilings: a task's two updates once, and the
// status flip twice, over rows rows.
func ceilingFigures(t *table, rate func(queries ...string) func(rows, rounds int) (float64, error), rows int, task, flip []string) error {
	r, err := rate(task...)(rows, 1)
	if err != nil {
		return err
	}
	t.add(ceilingName, "rows/s", r)
	if r, err = rate(flip...)(rows, 2); err != nil {
		return err
	}
	t.add(flipsCeilingName, "rows/s", r)
	return nil
}

// updateRate runs each of queries over ids 1..rows in batches, rounds
// times, and returns the rows updated per second.
func updateRate(ctx context.Context, s *scratch, rows, rounds int, queries ...string) (float64, error) {
	args := make([]any, ceilingBatch)
	ids := make([]int64, ceilingBatch) // PostgreSQL's one array argument
	start := time.Now()
	for range rounds {
		for first := 1; first <= rows; first += ceilingBatch {
			for i := range args {
				args[i] = first + i
				ids[i] = int64(first + i)
			}
			args := args
			if s.kind == kindPostgres {
				args = []any{ids}
			}
			for _, q := range queries {
				if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
					return 0, fmt.Errorf("ceiling: %w", err)
				}
			}
		}
	}
	return float64(rows*rounds*len(queries)) / time.Since(start).Seconds(), nil
}

// naive runs the article's algorithm on the same table: 16 workers, each
// claiming one task per transaction, renewing its lease once and completing
// it, each with its own statement.
func naive(ctx context.Context, s *scratch, t *table) error {
	const tasks, workers = 5000, 16
	if err := queue(ctx, s, "noop", tasks); err != nil {
		return err
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		owner := fmt.Sprintf("naive-%d", w)
		wg.Go(func() {
			for {
				ok, err := naiveOne(ctx, s, owner)
				switch {
				case err != nil:
					errs <- err
					return
				case !ok:
					return // the queue is empty
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("naive baseline: %w", err)
	}
	t.add(naiveName, "tasks/s", float64(done.Load())/time.Since(start).Seconds())
	return nil
}

// naiveOne claims, renews and completes one task; false when none was
// left. SQLite's stale-snapshot errors are retried, as the article's loop
// would retry a failed claim.
func naiveOne(ctx context.Context, s *scratch, owner string) (bool, error) {
	if s.kind == kindPostgres {
		return naivePostgres(ctx, s, owner)
	}
	now := nowSQL(s.kind)
	lock := " FOR UPDATE SKIP LOCKED"
	if s.kind == kindSQLite {
		lock = "" // the write transaction is the lock
	}
	for {
		id, err := naiveClaim(ctx, s, owner, now, lock)
		if busy(err) {
			continue
		}
		if err != nil || id == 0 {
			return false, err
		}
		for _, stmt := range []string{
			"UPDATE leasegen_tasks SET due_at = " + now + " + 60000, updated_at = " + now + " WHERE id = ? AND lease_owner = ?",
			"UPDATE leasegen_tasks SET status = 'SUCCESS', due_at = " + now + " WHERE id = ? AND lease_owner = ?",
		} {
			if s.kind == kindMySQL {
				stmt = strings.Replace(stmt, "+ 60000", "+ INTERVAL 60 SECOND", 1)
			}
			for {
				_, err = s.db.ExecContext(ctx, stmt, id, owner)
				if !busy(err) {
					break
				}
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	}
}

// naiveClaim claims one task in its own transaction, in the claim index's
// order; 0 when none is left.
func naiveClaim(ctx context.Context, s *scratch, owner, now, lock string) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	order := "priority DESC, due_at, id"
	lease := now + " + 60000"
	if s.kind == kindMySQL {
		order = "due_priority DESC, due_at, id"
		lease = now + " + INTERVAL 60 SECOND"
	}
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM leasegen_tasks WHERE status = 'QUEUED' ORDER BY "+order+" LIMIT 1"+lock).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	claim := "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = ?, due_at = " + lease +
		dueNotQueued(s.kind) + ", started_at = " + now + ", updated_at = " + now + " WHERE id = ?"
	if _, err := tx.ExecContext(ctx, claim, owner, id); err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// dueNotQueued is the assignment that takes a task out of the queued part
// of the MySQL claim index, as the runtime's claim does; SQLite's partial
// indexes need none.
func dueNotQueued(kind string) string {
	if kind == kindMySQL {
		return ", due_priority = 0"
	}
	return ""
}

// busy reports SQLite's request to start a transaction over.
func busy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "SQLITE_BUSY")
}

// nowSQL is the engine's expression for the database's clock.
func nowSQL(kind string) string {
	if kind == kindSQLite {
		return "(SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))" // read once per statement, as the runtime does
	}
	return "NOW(3)"
}

// naivePostgres is naiveOne on PostgreSQL.
func naivePostgres(ctx context.Context, s *scratch, owner string) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id int64
	err = tx.QueryRowContext(ctx, pgNaiveClaim).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, pgNaiveMark, owner, id); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	for _, stmt := range []string{pgNaiveRenew, pgNaiveComplete} {
		if _, err := s.db.ExecContext(ctx, stmt, id, owner); err != nil {
			return false, err
		}
	}
	return true, nil
}
