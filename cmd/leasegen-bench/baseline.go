package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/leasegen/leasegen/runtime"
)

// ceiling measures how fast the server updates rows of the task table: a
// tight loop of UPDATEs of 256 rows by primary key that flip their status
// (so the status indexes move, as in a claim or a completion), in rows per
// second. Every figure above can be read as a fraction of it.
func ceiling(ctx context.Context, o options, s *scratch) (float64, error) {
	if err := queueNoops(ctx, s, 20000); err != nil {
		return 0, err
	}
	now := nowExpr(o)
	args := make([]any, 256)
	marks := strings.TrimSuffix(strings.Repeat("?,", 256), ",")
	query := "UPDATE leasegen_tasks SET status = CASE WHEN status = 'QUEUED' THEN 'RUNNING' ELSE 'QUEUED' END, updated_at = " +
		now + ", attempt = attempt + 1 WHERE id IN (" + marks + ")"
	db := s.engine.DB()
	return rate(20000*4, func() error {
		for round := range 4 {
			for first := 1; first <= 20000; first += 256 {
				for i := range args {
					args[i] = first + i
				}
				if _, err := db.ExecContext(ctx, query, args...); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
			}
		}
		return nil
	})
}

// naive runs the article's algorithm on the same table: 16 workers, each
// claiming one task per transaction and completing it with its own UPDATE.
func naive(ctx context.Context, o options, s *scratch) (float64, error) {
	const tasks = 5000
	if err := queueNoops(ctx, s, tasks); err != nil {
		return 0, err
	}
	now := nowExpr(o)
	db := s.engine.DB()
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	return rate(tasks, func() error {
		for w := range 16 {
			owner := fmt.Sprintf("naive-%d", w)
			wg.Go(func() {
				for done.Load() < tasks {
					ok, err := naiveOne(ctx, db, owner, now)
					if err != nil && strings.Contains(err.Error(), "SQLITE_BUSY") {
						continue // a stale WAL snapshot: SQLite asks to start over
					}
					if err != nil {
						errs <- err
						return
					}
					if !ok {
						return // the queue is empty
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	})
}

// naiveOne claims and completes one task; false when none was left.
func naiveOne(ctx context.Context, db *sql.DB, owner, now string) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id int64
	lock := " FOR UPDATE SKIP LOCKED"
	if strings.Contains(now, "unixepoch") {
		lock = "" // SQLite: the write transaction is the lock
	}
	err = tx.QueryRowContext(ctx, "SELECT id FROM leasegen_tasks WHERE status = 'QUEUED' ORDER BY priority DESC, available_at, id LIMIT 1"+lock).Scan(&id)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = ?, updated_at = "+now+" WHERE id = ?", owner, id); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	for {
		_, err = db.ExecContext(ctx, "UPDATE leasegen_tasks SET status = 'SUCCESS', finished_at = "+now+" WHERE id = ? AND lease_owner = ?", id, owner)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err == nil, err
		}
	}
}

func queueNoops(ctx context.Context, s *scratch, n int) error {
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "noop"}
	}
	for range n / 1000 {
		if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
			return err
		}
	}
	return nil
}

// nowExpr is the engine's expression for the database's clock.
func nowExpr(o options) string {
	if o.sqlite {
		return "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
	}
	return "NOW(3)"
}
