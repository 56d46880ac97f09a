package leasepostgres

import (
	sqldriver "database/sql/driver"
	"errors"
	"sync"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime/driver"
)

// A pool from Open keeps the connections a worker's loops use at once
// instead of closing all but database/sql's default 2 of them.
func TestOpenKeepsIdleConnections(t *testing.T) {
	t.Parallel()
	db, err := Open(pgtest.New(t))
	dbtest.Must(t, "open", err)
	defer db.Close()
	const busy = 8
	var ready, release sync.WaitGroup
	ready.Add(busy)
	release.Add(1)
	var wg sync.WaitGroup
	for range busy {
		wg.Go(func() {
			tx, err := db.BeginTx(bg, nil) // holds a connection until released
			ready.Done()
			if err != nil {
				t.Error(err)
				return
			}
			release.Wait()
			_ = tx.Rollback()
		})
	}
	ready.Wait()
	release.Done()
	wg.Wait()
	if idle := db.Stats().Idle; idle != busy {
		t.Errorf("%d idle connections after %d were in use at once, want %d", idle, busy, busy)
	}
}

// A write refused as read-only (a standby, a demoted primary) closes its
// connection: the pool does not hand it out again, and the error reads
// as not sent, so the write is retried on a new connection.
func TestOpenDropsReadOnlyConnections(t *testing.T) {
	t.Parallel()
	db, err := Open(pgtest.New(t))
	dbtest.Must(t, "open", err)
	defer db.Close()
	conn, err := db.Conn(bg)
	dbtest.Must(t, "conn", err)
	defer conn.Close()
	_, err = conn.ExecContext(bg, "SET default_transaction_read_only = on") // as on a standby
	dbtest.Must(t, "read-only session", err)
	_, err = conn.ExecContext(bg, "CREATE TABLE refused (id int)")
	if kind := New(db).ErrorKind(err); err == nil || kind != driver.KindNotSent {
		t.Fatalf("a write on a read-only session: %v (kind %d), want 25006 read as KindNotSent", err, kind)
	}
	if _, err := conn.ExecContext(bg, "SELECT 1"); !errors.Is(err, sqldriver.ErrBadConn) {
		t.Errorf("the read-only connection after its refused write: %v, want it closed (driver.ErrBadConn)", err)
	}
	if _, err := db.ExecContext(bg, "CREATE TABLE written (id int)"); err != nil {
		t.Errorf("a write on a new connection of the pool: %v", err)
	}
}
