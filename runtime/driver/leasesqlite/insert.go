package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Insert stores tasks with one INSERT ... RETURNING each, prepared once per
// call: SQLite does not promise RETURNING's row order for a multi-row
// INSERT, and a prepared statement in one local transaction costs
// microseconds a row (compiling it again for every row cost more than
// running it). A batch is atomic: it runs in q's transaction, or in one of
// its own.
func (s *store) Insert(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if db, ok := q.(*sql.DB); ok && len(tasks) > 1 {
		var ids []leasetype.TaskID
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
	if q == driver.DBTX(s.db) {
		var ids []leasetype.TaskID
		err := s.retry(ctx, func() error {
			var err error
			ids, err = s.insertEach(ctx, q, tasks)
			return err
		})
		return ids, err
	}
	return s.insertEach(ctx, q, tasks)
}

func (s *store) insertEach(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if len(tasks) > 1 {
		p := &preparedOnce{DBTX: q}
		defer p.close()
		q = p
	}
	ids := make([]leasetype.TaskID, len(tasks))
	for i, t := range tasks {
		var runAt any
		if !t.RunAt.IsZero() {
			runAt = t.RunAt.UnixMilli()
		}
		id, err := s.q.TaskInsert(ctx, q, sqlitedb.TaskInsertParams{
			TaskType: t.Type, Payload: t.Payload, Priority: int64(t.Priority),
			RunAtMs: runAt, DelayMs: millis(t.Delay), MaxAttempts: int64(t.MaxAttempts),
			OwnerID: t.OwnerID, IdempotencyKey: sqlbuild.NullString(t.Key),
			Metadata: sqlbuild.NullString(string(t.Metadata)),
		})
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue %s: %w", t.Type, err)
		}
		ids[i] = leasetype.TaskID(id)
	}
	return ids, nil
}

// preparedOnce hands a sqlc method that runs one query many times a
// statement prepared at its first run, so that the method's own argument
// order serves every row. Other methods pass through.
type preparedOnce struct {
	driver.DBTX
	query string
	stmt  *sql.Stmt
}

// QueryRowContext runs query through the prepared statement; when it
// cannot be prepared, the plain call reports why.
func (p *preparedOnce) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if p.stmt == nil {
		stmt, err := p.DBTX.PrepareContext(ctx, query)
		if err != nil {
			return p.DBTX.QueryRowContext(ctx, query, args...)
		}
		p.query, p.stmt = query, stmt
	}
	if query != p.query {
		return p.DBTX.QueryRowContext(ctx, query, args...)
	}
	return p.stmt.QueryRowContext(ctx, args...)
}

func (p *preparedOnce) close() {
	if p.stmt != nil {
		_ = p.stmt.Close()
	}
}
