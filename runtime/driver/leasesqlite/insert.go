package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// insertRunRows bounds the rows of one multi-row INSERT: 9 arguments a
// row stay well below SQLite's 32,766 bound variables.
const insertRunRows = 1000

// Insert stores tasks and returns their ids in order. In a transaction,
// each run of tasks without an idempotency key goes in as one multi-row
// INSERT with ids the transaction chose (insertRun); a task with a key
// goes in alone, with INSERT ... ON CONFLICT ... RETURNING, prepared once
// per call. A batch is atomic: it runs in q's transaction, or in one of
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
			if ids, err = s.insertAll(ctx, tx, tasks); err != nil {
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
			ids, err = s.insertAll(ctx, q, tasks)
			return err
		})
		return ids, err
	}
	return s.insertAll(ctx, q, tasks)
}

// insertAll inserts tasks in order on q, in runs where q is a transaction.
func (s *store) insertAll(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	tx, inTx := q.(*sql.Tx)
	if len(tasks) > 1 {
		p := &preparedOnce{DBTX: q}
		defer p.close()
		q = p
	}
	ids := make([]leasetype.TaskID, len(tasks))
	for i := 0; i < len(tasks); {
		if n := unkeyedRun(tasks[i:]); inTx && n > 1 {
			if err := insertRun(ctx, tx, tasks[i:i+n], ids[i:i+n]); err != nil {
				return nil, fmt.Errorf("leasegen: enqueue %d tasks: %w", n, err)
			}
			i += n
			continue
		}
		t := tasks[i]
		id, err := s.q.TaskInsert(ctx, q, sqlitedb.TaskInsertParams{
			TaskType: t.Type, Payload: t.Payload, Priority: int64(t.Priority),
			RunAtMs: runAtMillis(t), DelayMs: millis(t.Delay), MaxAttempts: int64(t.MaxAttempts),
			OwnerID: t.OwnerID, IdempotencyKey: sqlbuild.NullString(t.Key),
			Metadata: sqlbuild.NullString(string(t.Metadata)),
		})
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue %s: %w", t.Type, err)
		}
		ids[i] = leasetype.TaskID(id)
		i++
	}
	return ids, nil
}

// runAtMillis is t's run-at instant in Unix milliseconds, or nil (NULL)
// when it has none.
func runAtMillis(t driver.NewTask) any {
	if t.RunAt.IsZero() {
		return nil
	}
	return t.RunAt.UnixMilli()
}

// unkeyedRun is how many of the first tasks, at most insertRunRows, have no
// idempotency key: they cannot meet an existing row.
func unkeyedRun(tasks []driver.NewTask) int {
	n := 0
	for n < len(tasks) && n < insertRunRows && tasks[n].Key == "" {
		n++
	}
	return n
}

// nextIDSQL is the id AUTOINCREMENT would give the next row: one past the
// largest id the table ever held.
const nextIDSQL = `SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'leasegen_tasks'), 0),
  COALESCE((SELECT MAX(id) FROM leasegen_tasks), 0)) + 1`

// insertRunHead and insertRunTail surround the rows of a multi-row INSERT
// with ids: the VALUES rows are (id, task_type, payload, priority,
// run_at_ms, delay_ms, max_attempts, owner_id, metadata), and the database's
// clock is read once for the statement. It matches TaskInsert's columns.
const (
	insertRunHead = `INSERT INTO leasegen_tasks (id, task_type, status, payload, priority, available_at, due_at,
  max_attempts, owner_id, metadata, created_at, updated_at)
SELECT v.column1, v.column2, 'QUEUED', v.column3, v.column4, COALESCE(v.column5, c.now + v.column6),
  COALESCE(v.column5, c.now + v.column6), v.column7, v.column8, v.column9, c.now, c.now
FROM (VALUES `
	insertRunRow  = `(?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertRunTail = `) AS v CROSS JOIN (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER) AS now) AS c`
)

// insertRun inserts tasks, none with a key, in one statement of tx, and
// writes their ids to ids. The ids are the ones AUTOINCREMENT would have
// given, chosen in the transaction, whose write lock keeps other writers
// out between the choice and the INSERT (a deferred transaction that saw
// an older snapshot fails to write instead).
func insertRun(ctx context.Context, tx *sql.Tx, tasks []driver.NewTask, ids []leasetype.TaskID) error {
	var next int64
	if err := tx.QueryRowContext(ctx, nextIDSQL).Scan(&next); err != nil {
		return err
	}
	var b strings.Builder
	b.Grow(len(insertRunHead) + len(tasks)*(len(insertRunRow)+1) + len(insertRunTail))
	b.WriteString(insertRunHead)
	args := make([]any, 0, 9*len(tasks))
	for i, t := range tasks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(insertRunRow)
		ids[i] = leasetype.TaskID(next + int64(i))
		args = append(args, next+int64(i), t.Type, t.Payload, int64(t.Priority), runAtMillis(t), millis(t.Delay),
			int64(t.MaxAttempts), t.OwnerID, sqlbuild.NullString(string(t.Metadata)))
	}
	b.WriteString(insertRunTail)
	res, err := tx.ExecContext(ctx, b.String(), args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(tasks)) {
		return fmt.Errorf("inserted %d rows of %d: %v", n, len(tasks), err)
	}
	return nil
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

func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if t.Writes.InTx {
		return t.s.insertAll(ctx, t.q, tasks)
	}
	return t.s.Insert(ctx, t.q, tasks)
}
