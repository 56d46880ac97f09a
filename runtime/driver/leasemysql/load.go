package leasemysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// loadMinRows is the fewest rows a batch loads with LOAD DATA: a smaller
// one pays more for the load's extra round trips (the file request, the
// id read, the transaction) than its rows save. On MariaDB 10.11, against
// one INSERT ... RETURNING: 30% slower at 64 rows, even at 128, 10 - 20%
// faster at 256, 50% at 1,000.
const loadMinRows = 256

// LOAD DATA LOCAL takes rows as lines of tab-separated fields, in its
// default format, named here so no sql_mode can change it. Fields are
// loaded as bytes, without character set conversion; the instants are the
// same expressions as multiRowInsert's.
const (
	loadHeadSQL = `LOAD DATA LOCAL INFILE 'Reader::%s' INTO TABLE leasegen_tasks CHARACTER SET binary
  FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A'
  (task_type, payload, @priority, max_attempts, owner_id, metadata%s)
  SET status = 'QUEUED', priority = @priority, due_priority = @priority, idempotency_key = NULL,
    available_at = %[3]s, due_at = %[3]s, created_at = NOW(3), updated_at = NOW(3)`
	loadNowSQL = "NOW(3)"
	// loadInstantSQL is a row's instant when the batch has a delayed or
	// scheduled task: its run_at field, or now plus its delay_us field.
	loadInstantSQL = "IF(@run_at IS NULL, NOW(3) + INTERVAL @delay_us MICROSECOND, @run_at)"
)

// loadSeq names each load's reader, so that concurrent batches never read
// each other's rows.
var loadSeq atomic.Uint64

// errLoadRefused says the server or its client settings refused LOAD DATA
// LOCAL; the batch goes through INSERT instead.
var errLoadRefused = errors.New("LOAD DATA LOCAL refused")

// errLoadWarnings says a load converted or skipped something that INSERT
// would have refused; the load is rolled back and the batch goes through
// INSERT, which reports the server's own error.
var errLoadWarnings = errors.New("LOAD DATA LOCAL gave warnings")

// loadable says whether tasks go through LOAD DATA LOCAL: a batch without
// idempotency keys (a duplicate key would only be a warning to a LOCAL
// load) large enough to gain, on a server that allows it.
func (s *store) loadable(tasks []driver.NewTask) bool {
	return s.localInfile.Load() && len(tasks) >= loadMinRows && !anyKey(tasks)
}

// insertLoaded stores tasks with LOAD DATA LOCAL in a transaction of its
// own, and tells whether it did: false (and no error) when the server
// refused the load or its warnings rolled it back, so the caller inserts
// the batch instead. The ids come as insertConsecutive's or
// insertSnapshot's do.
func (s *store) insertLoaded(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, bool, error) {
	level := sql.LevelRepeatableRead
	if s.consecutiveIDs {
		level = sql.LevelReadCommitted
	}
	var ids []leasetype.TaskID
	err := s.boundedTxAt(ctx, claimSessionIdle, level, func(tx *sql.Tx) error {
		if !s.consecutiveIDs {
			if err := s.q.TaskTakeSnapshot(ctx, tx); err != nil {
				return err
			}
		}
		ids = make([]leasetype.TaskID, 0, len(tasks))
		for rest := tasks; len(rest) > 0; {
			n := s.chunkLen(rest) // bounds the file in memory as a statement
			chunk, err := s.loadChunk(ctx, tx, rest[:n])
			if err != nil {
				return err
			}
			ids = append(ids, chunk...)
			rest = rest[n:]
		}
		return nil
	})
	switch {
	case errors.Is(err, errLoadRefused):
		s.localInfile.Store(false) // the server's setting: not worth asking again
		return nil, false, nil
	case errors.Is(err, errLoadWarnings):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("leasegen: enqueue batch of %d: %w", len(tasks), err)
	}
	return ids, true, nil
}

// loadChunk loads tasks in one statement and returns their ids.
func (s *store) loadChunk(ctx context.Context, tx *sql.Tx, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	file, timed := loadFile(tasks)
	name := "leasegen-" + strconv.FormatUint(loadSeq.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(file) })
	defer mysql.DeregisterReaderHandler(name)
	columns, instant := "", loadNowSQL
	if timed {
		columns, instant = ", @run_at, @delay_us", loadInstantSQL
	}
	res, err := tx.ExecContext(ctx, fmt.Sprintf(loadHeadSQL, name, columns, instant))
	if err != nil {
		if refusesLoad(err) {
			return nil, errLoadRefused
		}
		return nil, err
	}
	var first, warnings int64
	if err := tx.QueryRowContext(ctx, "SELECT LAST_INSERT_ID(), @@warning_count").Scan(&first, &warnings); err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || warnings != 0 || n != int64(len(tasks)) {
		return nil, errLoadWarnings
	}
	if s.consecutiveIDs {
		return idRange(first, len(tasks)), nil
	}
	return s.readBackIDs(ctx, tx, first, len(tasks))
}

// refusesLoad says whether err is the server refusing LOAD DATA LOCAL:
// local_infile off (MariaDB 10.11 says 4166, older servers 1148, MySQL 8
// and 9 3948 or 3950).
func refusesLoad(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 4166 || me.Number == 1148 || me.Number == 3948 || me.Number == 3950)
}

// loadFile writes tasks as loadHeadSQL's lines, and says whether any is
// delayed or scheduled, so that the lines carry run_at and delay_us.
func loadFile(tasks []driver.NewTask) ([]byte, bool) {
	timed := false
	size := 0
	for _, t := range tasks {
		timed = timed || !t.RunAt.IsZero() || t.Delay != 0
		size += len(t.Type) + 2*len(t.Payload) + len(t.OwnerID) + len(t.Metadata) + 32
	}
	b := make([]byte, 0, size)
	for _, t := range tasks {
		b = appendLoadField(b, t.Type)
		b = append(b, '\t')
		b = appendLoadField(b, t.Payload)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(t.Priority), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(t.MaxAttempts), 10)
		b = append(b, '\t')
		b = appendLoadField(b, t.OwnerID)
		b = append(b, '\t')
		if len(t.Metadata) == 0 { // as multiRowInsert: no metadata is NULL
			b = append(b, `\N`...)
		} else {
			b = appendLoadField(b, t.Metadata)
		}
		if timed {
			b = append(b, '\t')
			if t.RunAt.IsZero() {
				b = append(b, `\N`...)
			} else {
				b = t.RunAt.UTC().AppendFormat(b, "2006-01-02 15:04:05.000")
			}
			b = append(b, '\t')
			b = strconv.AppendInt(b, micros(t.Delay), 10)
		}
		b = append(b, '\n')
	}
	return b, timed
}

// appendLoadField appends v as one field, escaping the bytes that LOAD
// DATA's format gives a meaning.
func appendLoadField[T string | []byte](b []byte, v T) []byte {
	for i := range len(v) {
		switch c := v[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case 0:
			b = append(b, `\0`...)
		default:
			b = append(b, c)
		}
	}
	return b
}
