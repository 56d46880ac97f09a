package leasemysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-sql-driver/mysql"
)

// claimSessionIdle is how long the server keeps a claim, recovery or batch
// enqueue transaction open after its client stops talking. A worker cut off
// from the database in the middle of a claim (a partition, a frozen
// process) holds the locks it took, the limit rows that every limited claim
// in the cluster waits for among them, at most this long: then the server
// ends its session and rolls the transaction back. Between a transaction's
// statements the worker's own pause is microseconds.
const claimSessionIdle = 2 * time.Second

// mysqlErrUnknownSystemVariable is the answer to a variable the server does
// not have.
const mysqlErrUnknownSystemVariable = 1193

// idleTimeoutVariable asks the server which session variable bounds an idle
// transaction: MariaDB's idle_transaction_timeout ends only sessions idle
// inside a transaction; MySQL has none, and its wait_timeout ends any idle
// session.
func idleTimeoutVariable(ctx context.Context, db *sql.DB) (string, error) {
	var v sql.NullInt64
	err := db.QueryRowContext(ctx, "SELECT @@session.idle_transaction_timeout").Scan(&v)
	var me *mysql.MySQLError
	switch {
	case err == nil:
		return "idle_transaction_timeout", nil
	case errors.As(err, &me) && me.Number == mysqlErrUnknownSystemVariable:
		return "wait_timeout", nil
	}
	return "", err
}

// BeginExecutionTx begins an idempotent execution's transaction on a session
// the server ends after lease + 1s without a statement: a worker cut off
// between the handler's writes (or the fenced completion) and its COMMIT
// holds the task's row, and the handler's, no longer than that. A handler
// must not leave its transaction idle that long (slow work belongs before
// it); a worker that cannot renew stops the execution before then, and the
// end of its context rolls the transaction back.
func (s *store) BeginExecutionTx(ctx context.Context, lease time.Duration) (*sql.Tx, func(), error) {
	return s.beginBounded(ctx, lease+time.Second, nil)
}

// boundedTx runs fn in a READ COMMITTED transaction whose session the server
// ends after idle without a statement (see claimSessionIdle).
func (s *store) boundedTx(ctx context.Context, idle time.Duration, fn func(tx *sql.Tx) error) error {
	return s.boundedTxAt(ctx, idle, sql.LevelReadCommitted, fn)
}

// boundedTxAt is boundedTx at the isolation level level.
func (s *store) boundedTxAt(ctx context.Context, idle time.Duration, level sql.IsolationLevel, fn func(tx *sql.Tx) error) error {
	tx, done, err := s.beginBounded(ctx, idle, &sql.TxOptions{Isolation: level})
	if err != nil {
		return err
	}
	defer done()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// beginBounded begins a transaction on a connection of the pool whose
// server-side idle timeout, and its timeouts for a client that stops
// reading or writing half-way, are set to idle (whole seconds, rounded
// up). done, called after the transaction ends, restores the session's own
// values before the connection returns to the pool, or discards a
// connection that cannot be restored: the caller's own transactions on
// that pool never run under leasegen's timeouts.
func (s *store) beginBounded(ctx context.Context, idle time.Duration, opts *sql.TxOptions) (*sql.Tx, func(), error) {
	if err := s.Check(ctx); err != nil { // learns the idle variable
		return nil, nil, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	secs := int64(math.Ceil(idle.Seconds()))
	v := s.idleVariable
	set := fmt.Sprintf("SET @leasegen_idle = @@session.%[1]s, @leasegen_write = @@session.net_write_timeout, "+
		"@leasegen_read = @@session.net_read_timeout, SESSION %[1]s = %[2]d, SESSION net_write_timeout = %[2]d, "+
		"SESSION net_read_timeout = %[2]d", v, secs)
	restore := fmt.Sprintf("SET SESSION %s = @leasegen_idle, SESSION net_write_timeout = @leasegen_write, "+
		"SESSION net_read_timeout = @leasegen_read", v)
	discard := func() {
		_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn }) // closed, not pooled
		_ = conn.Close()
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		discard()
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		discard()
		return nil, nil, err
	}
	done := func() {
		// The caller's context may be spent; the restore gets its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimSessionIdle)
		defer cancel()
		if _, err := conn.ExecContext(rctx, restore); err != nil {
			discard()
			return
		}
		_ = conn.Close()
	}
	return tx, done, nil
}
