package runtime

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/internal/sqlitedb"
)

// insert stores tasks with one INSERT ... RETURNING each: SQLite does not
// promise RETURNING's row order for a multi-row INSERT, and statements in
// one local transaction cost microseconds. A batch is atomic: it runs in q's
// transaction, or in one of its own.
func (s *sqliteStore) insert(ctx context.Context, q dbtx, tasks []newTask) ([]TaskID, error) {
	if db, ok := q.(*sql.DB); ok && len(tasks) > 1 {
		var ids []TaskID
		err := s.retry(ctx, func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback() //nolint:errcheck // a no-op after Commit
			if ids, err = s.insertEach(ctx, tx, tasks); err != nil {
				return err
			}
			return tx.Commit()
		})
		return ids, err
	}
	if q == dbtx(s.db) {
		var ids []TaskID
		err := s.retry(ctx, func() error {
			var err error
			ids, err = s.insertEach(ctx, q, tasks)
			return err
		})
		return ids, err
	}
	return s.insertEach(ctx, q, tasks)
}

func (s *sqliteStore) insertEach(ctx context.Context, q dbtx, tasks []newTask) ([]TaskID, error) {
	ids := make([]TaskID, len(tasks))
	for i, t := range tasks {
		var runAt any
		if !t.RunAt.IsZero() {
			runAt = t.RunAt.UnixMilli()
		}
		id, err := s.q.TaskInsert(ctx, q, sqlitedb.TaskInsertParams{
			TaskType: t.Type, Payload: t.Payload, Priority: int64(t.Priority),
			RunAtMs: runAt, DelayMs: millis(t.Delay), MaxAttempts: int64(t.MaxAttempts),
			OwnerID: t.OwnerID, IdempotencyKey: nullString(t.Key),
		})
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue %s: %w", t.Type, err)
		}
		ids[i] = TaskID(id)
	}
	return ids, nil
}
