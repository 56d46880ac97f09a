package leasemysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/runtime/driver"
)

// returningSuffix ends MariaDB's multi-row INSERT: an existing key keeps
// its row, and every row, new or existing, returns its id.
const returningSuffix = " ON DUPLICATE KEY UPDATE id = id RETURNING id"

// A full chunk of plain tasks, the usual bulk enqueue, runs as one
// statement prepared once per connection: the server parses its thousand
// rows once instead of every time, and the payloads travel as bytes
// instead of escaped text. A plain task starts at once, at priority 0,
// without owner, key or metadata, so a row binds only its type, payload
// and attempts (each bound argument costs database/sql a conversion).
// Other chunks vary in shape, and preparing each would fill the server's
// prepared-statement cap.
const preparedRow = "(?, 'QUEUED', ?, 0, 0, NOW(3), NOW(3), ?, '', NULL, NULL, NOW(3), NOW(3))"

// fitsPrepared says whether tasks are one full chunk of plain tasks.
func fitsPrepared(tasks []driver.NewTask) bool {
	if len(tasks) != insertChunkRows {
		return false
	}
	for _, t := range tasks {
		if !t.RunAt.IsZero() || t.Delay != 0 || t.Priority != 0 || t.OwnerID != "" || t.Key != "" || len(t.Metadata) != 0 {
			return false
		}
	}
	return true
}

// preparedArgs are preparedRow's arguments for tasks.
func preparedArgs(tasks []driver.NewTask) []any {
	args := make([]any, 0, 3*len(tasks))
	for _, t := range tasks {
		args = append(args, t.Type, t.Payload, int64(t.MaxAttempts))
	}
	return args
}

// preparedInsert returns the full-chunk INSERT prepared on the store's
// pool (with RETURNING on MariaDB), preparing it on first use, or nil:
// when the server refused it (max_prepared_stmt_count), batches run
// interpolated from then on.
func (s *store) preparedInsert(ctx context.Context) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared == nil && !s.preparedFailed {
		query := insertHeadSQL + strings.TrimSuffix(strings.Repeat(preparedRow+",", insertChunkRows), ",")
		if s.returning {
			query += returningSuffix
		}
		stmt, err := s.db.PrepareContext(ctx, query)
		s.prepared, s.preparedFailed = stmt, refusesPrepare(err) // else try again next time
	}
	return s.prepared
}

// refusesPrepare says whether err is the server refusing to prepare a
// statement: its prepared-statement cap reached (1461), or a proxy
// without prepared statements (1295).
func refusesPrepare(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1461 || me.Number == 1295)
}

// preparedIn returns the full-chunk INSERT for the store's own transaction
// tx, or nil when tasks are too few for a full chunk (binding it to tx can
// cost a prepare on tx's connection).
func (s *store) preparedIn(ctx context.Context, tx *sql.Tx, tasks []driver.NewTask) *sql.Stmt {
	if len(tasks) < insertChunkRows {
		return nil
	}
	if stmt := s.preparedInsert(ctx); stmt != nil {
		return tx.StmtContext(ctx, stmt)
	}
	return nil
}

// queryInsert runs the multi-row INSERT of tasks that returns rows: the
// prepared one when tasks fit it (and the connection could prepare it),
// else the interpolated text with suffix.
func queryInsert(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask, suffix string) (*sql.Rows, error) {
	if prepared != nil && fitsPrepared(tasks) {
		if rows, err := prepared.QueryContext(ctx, preparedArgs(tasks)...); !refusesPrepare(err) {
			return rows, err
		}
	}
	query, args := multiRowInsert(tasks)
	return q.QueryContext(ctx, query+suffix, args...)
}

// execInsert runs the multi-row INSERT of tasks: the prepared one when
// tasks fit it (and the connection could prepare it), else the
// interpolated text.
func execInsert(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask) (sql.Result, error) {
	if prepared != nil && fitsPrepared(tasks) {
		if res, err := prepared.ExecContext(ctx, preparedArgs(tasks)...); !refusesPrepare(err) {
			return res, err
		}
	}
	query, args := multiRowInsert(tasks)
	return q.ExecContext(ctx, query, args...)
}
