package leasemysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
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

// Session variables whose names differ between servers, each with the
// name to use when the server has none of the earlier ones:
// MariaDB's idle_transaction_timeout ends only sessions idle inside a
// transaction, while MySQL has none and its wait_timeout ends any idle
// session; MySQL 8 and MariaDB 11.1 name the isolation level
// transaction_isolation, earlier MariaDB only tx_isolation.
var (
	idleVariables      = []string{"idle_transaction_timeout", "wait_timeout"}
	isolationVariables = []string{"transaction_isolation", "tx_isolation"}
)

// sessionVariable returns the first of names the server has, or the last.
func sessionVariable(ctx context.Context, db *sql.DB, names []string) (string, error) {
	for _, name := range names[:len(names)-1] {
		var v sql.NullString
		err := db.QueryRowContext(ctx, "SELECT @@session."+name).Scan(&v)
		var me *mysql.MySQLError
		switch {
		case err == nil:
			return name, nil
		case !errors.As(err, &me) || me.Number != mysqlErrUnknownSystemVariable:
			return "", err
		}
	}
	return names[len(names)-1], nil
}

// BeginExecutionTx begins an idempotent execution's transaction on a session
// the server ends after lease + 1s without a statement: a worker cut off
// between the handler's writes (or the fenced completion) and its COMMIT
// holds the task's row, and the handler's, no longer than that. A handler
// must not leave its transaction idle that long (slow work belongs before
// it); a worker that cannot renew stops the execution before then, and the
// end of its context rolls the transaction back.
func (s *store) BeginExecutionTx(ctx context.Context, lease time.Duration) (*sql.Tx, func(), error) {
	return s.beginBounded(ctx, bounds{idle: lease + time.Second})
}

// boundedTx runs fn in a READ COMMITTED transaction whose session the server
// ends after idle without a statement (see claimSessionIdle). The session
// leaves autocommit off, so fn's first statement begins the transaction:
// no round trip for an isolation level or a START TRANSACTION of its own.
func (s *store) boundedTx(ctx context.Context, idle time.Duration, fn func(q mysqldb.DBTX) error) error {
	conn, release, err := s.boundedSession(ctx, bounds{idle: idle, isolation: readCommitted, autocommitOff: true})
	if err != nil {
		return err
	}
	if err := fn(conn); err != nil {
		// A context that is done cannot send the ROLLBACK: the session is
		// then discarded, and the server rolls back as it closes.
		_, rerr := conn.ExecContext(ctx, "ROLLBACK")
		release(rerr == nil)
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	release(err == nil)
	return err
}

// boundedTxAt runs fn in a transaction at isolation on a bounded session,
// as a *sql.Tx (for statements prepared on the pool: tx.StmtContext).
func (s *store) boundedTxAt(ctx context.Context, idle time.Duration, isolation string, fn func(tx *sql.Tx) error) error {
	tx, done, err := s.beginBounded(ctx, bounds{idle: idle, isolation: isolation})
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

// The isolation levels a bounded session sets, as the server names them.
const (
	readCommitted  = "READ-COMMITTED"
	repeatableRead = "REPEATABLE-READ"
)

// bounds are what a bounded session sets for leasegen, in the one SET
// statement that also saves the session's own values.
type bounds struct {
	// idle bounds how long the server keeps the session while its client
	// says nothing, and its timeouts for a client that stops reading or
	// writing half-way (whole seconds, rounded up).
	idle time.Duration
	// isolation is the session's transaction isolation level; "" keeps it.
	isolation string
	// autocommitOff makes the session's next statement begin a
	// transaction that lasts until COMMIT or ROLLBACK.
	autocommitOff bool
}

// beginBounded begins a transaction on a bounded session (boundedSession);
// done, called after the transaction ends, restores the session.
func (s *store) beginBounded(ctx context.Context, b bounds) (*sql.Tx, func(), error) {
	conn, release, err := s.boundedSession(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		release(false)
		return nil, nil, err
	}
	return tx, func() { release(true) }, nil
}

// boundedSession takes a connection of the pool and sets b on its session.
// release(true), called once the session's transaction has ended, restores
// the session's own values before the connection returns to the pool;
// release(false), or a restore that fails, discards the connection: the
// caller's own transactions on that pool never run under leasegen's
// settings.
func (s *store) boundedSession(ctx context.Context, b bounds) (*sql.Conn, func(restore bool), error) {
	if err := s.Check(ctx); err != nil { // learns the variables' names
		return nil, nil, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	set, restore := s.sessionStatements(b)
	discard := func() {
		_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn }) // closed, not pooled
		_ = conn.Close()
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		discard()
		return nil, nil, err
	}
	release := func(ok bool) {
		if !ok {
			discard()
			return
		}
		// The caller's context may be spent; the restore gets its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimSessionIdle)
		defer cancel()
		if _, err := conn.ExecContext(rctx, restore); err != nil {
			discard()
			return
		}
		_ = conn.Close()
	}
	return conn, release, nil
}

// sessionStatements returns the SET that saves the session's values and
// sets b, and the SET that restores them. The server assigns left to
// right, so each value is saved before it is set.
func (s *store) sessionStatements(b bounds) (set, restore string) {
	secs := int64(math.Ceil(b.idle.Seconds()))
	type setting struct{ name, saved, value string }
	settings := []setting{
		{s.idleVariable, "@leasegen_idle", fmt.Sprint(secs)},
		{"net_write_timeout", "@leasegen_write", fmt.Sprint(secs)},
		{"net_read_timeout", "@leasegen_read", fmt.Sprint(secs)},
	}
	if b.isolation != "" {
		settings = append(settings, setting{s.isolationVariable, "@leasegen_isolation", "'" + b.isolation + "'"})
	}
	if b.autocommitOff {
		settings = append(settings, setting{"autocommit", "@leasegen_autocommit", "0"})
	}
	var saves, sets, restores []string
	for _, v := range settings {
		saves = append(saves, fmt.Sprintf("%s = @@session.%s", v.saved, v.name))
		sets = append(sets, fmt.Sprintf("SESSION %s = %s", v.name, v.value))
		restores = append(restores, fmt.Sprintf("SESSION %s = %s", v.name, v.saved))
	}
	return "SET " + strings.Join(append(saves, sets...), ", "), "SET " + strings.Join(restores, ", ")
}

// tablesTx runs fn in a READ COMMITTED transaction on a bounded session
// (see claimSessionIdle), again after a deadlock or a lock wait that timed
// out.
func (s *store) tablesTx(ctx context.Context, fn func(driver.Tables) error) error {
	return s.retry(ctx, func() error {
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error { return fn(s.tablesIn(tx)) })
	})
}

// WorkerLockRegistry locks leasegen_limits' registry row by writing it (a
// row that does not exist yet has nothing to lock in READ COMMITTED, and
// Galera certifies only written rows).
func (t tables) WorkerLockRegistry(ctx context.Context) error {
	if !t.Writes.InTx {
		return nil
	}
	return t.s.q.WorkerLockRegistry(ctx, t.q)
}
