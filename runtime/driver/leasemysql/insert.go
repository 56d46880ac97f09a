package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Batches are split into statements of at most this many rows and payload
// bytes (fewer when the server's max_allowed_packet is smaller), below
// MariaDB's default 16 MiB even when escaping doubles every payload.
const (
	insertChunkRows  = 1000
	insertChunkBytes = 4 << 20
)

// The rows of the hand-written multi-row INSERT match the columns and
// expressions of the TaskInsert query, written as simply as each task
// allows: numbers, NULLs and the empty owner go into the statement's text,
// so that a row binds only its type and payload in the common case (each
// bound argument costs database/sql a conversion and the driver an
// escaping pass), and each instant is the simplest expression that gives
// it (the server evaluates them row by row: COALESCE(?, NOW(3) + INTERVAL
// ? MICROSECOND) twice a row cost a 1,000-row batch about 40% of its
// server time on MariaDB 10.11).
const insertHeadSQL = `INSERT INTO leasegen_tasks (task_type, status, payload, priority, due_priority, available_at,
  due_at, max_attempts, owner_id, idempotency_key, metadata, created_at, updated_at) VALUES `

// Insert stores tasks and returns their ids in order; a task whose
// (type, idempotency key) exists gets the existing id. A batch is atomic: it
// runs in q's transaction, or in one of its own.
func (s *store) Insert(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if len(tasks) == 1 {
		id, err := s.q.TaskInsert(ctx, q, insertParams(tasks[0]))
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue %s: %w", tasks[0].Type, err)
		}
		return []leasetype.TaskID{leasetype.TaskID(id)}, nil
	}
	if _, ok := q.(*sql.DB); !ok {
		return s.insertChunks(ctx, q, nil, tasks, false)
	}
	if s.returning && s.chunkLen(tasks) == len(tasks) {
		// One statement is atomic on its own: no transaction, and none of
		// the five round trips around one.
		var prepared *sql.Stmt
		if fitsPrepared(tasks) {
			prepared = s.preparedInsert(ctx)
		}
		ids, err := s.insertReturning(ctx, q, prepared, tasks)
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue batch of %d: %w", len(tasks), err)
		}
		return ids, nil
	}
	// MySQL names a multi-row INSERT's first id only; a batch without keys
	// in a transaction of its own reads the others back (insertSnapshot).
	snapshot := !s.returning && !anyKey(tasks)
	level := readCommitted
	if snapshot {
		level = repeatableRead
	}
	var ids []leasetype.TaskID
	err := s.boundedTxAt(ctx, claimSessionIdle, level, func(tx *sql.Tx) error {
		if snapshot {
			if err := s.q.TaskTakeSnapshot(ctx, tx); err != nil {
				return fmt.Errorf("leasegen: enqueue batch of %d: %w", len(tasks), err)
			}
		}
		var err error
		ids, err = s.insertChunks(ctx, tx, s.preparedIn(ctx, tx, tasks), tasks, snapshot)
		return err
	})
	return ids, err
}

// insertChunks writes tasks in statements of at most insertChunkRows rows
// and insertChunkBytes of payload. prepared is the full-chunk INSERT on q
// (nil in the caller's transaction); snapshot says that q is a REPEATABLE
// READ transaction of its own whose snapshot was taken before the first.
func (s *store) insertChunks(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask, snapshot bool) ([]leasetype.TaskID, error) {
	ids := make([]leasetype.TaskID, 0, len(tasks))
	for len(tasks) > 0 {
		n := s.chunkLen(tasks)
		chunkIDs, err := s.insertChunk(ctx, q, prepared, tasks[:n], snapshot)
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue batch of %d: %w", len(tasks), err)
		}
		ids = append(ids, chunkIDs...)
		tasks = tasks[n:]
	}
	return ids, nil
}

// chunkLen is how many of tasks, from the first, one statement takes.
func (s *store) chunkLen(tasks []driver.NewTask) int {
	n, size := 0, 0
	chunkBytes := min(insertChunkBytes, s.maxPayload)
	for n < len(tasks) && n < insertChunkRows && (n == 0 || size+len(tasks[n].Payload) <= chunkBytes) {
		size += len(tasks[n].Payload)
		n++
	}
	return n
}

// insertChunk writes one statement where the server can name the new ids:
// MariaDB through RETURNING; MySQL through LAST_INSERT_ID and a read-back in
// the batch's own snapshot, or through LAST_INSERT_ID alone when its
// auto-increment settings make a statement's ids consecutive; in both
// cases only when no row can hit an existing key. Otherwise each row gets
// its own statement.
func (s *store) insertChunk(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask, snapshot bool) ([]leasetype.TaskID, error) {
	switch {
	case s.returning:
		return s.insertReturning(ctx, q, prepared, tasks)
	case snapshot:
		return s.insertSnapshot(ctx, q, prepared, tasks)
	case s.consecutiveIDs && !anyKey(tasks):
		return s.insertConsecutive(ctx, q, tasks)
	default:
		return s.insertEach(ctx, q, tasks)
	}
}

func (s *store) insertReturning(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	rows, err := queryInsert(ctx, q, prepared, tasks, returningSuffix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]leasetype.TaskID, 0, len(tasks))
	for rows.Next() {
		var id leasetype.TaskID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) != len(tasks) {
		return nil, fmt.Errorf("insert returned %d ids for %d rows", len(ids), len(tasks))
	}
	return ids, nil
}

// insertSnapshot inserts tasks, none with a key, in one statement and
// reads their ids back. Auto-increment values only grow, so every id at or
// above the statement's first was handed out after the transaction's
// snapshot, and the only such rows the snapshot shows are the
// transaction's own: the batch's, in the order of its rows, whether or not
// another session's inserts took ids in between (innodb_autoinc_lock_mode
// 2, MySQL 8's default) or auto_increment_increment spaces them.
func (s *store) insertSnapshot(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	first, err := insertFirstID(ctx, q, prepared, tasks)
	if err != nil {
		return nil, err
	}
	got, err := s.q.TaskIDsSince(ctx, q, mysqldb.TaskIDsSinceParams{FirstID: first, Limit: int32(len(tasks))})
	if err != nil {
		return nil, err
	}
	if len(got) != len(tasks) {
		return nil, fmt.Errorf("read back %d ids for %d rows", len(got), len(tasks))
	}
	ids := make([]leasetype.TaskID, len(got))
	for i, id := range got {
		ids[i] = leasetype.TaskID(id)
	}
	return ids, nil
}

// insertConsecutive runs in the caller's transaction, where nothing is
// prepared.
func (s *store) insertConsecutive(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	first, err := insertFirstID(ctx, q, nil, tasks)
	if err != nil {
		return nil, err
	}
	ids := make([]leasetype.TaskID, len(tasks))
	for i := range ids {
		ids[i] = leasetype.TaskID(first + int64(i))
	}
	return ids, nil
}

// insertFirstID inserts tasks in one statement and returns the id of its
// first row (LAST_INSERT_ID).
func insertFirstID(ctx context.Context, q driver.DBTX, prepared *sql.Stmt, tasks []driver.NewTask) (int64, error) {
	res, err := execInsert(ctx, q, prepared, tasks)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (s *store) insertEach(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	ids := make([]leasetype.TaskID, len(tasks))
	for i, t := range tasks {
		id, err := s.q.TaskInsert(ctx, q, insertParams(t))
		if err != nil {
			return nil, err
		}
		ids[i] = leasetype.TaskID(id)
	}
	return ids, nil
}

func multiRowInsert(tasks []driver.NewTask) (string, []any) {
	var b strings.Builder
	b.Grow(len(insertHeadSQL) + 100*len(tasks))
	b.WriteString(insertHeadSQL)
	args := make([]any, 0, 2*len(tasks))
	bindOr := func(v, empty string) {
		if v == "" {
			b.WriteString(", " + empty)
			return
		}
		b.WriteString(", ?")
		args = append(args, v)
	}
	for i, t := range tasks {
		if i > 0 {
			b.WriteByte(',')
		}
		priority := strconv.Itoa(t.Priority)
		b.WriteString("(?, 'QUEUED', ?, " + priority + ", " + priority)
		args = append(args, t.Type, t.Payload)
		instant := "NOW(3)" // available_at and due_at: the same instant
		switch {
		case !t.RunAt.IsZero():
			instant = "?"
			runAt := mysqlTime(t.RunAt)
			args = append(args, runAt, runAt)
		case t.Delay != 0:
			instant = "NOW(3) + INTERVAL " + strconv.FormatInt(micros(t.Delay), 10) + " MICROSECOND"
		}
		b.WriteString(", " + instant + ", " + instant + ", " + strconv.Itoa(t.MaxAttempts))
		bindOr(t.OwnerID, "''")
		bindOr(t.Key, "NULL")
		bindOr(string(t.Metadata), "NULL")
		b.WriteString(", NOW(3), NOW(3))")
	}
	return b.String(), args
}

func insertParams(t driver.NewTask) mysqldb.TaskInsertParams {
	return mysqldb.TaskInsertParams{
		TaskType:       t.Type,
		Payload:        t.Payload,
		Priority:       int32(t.Priority),
		RunAt:          mysqlTime(t.RunAt),
		DelayUs:        micros(t.Delay),
		MaxAttempts:    int32(t.MaxAttempts),
		OwnerID:        t.OwnerID,
		IdempotencyKey: sqlbuild.NullString(t.Key),
		Metadata:       sqlbuild.NullString(string(t.Metadata)),
	}
}

// mysqlTime formats an instant as a UTC DATETIME(3) literal, whatever the
// driver's loc setting; the zero time becomes NULL.
func mysqlTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

func anyKey(tasks []driver.NewTask) bool {
	for _, t := range tasks {
		if t.Key != "" {
			return true
		}
	}
	return false
}

func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	return t.s.Insert(ctx, t.q, tasks)
}
