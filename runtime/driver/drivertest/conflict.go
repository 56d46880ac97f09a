package drivertest

import (
	"database/sql"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Two transactions that each wait for the other's row deadlock; the
// server rolls one back, and the driver reads its error as KindConflict,
// after which the runtime writes a fenced outcome again. An engine with one
// writer at a time (SQLite) cannot deadlock: its busy file is its
// conflict, which its own tests check.
func testDeadlockIsAConflict(t *testing.T, b *Bundle) {
	if !b.H.Networked() {
		t.Skipf("%s has one writer at a time and cannot deadlock", b.H.Name)
	}
	ids := [2]leasetype.TaskID{b.InsertOne(t, driver.NewTask{Type: "a"}), b.InsertOne(t, driver.NewTask{Type: "a"})}
	pools := [2]*sql.DB{b.DB.DB, b.DB.Open(t)}
	var txs [2]*sql.Tx
	touch := func(i int, id leasetype.TaskID) error {
		_, err := txs[i].ExecContext(bg, b.H.SQL("UPDATE leasegen_tasks SET priority = priority + 1 WHERE id = ?"), id)
		return err
	}
	for i := range txs {
		tx, err := pools[i].BeginTx(bg, nil)
		dbtest.Must(t, "begin", err)
		defer tx.Rollback() //nolint:errcheck // the one rolled back already, the other at the end
		txs[i] = tx
		dbtest.Must(t, "lock a row", touch(i, ids[i]))
	}
	errs := make(chan error, 2)
	for i := range txs {
		go func() {
			err := touch(i, ids[1-i])
			if err != nil {
				txs[i].Rollback() //nolint:errcheck // the server rolled it back; this frees the connection
			} else {
				txs[i].Commit() //nolint:errcheck // the winner; its outcome is not what the case checks
			}
			errs <- err
		}()
	}
	var failed []error
	for range txs {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d of two deadlocked transactions failed (%v), want one", len(failed), failed)
	}
	if kind := b.Driver.ErrorKind(failed[0]); kind != driver.KindConflict {
		t.Errorf("a deadlock (%v) is kind %d, want KindConflict", failed[0], kind)
	}
}
